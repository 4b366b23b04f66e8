"""An engine's reads are summed over its session, on a recorded vLLM V1 process tree (issue 12).

The recording (tests/data/recorded/engines/PROVENANCE.md) is vLLM 0.32's own tree, started under
``setsid`` as kvgate starts engines: the API server (the session leader), a multiprocessing
resource tracker, ``VLLM::EngineCore``, and ``VLLM::Worker``, a child of the EngineCore, not of
the API server. Its ``/proc/<pid>/stat`` and ``io`` files are the real ones, read here as
:mod:`kvgate.probes.evidence.engines` reads ``/proc``.
"""

from __future__ import annotations

from pathlib import Path

from kvgate.probes.evidence.engines import engine_reads, process_read_bytes, session_members

RECORDED = Path(__file__).parents[1] / "data" / "recorded" / "engines"
PROC = str(RECORDED / "vllm_0.32_cpu_proc")
API_SERVER, TRACKER, ENGINE_CORE, WORKER = 31801, 1063, 1064, 2407


def _ps() -> dict[int, dict[str, str]]:
    """The recorded ``ps`` listing: pid → {ppid, pgid, sid, comm}."""
    lines = (RECORDED / "vllm_0.32_cpu_ps.txt").read_text().splitlines()[1:]
    rows = [line.split(None, 6) for line in lines]
    return {int(r[0]): {"ppid": r[1], "pgid": r[2], "sid": r[3], "comm": r[5]} for r in rows}


def test_the_recorded_tree_is_what_the_ps_listing_shows() -> None:
    ps = _ps()
    assert ps[WORKER]["ppid"] == str(ENGINE_CORE)  # a grandchild of the API server
    assert ps[ENGINE_CORE]["ppid"] == str(API_SERVER)
    assert {row["sid"] for row in ps.values()} == {str(API_SERVER)}
    assert session_members(API_SERVER, proc_root=PROC) == sorted(ps)


def test_the_session_sum_counts_the_engine_core_and_its_worker() -> None:
    reads = engine_reads(API_SERVER, "session", proc_root=PROC)
    per_process = {p: process_read_bytes(p, proc_root=PROC) for p in _ps()}
    assert reads["processes"] == 4
    assert reads["read_bytes"] == sum(r or 0 for r in per_process.values()) == 2_084_204_544
    # the API server's own /proc/<pid>/io saw 6 % of what the engine read
    assert per_process[API_SERVER] == 127_766_528
    assert per_process[WORKER] == 1_741_803_520
