"""A multipath path cut during a fio run shows in G2 as what it was (issue 29), on the lab's kernels.

G2 measures every fio cell with ``run_measured`` (kvgate.probes.fio.cold): the volume's counters
around the run and the kernel's storage lines of the run's window. Here the same call reads the
client's NVMe-oF head while the array stops serving the head's optimized path (port 1) a few
seconds in and serves it again: the read goes on over the other path, and the run is INVALID
naming what the kernel logged, not a baseline figure of a volume that lost a path meanwhile.

Named to run after test_lab_g1 (pytest takes the files in order): G1 counts the NVMe-oF transport
errors the kernel logged since boot, and this cut logs some, as test_lab_g4_faults' do.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from labfixture import lab_vm  # noqa: F401 (the session fixture `lab`)
from labkvgate import INVENTORY
from test_lab_g1 import port_ctrl_state, port_down

from kvgate.configuration.fio_job import FioJob
from kvgate.configuration.gateconfig import load_config
from kvgate.probes.fio import RunOptions
from kvgate.probes.fio.cold import run_measured
from kvgate.probes.scratch import checked, create, remove
from kvgate.transport import connect
from lab import labctl
from lab.guests import CLIENT

pytestmark = pytest.mark.timeout(1800)  # the first lab test waits for the lab to boot


# the measuring fio's job file (the layout's, run first, says create_only): its last argument
MEASURING = "pgrep -a -x fio | awk '{print $NF}' | xargs -r grep -L create_only | grep -q ."


def cut_port_1_once_fio_reads(seconds_in: float = 3) -> str:
    """Wait for the job's measuring fio to run, then the array stops serving port 1 until the client
    sees it down, then serves it again; the path's state while it was cut."""
    deadline = time.monotonic() + 300
    while labctl.ssh(CLIENT, MEASURING).returncode != 0:  # the layout and the cache drop come first
        assert time.monotonic() < deadline, "the measuring fio never started on the client"
        time.sleep(0.5)
    time.sleep(seconds_in)
    with port_down(1):
        return port_ctrl_state(1)


def test_a_path_cut_during_a_fio_read_makes_the_run_invalid_naming_the_kernels_line(
    lab: dict[str, object],
) -> None:
    inv = load_config(INVENTORY).inventory.inventory
    host = inv.hosts["lab-client"]
    ex, vol = connect("lab-client", host), inv.volumes["array"]
    work = checked(ex, vol, f"{vol.path}/kvgate-g2/lab-client-cut/fio")
    job = FioJob(
        name="cut", rw="read", bs="1m", iodepth=4, size="64m", runtime_s=40, ramp_s=0, directory=work.path
    )
    try:
        create(ex, work)
        with ThreadPoolExecutor(1) as pool:
            cut = pool.submit(cut_port_1_once_fio_reads)
            measured = run_measured(ex, job, vol, RunOptions(sudo=host.sudo))
            during = cut.result(timeout=300)
    finally:
        remove(ex, work, parents=2)
        ex.close()
    kernel = measured.kernel or {}
    reason = measured.invalid_reason or ""
    print(f"\npath cut under fio: port 1 {during}; {len(kernel.get('lines', []))} kernel line(s); {reason}")
    assert during != "live"  # the cut happened while fio read
    assert measured.run.invalid_reason is None  # fio read on over the other path: no I/O error
    assert kernel.get("lines"), kernel  # the journal of the run's window has the path's loss
    assert reason.startswith("the kernel logged "), reason
    assert reason.endswith("not a steady measurement of the volume")
