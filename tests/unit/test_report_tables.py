"""Gate tables are laid out when the report is rendered, from the numbers the run record keeps.

Issue 15: G2, G3 and G4 stored their table cells as strings at measurement time
(``"2.31 (INVALID)"``), so a better formatter could not reach a stored run. On main the
``*_rows`` of run.json hold those strings: every test here that stores a gate's rows fails
there. Rows an earlier kvgate stored as strings are refused (no release holds one).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_g3_storage import inventory as storage_inventory
from test_g3_storage import result as storage_result
from test_g3_tables import inventory as g3_inventory
from test_g3_tables import result as g3_result

from kvgate.base.criteria import Measurement, Verdict
from kvgate.base.errors import StoreError
from kvgate.configuration.engine_profile import PROFILE_DIR, load_profile
from kvgate.configuration.fio_matrix import Knee, SweepPoint
from kvgate.configuration.fio_matrix import load_profile as load_matrix_profile
from kvgate.configuration.gate_profiles.g4 import load_g4_profile
from kvgate.configuration.gateconfig import in_memory
from kvgate.orchestration.g2.measure import VolumeResult
from kvgate.orchestration.g2.report_rows import row
from kvgate.orchestration.g3.plan import plan as g3_plan
from kvgate.orchestration.g3.report_rows import rows as g3_rows
from kvgate.orchestration.g3.report_rows import storage_rows
from kvgate.orchestration.g3.storage import storage_plan
from kvgate.orchestration.g4 import drift, health, integrity, trends
from kvgate.orchestration.g4.plan import G4Check, criteria, g4_check
from kvgate.orchestration.g4.report_rows import rows
from kvgate.orchestration.g4.soak import SoakResult
from kvgate.probes.facts.kernlog import parse_kernel_window
from kvgate.record import DriftFigure, G2Row, JudgementRecord
from kvgate.record.store import RunStore
from kvgate.report.g2_tables import against_one_reader, same_job_elsewhere
from kvgate.report.g4_extra_tables import past_limit, per_hour
from kvgate.report.g4_tables import reuse_slower
from kvgate.report.model import load_run
from kvgate.report.scope_lines import engines_served, soak_order
from kvgate.report.summary import summarize, unsteady


def stored(root: Path, gate: str, rows: dict[str, Any]) -> Path:
    store = RunStore.create(root, site="lab-a", gate=gate, meta={"planned": [], f"{gate}_rows": rows})
    store.finish("complete")
    return store.path


def tables(run: Path) -> dict[str, list[list[str]]]:
    return {s.title: s.data["rows"] for s in load_run(run).sections}


def notes(run: Path) -> dict[str, str]:
    return {s.title: s.data["note"] for s in load_run(run).sections}


def volume() -> VolumeResult:
    found = [
        Measurement("seqread-1m.read_bw_bytes_per_s", 1.2345e9, "bytes/s", (), "not cold: vda read 0 B"),
        Measurement("seqwrite-1m.write_bw_bytes_per_s", 4.871e9, "bytes/s"),
        Measurement("randread-4k.read_iops", 83012, "IOPS"),
        Measurement("randread-4k.read_clat_p99_ns", 3_063_000.0, "ns"),
        Measurement("ceiling.read_bw_bytes_per_s", 2.3149e9, "bytes/s"),
        Measurement("ceiling.best_read_bw_bytes_per_s", 2.3149e9, "bytes/s"),
        Measurement("kv_restore.serial.read_bw_bytes_per_s", 1.0e9, "bytes/s"),
        Measurement("kv_restore.parallel.read_bw_bytes_per_s", 2.87e9, "bytes/s"),
        Measurement("kv_restore.parallel.latency_p50_s", 0.26789, "s"),
        Measurement("checkpoint.write_bw_bytes_per_s", None, "bytes/s", (), "checkpoint failed"),
    ]
    r = VolumeResult("gpu-1", "scratch", knee=Knee(2, 2, 1, 3.1646e9, True, 0.3, "1m"))
    r.ceiling, r.sweep = SweepPoint(4, 8, 2.2e9, "4m"), [("1m", 2, 3.1646e9)]
    r.add(found)
    return r


def test_g2_keeps_its_numbers_and_the_report_formats_them(tmp_path: Path) -> None:
    run = stored(tmp_path, "g2", {"gpu-1/scratch": row(volume())})
    record = (run / "run.json").read_text()
    assert "INVALID" not in record  # no cell in the record: its numbers
    assert "1.23" not in record
    assert (
        json.loads(record)["g2_rows"]["gpu-1/scratch"]["measurements"]["randread-4k.read_iops"]["value"]
        == 83012
    )
    shown = tables(run)
    assert shown["G2 fio baseline (cold, O_DIRECT, mean of repeats)"] == [
        [
            "gpu-1",
            "scratch",
            "1,234 (INVALID)",  # MB/s to three significant figures
            "4,871",
            "83",
            "3.06",
            "2 @ 3,165 (bs 1m)",
            "2,315 (bs 4m, 4 jobs × QD 8, mean of its re-runs); best single read 2,315",
        ]
    ]
    assert shown["G2 storage-level workloads (kvgate agent, cold)"] == [
        ["gpu-1", "scratch", "1,000", "2,870", "2.87×", "0.268", "—", "—", "—", "—"]
    ]


LEGACY_G2 = {  # a G2 row as kvgate stored it before (cells formatted at measurement time)
    "fio": [
        "localhost",
        "scratch",
        "1.85",
        "4.87",
        "83.0",
        "3.06",
        "2 @ 3.16 (bs 1m)",
        "2.31 (bs 1m, 2 jobs × QD 1)",
    ],
    "workloads": ["localhost", "scratch", "3.97", "3.97", "1.00×", "0.268", "2.85", "3.33", "1.19", "3.13"],
    "sweep": [["1m", 1, 1544037768.0]],
    "knee": {"bs": "1m", "parallelism": 2},
}


LEGACY_G4 = {  # a G4 row as kvgate stored it before
    "windows": [["localhost/tiny", "0", "2026-12-05 08:56:01", "4/0", "0", "96.2"]],
    "verdicts": [
        ["localhost/tiny", "soak[tiny].coverage", "1.179 x", ">= 0.9 x", "workloads/g4/smoke.yaml", "PASS"]
    ],
    "notes": "localhost/tiny: 6 window(s), ended by duration.",
    "figures": {"cap_bytes": 1 << 30},
}


@pytest.mark.parametrize(
    ("gate", "key", "row", "why"),
    [
        ("g2", "localhost/scratch", LEGACY_G2, "measurements: required field is missing"),
        ("g4", "localhost/tiny", LEGACY_G4, "verdicts[0]: Input should be a valid dictionary"),
    ],
)
def test_rows_an_earlier_kvgate_stored_as_cells_are_refused_naming_the_field(
    tmp_path: Path, gate: str, key: str, row: dict[str, Any], why: str
) -> None:
    """Before, rows stored as formatted cells were laid out as they were (legacy cell rows)."""
    with pytest.raises(StoreError, match=re.escape(f"run.json: {gate}_rows.{key}.{why}")):
        stored(tmp_path, gate, {key: row})


def soak_window(i: int) -> dict[str, Any]:
    """Window i of a soak as the agent writes it (windows.jsonl); the canary changes in window 3."""
    summary = {"completed": 40, "failed": i % 2, "error_counts": {}, "total_input_tokens": 20000}
    summary |= {"p50_ttft_ms": 100.0 + i, "p99_ttft_ms": 3106.4, "p50_tpot_ms": 10.0}
    text = " b" if i == 3 else " a"
    return {
        "index": i,
        "start_unix_s": 1.7e9 + 20 * i,
        "end_unix_s": 1.7e9 + 20 * (i + 1),
        "summary": summary | {"output_throughput_tok_per_s": 50.0},
        "empty_responses": 0,
        "engines_alive": 1,
        "canary": [{"index": 0, "success": True, "text": text, "prompt_tokens": 500, "logprobs": []}],
        "rss_kib": (512 + i) * 1024,
        "cache_dir_bytes": None if i == 0 else 10 << 20,
        "hit_tokens": 9000,
        "reuse_ttft_p50_ms": 50.0,
        "fresh_ttft_p50_ms": None,
        "device_read_bytes": 3 << 20,
        "device_write_bytes": 1 << 19,
    }


def soaked(windows: list[dict[str, Any]]) -> tuple[SoakResult, list[G4Check]]:
    tier = load_profile(PROFILE_DIR / "llama-cpp-disk.yaml")
    soak = trends.Soak(tuple(windows), 120, 1, 100 << 20, (), "duration")
    r = SoakResult("gpu-1", "tiny", tier, soak, near_ties=["window 3: canary 0"])
    r.integrity = integrity.figures(integrity.Followed(), windows, volume="scratch", share=8 << 20)
    r.drift = drift.drift(windows, load_g4_profile("smoke"), soak.cap_bytes)
    kernel = (
        "#source dmesg\n2023-11-14T22:14:00,500000+00:00 INFO: task fio:42 blocked for more than 120 seconds."
    )
    log = health.with_windows(parse_kernel_window(kernel, since=0, until=2e9), windows)
    r.health = health.figures([], log, {}, {"nic-cnp": "no cnp counter on this host"})
    r.measurements = {
        "failed-requests": trends.failed_requests(soak),
        "empty-responses": trends.empty_responses(soak),
    }
    crit = dict(criteria(load_g4_profile("smoke")))
    keys = ("failed-requests", "empty-responses")
    return r, [g4_check("gpu-1", "tiny", f"soak[tiny].{k}", k, crit[k], ruled=None) for k in keys]


def test_g4_keeps_its_verdicts_as_numbers_and_lays_its_windows_out_from_the_stored_soak(
    tmp_path: Path,
) -> None:
    windows = [soak_window(i) for i in range(50)]
    r, checks = soaked(windows)
    store = RunStore.create(tmp_path, site="lab-a", gate="g4", meta={"planned": []})
    store.artifact("gpu-1", "g4/tiny/windows.jsonl", "".join(json.dumps(w) + "\n" for w in windows))
    store.merge_meta(g4_rows={"gpu-1/tiny": rows(r, checks)})
    launch = g3_result().engines["ssd-restore"] | {
        "argv": ["python", "-m", "llama_cpp.server", "--model=/m/t.gguf"]
    }
    store.merge_meta(engines={"gpu-1/tiny": {"soak-0": launch}})  # as the soak records the engines it starts
    store.finish("complete")
    record = (store.path / "run.json").read_text()
    assert "requests" in record  # the unit, kept beside the number
    assert "25 requests" not in record  # not a cell
    shown = tables(store.path)
    table = shown["G4 soak windows"]
    assert len(table) == 48  # at most MAX_ROWS of the 50, the first and the last among them
    assert table[0] == [
        "gpu-1/tiny",
        "0",
        "2023-11-14 22:13:20",
        "40/0",
        "0",
        "0.1",  # TTFT in s, as everywhere in the report
        "3.11",  # numbers for people: significant figures (the G2/G3 tables' way)
        "10",
        "50",
        "0.05 / —",
        "512",
        "—",
        "3.0 / 0.5",
        "0.44",
        "computed",
    ]
    assert table[3][-1] == "0/1 identical"
    assert table[-1][:2] == ["gpu-1/tiny", "49"]
    (engine,) = shown["Appendix: G4 engines"]  # as G3's: what ran, not only what it did
    assert engine[:4] == ["gpu-1/tiny", "soak-0", "llama-cpp-disk", "llama-cpp-python 0.3.36"]
    (command,) = shown["Appendix: G4 engine command lines"]
    assert command[:3] == ["gpu-1/tiny", "soak-0", "python -m llama_cpp.server --model=…/t.gguf"]
    sources = [c.criterion.source for c in checks]
    assert shown["G4 verdicts against the site's limits"] == [
        ["gpu-1/tiny", "soak[tiny].failed-requests", "25 requests", "<= 0 requests", sources[0], "FAIL"],
        ["gpu-1/tiny", "soak[tiny].empty-responses", "0 responses", "<= 0 responses", sources[1], "PASS"],
    ]
    note = notes(store.path)["G4 soak windows"]
    assert "gpu-1/tiny: 50 window(s), ended by duration." in note
    drift_rows = shown["G4 drift as slopes"]  # from the slopes G4 stored, not fitted by the report
    assert [r[1] for r in drift_rows] == [
        "engine RSS (MiB)",
        "TTFT p99 (s)",
        "output (tok/s)",
        "tier (share of capacity)",
    ]
    assert drift_rows[0][3] == "256 MiB/h"
    # a 0.28 h soak's slope is shown, not projected to 72 h; a relative unit is said in words
    assert drift_rows[0][6:] == ["— (not projected: a 0.278 h soak)", "—"]
    assert drift_rows[1][3].endswith(" of the first windows per hour")
    assert drift_rows[3][3].endswith(" of its capacity per hour")  # the tier's unit is its bound's share
    assert drift_rows[3][6].startswith("— (not projected: a 0.278 h soak)")  # the tier too: 72 h is far
    assert all("INVALID" not in cell for row in drift_rows for cell in row)  # "not judged", as its check
    (kernel_line,) = shown["G4 kernel log lines during the soak"]  # beside the window it fell in
    assert kernel_line == [
        "gpu-1/tiny",
        "2023-11-14 22:14:00",
        "2",
        "hung task",
        "INFO: task fio:42 blocked for more than 120 seconds.",
    ]
    (health_row,) = shown["G4 device health and kernel log"]
    assert health_row[-1] == "nic-cnp: no cnp counter on this host"
    assert "1 canary output(s) differed only from a near-tie on; first: window 3: canary 0." in note
    assert "llama-cpp-disk serves one request at a time" in note


def test_g3_keeps_its_numbers_and_the_report_lays_out_arms_verdicts_and_engines(tmp_path: Path) -> None:
    r = g3_result()
    store = RunStore.create(tmp_path, site="lab-a", gate="g3", meta={"planned": []})
    store.merge_meta(engines={"h/tiny": r.engines})  # as G3 records each engine it starts
    store.merge_meta(g3_rows={"h/tiny": g3_rows(r, g3_plan(in_memory(g3_inventory())))})
    store.finish("complete")
    record = (store.path / "run.json").read_text()
    assert "inside the seed's" not in record  # where the site lands against the seed: said by the report
    stored = json.loads(record)["g3_rows"]["h/tiny"]
    reduction = next(v for v in stored["verdicts"] if v["check"] == "engine[tiny].ttft-p50-reduction")
    assert reduction["reference"]["id"] == "R2-ttft-p50-tp8"
    improvement = reduction["reference"]["improvement"]
    assert (improvement["low"], improvement["high"]) == (26, 32)
    assert stored["figures"]["arms"]["ssd-restore"]["ttft_p50_s"] == pytest.approx(0.4)
    shown = tables(store.path)
    verdicts = {v[1]: v for v in shown["G3 verdicts against the references"]}
    row = verdicts["engine[tiny].ttft-p50-reduction"]
    assert row[2:5] == ["30 %", "R2-ttft-p50-tp8: ↓26–32%", ">= ↓25.5%"]  # the volume arms, ↓30 % each
    assert row[5] == "not compared"  # SKIP: not placed against the seed's range
    assert row[7] == "SKIP"  # shown, not judged: a smoke profile's arms are never the seed's
    assert [a[:5] for a in shown["G3 arms: recompute vs SSD restore vs warm"][:2]] == [
        ["h/tiny", "recompute", "3/3", "2048", "8"],
        ["h/tiny", "ssd-restore", "3/3", "2048", "0.4"],
    ]
    assert all(a[7].endswith(" %") for a in shown["G3 arms: recompute vs SSD restore vs warm"])  # CV in %
    assert shown["Appendix: G3 engines"] == [
        ["h/tiny", "ssd-restore", "llama-cpp-disk", "llama-cpp-python 0.3.36", "1.50", "not logged",
         "1 request at a time"]
    ]  # fmt: skip
    assert shown["Appendix: G3 engine command lines"] == [
        # not read: a stored launch from before kvgate read the engine's listening ports
        ["h/tiny", "ssd-restore", "python -m llama_cpp.server", "not read"]
    ]
    assert (
        "keeps one prompt's state at a time" in notes(store.path)["G3 arms: recompute vs SSD restore vs warm"]
    )


UNTRUSTED = "no: page cache not dropped"


def test_g3_keeps_both_volumes_measurements_and_the_report_lays_out_model_load_and_checkpoint(
    tmp_path: Path,
) -> None:
    r = storage_result(("nvme0n1", "nvme1n1"))
    r.measured["cand"]["model_load.parallel.elapsed_s"] = Measurement(
        "model_load.parallel.elapsed_s", 100.0, "s", (), "page cache not dropped"
    )
    checks = [c for c in storage_plan(in_memory(storage_inventory())) if c.host == "h"]
    run = stored(tmp_path, "g3", {"h/storage[cand]": storage_rows(r, checks)})
    stored_row = json.loads((run / "run.json").read_text())["g3_rows"]["h/storage[cand]"]
    kept = stored_row["volumes"]["measured"]
    figures = stored_row["figures"]["volumes"]  # the loader whose time stands for each volume, as G3 chose it
    assert figures["cand"]["model_load_metric"] == "model_load.sequential.elapsed_s"
    assert figures["nfs"]["model_load_metric"] == "model_load.parallel.elapsed_s"
    parallel = kept["cand"]["model_load.parallel.elapsed_s"]  # the measurement, with its reason
    assert (parallel["value"], parallel["unit"], parallel["invalid_reason"]) == (100.0, "s", UNTRUSTED[4:])
    shown = tables(run)
    assert shown["G3 model loading and checkpoint: candidate vs baseline"] == [
        ["h", "cand", "candidate", "nvme1n1", "200 s", "sequential", "—", "—", "94 s", "0.6979", UNTRUSTED],
        ["h", "nfs", "baseline", "nvme0n1", "700 s", "parallel", "—", "—", "178 s", "0.3685", "yes"],
    ]  # the fastest trusted loader: the parallel one is not trusted on the candidate
    verdicts = shown["G3 verdicts against the references"]
    assert {v[0] for v in verdicts} == {"h/storage"}
    assert len(verdicts) == len(checks)


def test_a_row_edited_so_it_cannot_be_laid_out_is_an_error_naming_its_field(tmp_path: Path) -> None:
    run = stored(tmp_path, "g2", {"gpu-1/scratch": row(volume()), "gpu-2/scratch": row(volume())})
    meta = json.loads((run / "run.json").read_text())
    meta["g2_rows"]["gpu-2/scratch"]["measurements"]["seqread-1m.read_bw_bytes_per_s"] = {"value": 1.0}
    (run / "run.json").write_text(json.dumps(meta))
    field = "g2_rows.gpu-2/scratch.measurements.seqread-1m.read_bw_bytes_per_s.metric"
    with pytest.raises(StoreError, match=rf"run.json: {field}: required field is missing"):
        load_run(run)


def test_g4_shows_its_integrity_load_its_share_and_every_place_it_found_wrong(tmp_path: Path) -> None:
    windows = [soak_window(i) for i in range(6)]
    r, checks = soaked(windows)
    t = windows[2]["start_unix_s"] + 1
    cycles = [
        {
            "index": k,
            "start_unix_s": windows[k]["start_unix_s"],
            "end_unix_s": windows[k]["end_unix_s"],
            "io_bytes": 20 << 20,
            "fio": {"write": {"status": "ok", "seed": k, "written_bytes": 1 << 20, "read_bytes": 1 << 20}},
            "checkpoint": {"verified_bytes": 1 << 20},
            "kv": {"verified_bytes": 4 << 20},
            "failures": [
                {
                    "kind": "mismatch",
                    "source": "kv",
                    "file": "/scratch/kv/chunk-00002.kv",
                    "offset_bytes": 300000,
                    "length_bytes": None,
                    "time_unix_s": t + 20 * (k - 2),
                    "detail": "crc32 01 != 02 (cell 0)",
                }
            ]
            if k >= 2
            else [],
        }
        for k in range(6)
    ]
    followed = integrity.Followed(cycles=cycles, result={"cpu_s": 0.6})
    r.integrity = integrity.figures(followed, windows, volume="scratch", share=8 << 20)
    store = RunStore.create(tmp_path, site="lab-a", gate="g4", meta={"planned": []})
    store.artifact("gpu-1", "g4/tiny/windows.jsonl", "".join(json.dumps(w) + "\n" for w in windows))
    store.merge_meta(g4_rows={"gpu-1/tiny": rows(r, checks)})
    store.finish("complete")
    shown = tables(store.path)
    (load,) = shown["G4 integrity load"]
    assert load[:4] == [
        "gpu-1/tiny",
        "scratch",
        "6 in 120 s",
        "8.39",
    ]  # 8 MiB/s in MB/s, as page 1 says it
    assert load[-2:] == ["0.5", "1"]  # 0.6 CPU s over its 120-s span; one place
    (failure,) = shown["G4 integrity failures"]
    assert failure[:6] == [
        "gpu-1/tiny",
        "mismatch (kv)",
        "scratch",
        "/scratch/kv/chunk-00002.kv",
        "300000",
        time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t)),
    ]
    assert failure[6:8] == ["2, 3, 4, 5", "4"]


def test_g4_says_when_turns_on_a_shared_document_were_slower_than_fresh_prompts() -> None:
    """The demo's windows showed reuse 6.3 / fresh 4.18 s in 3 of 5, and the report said nothing."""
    windows = [{"reuse_ttft_p50_ms": r, "fresh_ttft_p50_ms": f} for r, f in
               ((6300, 4180), (4400, 3100), (6040, 4430), (2000, 3000), (None, 3000))]  # fmt: skip
    assert reuse_slower(windows) == (
        "Turns on a shared document were slower than fresh prompts (TTFT p50) in 3 of 4 windows: the cache "
        "did not speed reuse up here (seen, not judged)."
    )
    assert reuse_slower(windows[2:]) == ""  # 1 of 2: not most of them


