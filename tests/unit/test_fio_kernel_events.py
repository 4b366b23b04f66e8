"""A fio run during which the kernel logged a storage event is not a steady measurement of the volume.

The lines are the NVMe/TCP reconnect of tests/data/recorded/kernel-log/lore-nvme-tcp-reconnect.txt,
stamped as dmesg --time-format=iso prints them; the lab test (tests/lab/test_lab_fio_path_cut.py)
cuts a real path under a real fio run.
"""

from __future__ import annotations

from kvgate.probes.facts.kernlog import parse_kernel_window
from kvgate.probes.fio.cold import kernel_reason

T0 = 1796520940.0  # 2026-12-06T01:35:40Z
DMESG = """#source dmesg
2026-12-06T01:35:30,000000+00:00 nvme nvme17: new ctrl: NQN "nqn.2014-08.org.nvmexpress:NVMf"
2026-12-06T01:35:45,733148+00:00 nvme nvme17: starting error recovery
2026-12-06T01:35:45,801000+00:00 nvme nvme17: failed nvme_keep_alive_end_io error=10
2026-12-06T01:35:47,100000+00:00 nvme nvme17: Reconnecting in 10 seconds...
2026-12-06T01:35:50,000000+00:00 EXT4-fs (vda1): re-mounted. Quota mode: none.
"""


def test_a_reconnect_inside_the_runs_window_makes_it_invalid_naming_the_line() -> None:
    kernel = parse_kernel_window(DMESG, since=T0, until=T0 + 30)
    reason = kernel_reason(kernel)
    assert reason is not None
    assert reason.startswith("the kernel logged 3 storage lines during the run, the first (NVMe) 5.7 s in: ")
    assert "nvme nvme17: starting error recovery" in reason
    assert reason.endswith("not a steady measurement of the volume")


def test_lines_outside_the_window_or_of_no_storage_kind_say_nothing() -> None:
    assert kernel_reason(parse_kernel_window(DMESG, since=T0 + 8, until=T0 + 30)) is None  # EXT4 only
    assert kernel_reason(parse_kernel_window(DMESG, since=0, until=T0 - 20)) is None
    assert kernel_reason({"not_read": "CommandFailed: dmesg: read kernel buffer failed", "lines": []}) is None
