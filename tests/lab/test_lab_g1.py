"""G1 on the QEMU lab: real NVMe-oF, ANA, native multipath and SMART, and faults made on the array.

G1 reads the client's kernel log since boot, as it must on an arriving lab: run on a lab that the
fault tests (test_lab_g4_faults, after this module) have already shaken, its transport-error check
rightly FAILs. `make test` boots a fresh lab; after a run of tests/lab, `make lab-down` first.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from labfixture import lab_vm  # noqa: F401 (the session fixture `lab`)
from labkvgate import INVENTORY, g1_checks, judged, kvgate, on_array

from kvgate.base.criteria import Verdict
from lab import labctl, qemu
from lab.guests import ARRAY, CLIENT, links

pytestmark = pytest.mark.timeout(1800)  # the first test waits for the lab to boot (and build once)

NQN = labctl.NQN
EXPECTED_SKIPS = {
    "lab-array/nvmeof.subsystems",
    "lab-array/gpu.count",
    "lab-client/nvme.count",
    "lab-client/gpu.count",
}


@pytest.fixture(scope="module")
def g1(lab: dict[str, object], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    done, run = kvgate("run", "g1", results=tmp_path_factory.mktemp("results"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (run / "report.pdf").is_file()
    return judged(run)


def test_g1_passes_on_both_guests(g1: dict[str, dict[str, Any]]) -> None:
    not_passed = {k for k, r in g1.items() if r["verdict"] != "PASS"}
    assert not_passed == EXPECTED_SKIPS
    assert {g1[k]["verdict"] for k in EXPECTED_SKIPS} == {"SKIP"}


def test_capture_writes_boms_the_guests_then_pass(tmp_path: Path) -> None:
    """`kvgate inventory capture` of both guests, as the BOM of a copy of the lab's inventory: G1
    on it passes (capture once counted the array guest's own PCIe drives as NVMe-oF subsystems)."""
    doc = yaml.safe_load(INVENTORY.read_text())
    for host in (ARRAY.name, CLIENT.name):
        done = subprocess.run(
            [sys.executable, "-m", "kvgate.cli", "inventory", "capture", host, "--inventory", str(INVENTORY)],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        doc["hosts"][host]["expect"] = yaml.safe_load(done.stdout)["hosts"][host]["expect"]
    assert doc["hosts"][CLIENT.name]["expect"]["nvmeof"]["transport"] == "tcp"
    assert doc["hosts"][ARRAY.name]["expect"]["nvmeof"] == {"subsystems": 0}
    golden = tmp_path / "captured.yaml"
    golden.write_text(yaml.safe_dump(doc, sort_keys=False))
    done, run = kvgate("run", "g1", "--no-pdf", results=tmp_path / "results", inventory=golden)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    verdicts = {k: r["verdict"] for k, r in judged(run).items()}
    assert {k for k, v in verdicts.items() if v != "PASS"} == EXPECTED_SKIPS, verdicts
    assert len(verdicts) > 40  # capture wrote more than the hand-written BOM asks: CPU, memory, NICs


def test_g1_reads_two_live_paths_and_one_optimized_per_namespace(g1: dict[str, dict[str, Any]]) -> None:
    assert g1["lab-client/nvmeof.live_paths"]["condition"].endswith(
        "live_paths=2 ≥ 2 — nvme0 live, nvme1 live"
    )
    ana = g1["lab-client/nvmeof.ana"]["condition"]
    assert ana.startswith(f"{NQN}.optimized_paths=1 ≥ 1")
    assert "non-optimized/optimized" in ana  # each controller: one namespace each way
    assert g1["lab-client/nvmeof.iopolicy"]["condition"] == f"{NQN}.iopolicy=numa = numa"


def test_g1_reads_the_array_drives_smart_and_counts_the_head_on_its_paths(
    g1: dict[str, dict[str, Any]],
) -> None:
    assert g1["lab-array/nvme.count"]["measured"] == 3
    assert g1["lab-array/nvme.critical_warning"]["condition"].count("critical_warning=0 = 0") == 3
    counters = g1["lab-client/volume[array].counters"]["condition"]
    assert (
        "on nvme0n1 (nvme-multipath) counted on nvme0c0n1, nvme0c1n1: 67108864 B for 67108864 B" in counters
    )


def port_ctrl_state(port: int) -> str:
    """The state of the client's controller on the array's port 1 or 2 (live, connecting, …)."""
    addr = f"{links()[port - 1].subnet}.1"
    done = labctl.ssh(CLIENT, f"cat $(dirname $(grep -l traddr={addr}, /sys/class/nvme/nvme*/address))/state")
    return done.stdout.strip()


def wait_port(port: int, *, live: bool, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while (port_ctrl_state(port) == "live") != live:
        assert time.monotonic() < deadline, f"port {port}'s path is still {port_ctrl_state(port)}"
        time.sleep(2)


@contextlib.contextmanager
def port_down(port: int) -> Iterator[None]:
    """The array stops serving the subsystem on ``port`` (its link under the port removed) until the
    client sees the path down; then serves it again, and waits for the path to be live."""
    link = f"/sys/kernel/config/nvmet/ports/{port}/subsystems/{NQN}"
    on_array(f"rm {link}")
    try:
        wait_port(port, live=False)
        yield
    finally:
        on_array(f"[ -e {link} ] || ln -s /sys/kernel/config/nvmet/subsystems/{NQN} {link}")
        wait_port(port, live=True)


@pytest.fixture
def port2_down(lab: dict[str, object]) -> Iterator[None]:
    with port_down(2):
        yield


def test_a_port_taken_down_on_the_array_is_seen_as_such(port2_down: None) -> None:
    checks = g1_checks("lab-client", "nvme", "nvmeof")
    live = checks["nvmeof.live_paths"]
    assert live.verdict is Verdict.FAIL
    assert "live_paths=1 ≥ 2" in live.condition
    ana = checks["nvmeof.ana"]  # namespace 2 was optimized only behind port 2
    assert ana.verdict is Verdict.FAIL
    assert ana.condition.startswith(f"{NQN}.optimized_paths=0 ≥ 1")
    assert "(connecting)" in ana.condition or "(resetting)" in ana.condition


@pytest.fixture
def drive_warning(lab: dict[str, object]) -> Iterator[None]:
    """QEMU raises SMART critical warning 0x04 (reliability degraded) on the array's second drive."""
    device = "/machine/peripheral/nvmedev1"
    qemu.qmp(ARRAY, labctl.run_dir(), "qom-set", path=device, property="smart_critical_warning", value=4)
    try:
        yield
    finally:
        qemu.qmp(ARRAY, labctl.run_dir(), "qom-set", path=device, property="smart_critical_warning", value=0)


def test_a_smart_critical_warning_raised_on_a_drive_fails_its_check(drive_warning: None) -> None:
    warning = g1_checks("lab-array", "nvme")["nvme.critical_warning"]
    assert warning.verdict is Verdict.FAIL
    assert "critical_warning=4 = 0" in warning.condition
    assert warning.condition.count("critical_warning=0 = 0") == 2


def test_the_lab_inventory_names_the_lab_keys(lab: dict[str, object]) -> None:
    text = INVENTORY.read_text()  # the shipped file, or its copy where KVGATE_LAB_CACHE moved the keys
    for key in ("key_file", "known_hosts"):
        assert str(lab[key]).replace(str(Path.home()), "~") in text