def test_a_short_soaks_slopes_past_their_limits_are_said_in_words_for_page_1() -> None:
    """The demo's tier grew 14.2 times its cap an hour over a 2-min soak: shown on page 6 only. A slope
    whose 95 % interval spans its limit is said to span it (a reader took "past" for "would fail")."""
    limit = {"metric": "m", "invalid": "a 2-min soak"}
    tier = DriftFigure(
        key="tier-growth", unit="x/h", limit_per_h=1 / 72, growth_per_h=14.2, interval_per_h=2.0, **limit
    )
    loss = DriftFigure(
        key="throughput-retention",
        unit="x/h",
        limit_per_h=0.25,
        growth_per_h=8.64,
        interval_per_h=47.0,
        **limit,
    )
    rss = DriftFigure(key="memory-growth", unit="MiB/h", limit_per_h=256.0, growth_per_h=-300.0, **limit)
    assert past_limit("tiny on here", tier) == (
        "tiny on here: tier fitted at +1,420 % of its capacity per hour, past its limit of "
        "+1.39 % of its capacity per hour (the headroom left below its cap, spread over 72 hours) "
        "(95 %: +1,220 % to +1,620 %, all past it)"
    )
    assert past_limit("tiny on here", loss) == (  # a loss said as one, as the table's sign says it
        "tiny on here: output fitted at a loss of 864 % of the first windows per hour, past its limit of a "
        "loss of 25 % of the first windows per hour (95 %: a gain of 3,836 % to a loss of 5,564 %: spans it)"
    )
    assert (
        past_limit("tiny on here", loss.model_copy(update={"growth_per_h": 0.14})) is None
    )  # within the 25 % it may lose
    assert past_limit("tiny on here", rss) is None  # shrinking is not growth
    assert past_limit("x", DriftFigure(key="ttft-drift", unit="x/h", limit_per_h=0.5, **limit)) is None
    assert per_hour(rss, 35.2) == "+35.2 MiB/h"


