"""A fio run during which the kernel logged a line about the volume's devices is not a steady
measurement of the volume; lines about other devices are kept, not judged.

The lines are the NVMe/TCP reconnect of tests/data/recorded/kernel-log/lore-nvme-tcp-reconnect.txt,
stamped as dmesg --time-format=iso prints them; the lab test (tests/lab/test_lab_g2_path_cut.py)
cuts a real path under a real fio run.
"""

from __future__ import annotations

from kvgate.probes.evidence import Resolved
from kvgate.probes.facts.kernlog import parse_kernel_window
from kvgate.probes.fio.cold import kernel_reason, on_volume

T0 = 1796520940.0  # 2026-12-06T01:35:40Z
DMESG = """#source dmesg
2026-12-06T01:35:30,000000+00:00 nvme nvme17: new ctrl: NQN "nqn.2014-08.org.nvmexpress:NVMf"
2026-12-06T01:35:44,000000+00:00 nvme nvme3: I/O 7 QID 2 timeout, aborting
2026-12-06T01:35:45,733148+00:00 nvme nvme17: starting error recovery
2026-12-06T01:35:45,801000+00:00 nvme nvme17: failed nvme_keep_alive_end_io error=10
2026-12-06T01:35:47,100000+00:00 nvme nvme17: Reconnecting in 10 seconds...
2026-12-06T01:35:50,000000+00:00 EXT4-fs (vda1): re-mounted. Quota mode: none.
"""
HEAD = Resolved("nvme1n1", ("nvme1c16n1", "nvme1c17n1"), "nvme-multipath", "ext4", "/mnt/a", "/dev/nvme1n1")
OTHER = Resolved("nvme0n1", ("nvme0n1",), "disk", "ext4", "/mnt/b", "/dev/nvme0n1")


def test_a_reconnect_of_the_volumes_path_inside_the_runs_window_makes_it_invalid_naming_it() -> None:
    kernel = on_volume(parse_kernel_window(DMESG, since=T0, until=T0 + 30), HEAD)
    reason = kernel_reason(kernel)
    assert reason is not None
    said = "the kernel logged 3 storage lines about the volume's devices during the run, the first (NVMe)"
    assert reason.startswith(f"{said} 5.7 s in: ")
    assert "nvme nvme17: starting error recovery" in reason  # controller 17 carries path nvme1c17n1
    assert reason.endswith("not a steady measurement of the volume")
    assert len(kernel["lines"]) == 4  # nvme3's timeout is kept as evidence, not held against this volume


def test_lines_of_other_devices_outside_the_window_or_of_no_storage_kind_say_nothing() -> None:
    inside = parse_kernel_window(DMESG, since=T0, until=T0 + 30)
    assert kernel_reason(on_volume(inside, OTHER)) is None  # nvme3 and nvme17 are not nvme0's
    assert kernel_reason(on_volume(parse_kernel_window(DMESG, since=T0 + 8, until=T0 + 30), HEAD)) is None
    assert kernel_reason(on_volume(parse_kernel_window(DMESG, since=0, until=T0 - 20), HEAD)) is None
    assert kernel_reason({"error": "CommandFailed: dmesg: read kernel buffer failed", "lines": []}) is None
