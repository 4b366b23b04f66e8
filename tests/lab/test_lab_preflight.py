"""Preflight on the QEMU lab: the counter probe on a real multipath head, the NFS server's cache
really dropped over SSH (the server's own page cache shows it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from labfixture import lab_vm  # noqa: F401 (the session fixture `lab`)
from labkvgate import judged, kvgate, on_array

pytestmark = pytest.mark.timeout(1800)  # the first test waits for the lab to boot (and build once)

WARM = "/srv/nfs/kvgate/.lab-warm"  # a file in the export, read into the server's page cache


@pytest.fixture(scope="module")
def preflight(
    lab: dict[str, object], tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], Path]:
    on_array(f"dd if=/dev/urandom of={WARM} bs=1M count=8 status=none && cat {WARM} > /dev/null")
    assert _resident_bytes() == 8 << 20  # cached on the server before preflight
    done, run = kvgate("preflight", results=tmp_path_factory.mktemp("results"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return judged(run), run


def _resident_bytes() -> int:
    return int(on_array(f"fincore --bytes --noheadings --output RES {WARM}").strip())


def test_preflight_passes_on_the_lab(preflight: tuple[dict[str, Any], Path]) -> None:
    checks, _ = preflight
    assert {k: r["verdict"] for k, r in checks.items() if r["verdict"] != "PASS"} == {
        "lab-client/volume[array].nfs": "SKIP"  # an ext4 volume has no NFS server
    }


def test_the_multipath_head_is_counted_on_its_paths(preflight: tuple[dict[str, Any], Path]) -> None:
    """The head's own stat never moves (Linux counts bio-based heads' I/O on the paths)."""
    checks, run = preflight
    (evidence,) = checks["lab-client/volume[array].counters"]["evidence"]
    probe = json.loads((run / evidence).read_text())
    assert probe["volume"]["head"] == "nvme0n1"
    assert probe["volume"]["carriers"] == ["nvme0c0n1", "nvme0c1n1"]
    assert probe["counts"]["counted_on"] == "nvme0c0n1+nvme0c1n1"
    assert probe["counts"]["device_read_bytes"] == probe["read_bytes"] == 64 << 20


def test_the_nfs_server_cache_is_dropped_over_ssh(preflight: tuple[dict[str, Any], Path]) -> None:
    checks, _ = preflight
    assert checks["lab-client/volume[nfs].nfs"]["measured"] == "dropped"
    assert _resident_bytes() == 0  # the server itself no longer caches the file it had read