def test_a_fio_jobs_other_runs_in_the_same_g2_are_said_beside_its_figure() -> None:
    """A reader found seqread-1m at 1,542 MB/s (CV 2.3 %) on page 1, 1,598 in the sweep and 1,765 as the
    ceiling's cell: the same job, three speeds, never side by side."""
    stored = G2Row.model_validate(
        {
            "measurements": {
                "ceiling.fio_read_bw_bytes_per_s": {"metric": "m", "value": 1.765e9, "unit": "bytes/s"},
                "ceiling.bs_bytes": {"metric": "m", "value": 1 << 20, "unit": "bytes"},
                "ceiling.numjobs": {"metric": "m", "value": 1, "unit": ""},
                "ceiling.iodepth": {"metric": "m", "value": 8, "unit": ""},
            },
            "knee": None,
            "ceiling": None,
            "sweep": [["1m", 8, 1.598e9], ["1m", 16, 2.0e9], ["4m", 8, 2.1e9]],
        }
    )
    profile = load_matrix_profile(Path(__file__).parents[2] / "workloads" / "fio" / "smoke.yaml")
    said = same_job_elsewhere(profile, stored, "seqread-1m")  # read, bs 1m, 1 job × QD 8
    assert said == (
        "its block size and I/Os in flight elsewhere in this run: 1.6 GB/s (the sweep), "
        "1.76 GB/s (the read ceiling's re-runs, their mean)"
    )
    # the demo's: 5.72 GB/s in the matrix, 8.83 in the sweep, 5.71 re-run — 54 % apart, once unflagged
    apart = same_job_elsewhere(profile, stored, "seqread-1m", measured=1.15e9)
    assert apart.endswith(
        "— 53 % apart at one setting, past what its repeats' CV says: this volume's rate was not steady "
        "within the run (a cache below the host, other I/O)"
    )
    assert same_job_elsewhere(profile, stored, "seqread-1m", measured=1.5e9) == said  # 18 %: within APART
    assert same_job_elsewhere(profile, stored, "seqwrite-1m") == ""  # the sweep reads; a write is not its job
    assert same_job_elsewhere(profile, None, "seqread-1m") == ""


