"""Sealed G2 runs with two volumes, written through RunStore and sealed as every gate run ends.

The history and compare tests run the real ``kvgate`` on these directories: two runs of one
series differ only in their bandwidths, so a slower volume is a regression.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from report_runs import check

from kvgate.base.criteria import Verdict
from kvgate.record import write_manifest
from kvgate.record.store import RunStore

REPO = Path(__file__).resolve().parents[2]
BW = "seqread-1m.read_bw_bytes_per_s"
SCRATCH, FAST = "localhost/volume[scratch].fio.seqread-1m.bw", "localhost/volume[fast].fio.seqread-1m.bw"


def kvgate(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "kvgate.cli", *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=200, check=False)


def g2_run(root: Path, scratch: float, fast: float, *, sha: str = "ab" * 32, seal: bool = True) -> Path:
    """A complete G2 run of site lab-a measuring two volumes' read bandwidth (bytes/s)."""
    meta = {"inventory": {"path": "inventory/lab-a.yaml", "sha256": sha}, "planned": []}
    store = RunStore.create(root, site="lab-a", gate="g2", meta=meta)
    for volume, bw in (("scratch", scratch), ("fast", fast)):
        store.record(
            check(
                f"volume[{volume}].fio.seqread-1m.bw",
                Verdict.PASS,
                rule="G2-FIO-1",
                metric=BW,
                measured=bw,
                expected=0,
                comparator=">",
                unit="B/s",
            )
        )
    store.finish("complete")
    if seal:
        write_manifest(store.path)
    return store.path
