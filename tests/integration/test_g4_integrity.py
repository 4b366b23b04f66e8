"""G4's integrity load for real: the agent job on scratch, real fio, a block corrupted mid-soak.

The job is started the way G4 starts it (kvgate.orchestration.g4.integrity: the scratch check,
then the agent), follows a soak's state directory, and is judged by G4's own check. A byte
flipped in a KV chunk while it runs must FAIL G4-INT-1 naming the host, volume, file, offset and
time; a byte flipped in fio's file between two cycles must be found by fio's crc32c at rest.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kvgate.base.criteria import Inputs, Verdict
from kvgate.configuration.gate_profiles import load_g4_profile
from kvgate.configuration.inventory import Volume
from kvgate.orchestration.g4 import integrity
from kvgate.orchestration.g4.plan import criteria, g4_check
from kvgate.probes.agent.integrity_fio import FioLoad
from kvgate.probes.scratch import UnsafeWrite, checked
from kvgate.transport.local import LocalExecutor

pytestmark = pytest.mark.timeout(240)
EX = LocalExecutor("node-a")
SMALL = {
    "cycle_s": 1,
    "rate_bytes_per_s": 32 << 20,
    "fio_bytes": 2 << 20,
    "checkpoint_bytes": 1 << 20,
    "kv_chunk_bytes": 256 << 10,
    "kv_chunks": 4,
}


def started(tmp_path: Path, follow: Path) -> Any:
    vol = Volume(path=str(tmp_path / "vol"), kind="candidate", scratch=True)
    Path(vol.path).mkdir()
    spec = integrity.spec(load_g4_profile("smoke"), soak_state_dir=str(follow), duration_s=120)
    spec |= SMALL | {"io_bytes": 64 << 10}
    target = checked(EX, vol, f"{vol.path}/kvgate-g4/node-a-run/tiny/integrity")
    return integrity.start(EX, target, spec, python=sys.executable), target


def windows_over(t0: float, t1: float) -> list[dict[str, Any]]:
    half = (t0 + t1) / 2
    blank = {"device_read_bytes": 0, "device_write_bytes": 0}
    return [
        {"index": 0, "start_unix_s": t0, "end_unix_s": half} | blank,
        {"index": 1, "start_unix_s": half, "end_unix_s": t1 + 60} | blank,
    ]


def judged(fig: dict[str, Any], key: str) -> tuple[Verdict, str]:
    crit = dict(criteria(load_g4_profile("smoke")))[key]
    measured = integrity.measurements(fig, ())
    detail = integrity.details(fig, "node-a").get(key, "")
    check = g4_check("node-a", "tiny", f"soak[tiny].{key}", key, crit, ruled=None)
    j = check.evaluate(Inputs(measured, detail=detail))
    return j.verdict, detail


def test_a_block_corrupted_mid_soak_fails_naming_host_volume_file_offset_and_time(tmp_path: Path) -> None:
    follow = tmp_path / "soak-state"
    follow.mkdir()
    t0 = time.time()
    job, target = started(tmp_path, follow)
    chunks: list[Path] = []
    while not chunks:
        chunks = sorted(Path(target.path).glob("kvgate-integrity-*/kv/chunk-00002.kv"))
        time.sleep(0.2)
    time.sleep(2.5)  # a few clean cycles first
    with chunks[0].open("r+b") as f:  # mid-soak, on this machine's scratch
        f.seek(100_000)
        f.write(b"CORRUPT!")
    corrupted = time.time()
    time.sleep(2.5)
    (follow / "exit_code").write_text("0\n")  # the soak ended: the load stops after its cycle
    followed = integrity.follow(EX, job, timeout_s=120, poll_s=0.5)
    fig = integrity.figures(followed, windows_over(t0, time.time()), volume="scratch", share=32 << 20)

    assert followed.error == ""
    assert fig["cycles"] >= 3
    (bad,) = fig["failures"]
    assert (bad["kind"], bad["file"], bad["offset_bytes"]) == ("mismatch", str(chunks[0]), 100_000)
    assert corrupted <= bad["first_seen_unix_s"] <= corrupted + 5
    assert bad["times_seen"] >= 1
    assert bad["windows"]
    verdict, detail = judged(fig, "integrity")
    assert verdict is Verdict.FAIL
    assert f"host node-a, volume scratch: mismatch in {chunks[0]} at offset 100000, first seen " in detail
    assert judged(fig, "integrity-reads")[0] is Verdict.PASS
    assert not list(Path(target.path).glob("kvgate-integrity-*"))  # its files removed at the end


def test_a_clean_soak_passes_and_counts_what_it_verified(tmp_path: Path) -> None:
    follow = tmp_path / "soak-state"
    follow.mkdir()
    t0 = time.time()
    job, _ = started(tmp_path, follow)
    time.sleep(3)
    (follow / "exit_code").write_text("0\n")
    followed = integrity.follow(EX, job, timeout_s=120, poll_s=0.5)
    fig = integrity.figures(followed, windows_over(t0, time.time()), volume="scratch", share=32 << 20)
    assert fig["failures"] == []
    assert fig["cycles"] >= 2
    assert fig["verified_bytes"] >= fig["cycles"] * (4 * (256 << 10) + (1 << 20))
    assert fig["fio_verified_bytes"] >= fig["cycles"] * (2 << 20)
    assert fig["io_bytes"] / fig["span_s"] <= 32 << 20  # within its declared share
    assert judged(fig, "integrity")[0] is Verdict.PASS


def test_fio_finds_a_block_corrupted_at_rest_by_its_crc32c(tmp_path: Path) -> None:
    stop = threading.Event()
    fio = FioLoad(str(tmp_path), size=1 << 20, bs=65536, rate=64 << 20, direct=True)
    first = fio.cycle(1, stop)
    assert first["write"]["failures"] == []
    assert first["write"]["read_bytes"] == 1 << 20
    with open(fio.file, "r+b") as f:
        f.seek(200_000)
        f.write(b"XXXXXXXX")
    second = fio.cycle(2, stop)
    (bad,) = second["rest"]["failures"]
    assert (bad["kind"], bad["file"], bad["offset_bytes"]) == ("mismatch", fio.file, 196608)  # its block
    assert "write" not in second  # the evidence is not overwritten


def test_nothing_is_written_outside_scratch(tmp_path: Path) -> None:
    vol = Volume(path=str(tmp_path), kind="candidate", scratch=False)
    with pytest.raises(UnsafeWrite, match="not marked scratch"):
        checked(EX, vol, f"{tmp_path}/kvgate-g4/x/integrity")
    assert list(tmp_path.iterdir()) == []