def test_parallel_readers_are_said_against_one_reader_beside_their_figure() -> None:
    """The demo's page 1 showed 'KV restore, parallel readers' at 6.43 GB/s; that one reader per request
    had read 6.93 GB/s was only in the workloads table."""

    def m(value: float) -> dict[str, object]:
        return {"metric": "m", "value": value, "unit": "bytes/s"}

    stored = G2Row.model_validate(
        {
            "measurements": {
                "kv_restore.parallel.read_bw_bytes_per_s": m(6.433e9),
                "kv_restore.serial.read_bw_bytes_per_s": m(6.931e9),
                "model_load.parallel.read_bw_bytes_per_s": m(2.0e9),
                "model_load.sequential.read_bw_bytes_per_s": m(1.0e9),
            },
            "knee": None,
            "ceiling": None,
            "sweep": [],
        }
    )
    kv = against_one_reader(stored, "kv_restore.parallel.read_bw_bytes_per_s")
    assert kv == "0.93× one reader per request (6.93 GB/s): no faster"
    assert (
        against_one_reader(stored, "model_load.parallel.read_bw_bytes_per_s")
        == "2.00× one thread of buffered reads (1 GB/s)"
    )
    assert against_one_reader(stored, "checkpoint.write_bw_bytes_per_s") == ""  # no one-reader figure


def test_g4_page_1_says_a_hosts_deployments_soaked_one_after_the_other(tmp_path: Path) -> None:
    """A reader of the demo's G4 took two engines' soaks for one load: they ran in turn."""
    first = [soak_window(i) for i in range(3)]
    then = [w | {"start_unix_s": w["start_unix_s"] + 60, "end_unix_s": w["end_unix_s"] + 60} for w in first]
    store = RunStore.create(tmp_path, site="lab-a", gate="g4", meta={"planned": []})
    for name, windows in (("tiny", first), ("tiny-vllm", then)):
        r, checks = soaked(windows)
        store.artifact("gpu-1", f"g4/{name}/windows.jsonl", "".join(json.dumps(w) + "\n" for w in windows))
        store.merge_meta(g4_rows={f"gpu-1/{name}": rows(r, checks)})
    launch = g3_result().engines["ssd-restore"]
    store.merge_meta(engines={"gpu-1/tiny": {"soak-0": launch, "soak-1": launch}})  # two instances at once
    store.finish("complete")
    view = load_run(store.path)
    assert soak_order(view) == (
        "on gpu-1, tiny (22:13–22:14 UTC), then tiny-vllm (22:14–22:15 UTC): "
        "one after the other, never together"
    )
    tiny, vllm = engines_served(view).split("; ")
    assert tiny.endswith("— 2 engines at once sharing the load, the tier's capacity their tiers' summed")
    assert "engines at once" not in vllm


def test_page_1_lists_only_the_slopes_wholly_past_their_limits(tmp_path: Path) -> None:
    # a reader found "a loss of 396 % … per hour" spreads on page 1 beside the one slope that would fail
    firm = "tiny on h: tier fitted at +2,936 % … (95 %: +2,347 % to +3,524 %, all past it)"
    loose = "tiny on h: output fitted at a loss of 864 % … (95 %: a gain of 3,836 % to a loss: spans it)"
    store = RunStore.create(tmp_path, site="s", gate="g4", meta={"planned": []})
    store.finish("complete")
    said = replace(summarize(load_run(store.path)), soak_past=(firm, loose))
    assert said.soak_firm == (firm,)


def test_a_fio_rate_unsteady_within_its_run_is_counted_in_page_1s_box(tmp_path: Path) -> None:
    # a reader found the box counting one anomaly and this one beside its figure on page 2
    fio = load_matrix_profile(Path(__file__).parents[2] / "workloads" / "fio" / "smoke.yaml")
    row = {
        "measurements": {
            "ceiling.fio_read_bw_bytes_per_s": {"metric": "m", "value": 5.71e9, "unit": "bytes/s"},
            "ceiling.bs_bytes": {"metric": "m", "value": 1 << 20, "unit": "bytes"},
            "ceiling.numjobs": {"metric": "m", "value": 1, "unit": ""},
            "ceiling.iodepth": {"metric": "m", "value": 8, "unit": ""},
        },
        "knee": None, "ceiling": None, "sweep": [["1m", 8, 8.83e9]],
    }  # fmt: skip
    meta = {
        "planned": [],
        "configuration": {"gate_profile": fio.model_dump(mode="json")},
        "g2_rows": {"h/s": row},
    }
    store = RunStore.create(tmp_path, site="lab-a", gate="g2", meta=meta)
    check = "volume[s].fio.seqread-1m.bw"
    store.record(
        JudgementRecord(
            id=f"h/{check}", host="h", check=check, verdict=Verdict.PASS,
            metric="seqread-1m.read_bw_bytes_per_s", measured=5.72e9, unit="B/s", comparator=">", expected=0,
        )
    )  # fmt: skip
    store.finish("complete")
    (line,) = unsteady(load_run(store.path))
    assert (line.where, line.first) == ("h/s", "sequential read (1 MiB blocks) 5.72 GB/s")
    assert (
        line.second
        == "8.83 GB/s (the sweep), 5.71 GB/s (the read ceiling's re-runs, their mean) at the same setting"
    )
    assert line.meaning.startswith("55 % apart at one setting")


def test_a_rate_whose_repeats_disagree_is_counted_in_page_1s_box(tmp_path: Path) -> None:
    # a reader found the demo's random read recorded as 63,322 IOPS with a CV of 79 % over its 2 repeats,
    # flagged nowhere (a bound the inventory loosened to 100 % let it pass)
    store = RunStore.create(tmp_path, site="lab-a", gate="g2", meta={"planned": []})
    check, metric = "volume[s].fio.randread-4k", "randread-4k.read_bw_bytes_per_s_cv"
    for value in (0.79, 0.49):
        volume = "s" if value > 0.5 else "t"
        for name, m, measured, unit in (
            ("iops", "randread-4k.read_iops", 63322.0, "IOPS"),
            ("cv", metric, value, "ratio"),
        ):
            store.record(
                JudgementRecord(
                    id=f"h/{check.replace('[s]', f'[{volume}]')}.{name}", host="h",
                    check=f"{check.replace('[s]', f'[{volume}]')}.{name}", verdict=Verdict.PASS, metric=m,
                    measured=measured, unit=unit, comparator="<=" if name == "cv" else ">", expected=1,
                )
            )  # fmt: skip
    store.finish("complete")
    (line,) = unsteady(load_run(store.path))
    assert (line.where, line.first, line.second) == (
        "h/s",
        "random read (4 KiB blocks) 63,322 IOPS",
        "its repeats' CV of 79 %",
    )
    assert line.meaning.startswith("Its repeats disagree: past a CV of 50 %")
