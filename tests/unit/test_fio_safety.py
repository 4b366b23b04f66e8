"""Decision functions of data safety, cold proof and the watchdog, on recorded real outputs.

The device inputs were recorded from a real partitioned, mounted loop device and
this VM's /proc (tests/data/recorded/fio/PROVENANCE.md); the integration tests
exercise the same rules against real devices and real fio.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from kvgate.configuration.fio_job import FioJob
from kvgate.configuration.inventory.schema import Volume
from kvgate.probes.evidence.blockdev import Resolved
from kvgate.probes.evidence.counters import meminfo_bytes, parse_diskstats
from kvgate.probes.evidence.window import Counts
from kvgate.probes.fio.cold import ColdProof
from kvgate.probes.fio.safety import (
    DeviceFacts,
    JobfileView,
    UnsafeTarget,
    device_refusals,
    parse_jobfile,
    parse_lsblk,
)
from kvgate.probes.fio.watchdog import ProcState, WatchdogReport
from kvgate.probes.hostevidence import CacheDrop
from kvgate.probes.scratch import refusals

RECORDED = Path(__file__).parents[1] / "data" / "recorded" / "fio"
SCRATCH = Volume(path="/mnt/scratch", kind="candidate", scratch=True, device="/dev/loop0")
KEEP = Volume(path="/mnt/data", kind="baseline", scratch=False, device="/dev/loop0")


def recorded_facts() -> DeviceFacts:
    nodes, mounts = parse_lsblk((RECORDED / "lsblk-partition-mounted.json").read_text())
    sigs = tuple(
        (line.split(":", 1)[0], line.split(":", 1)[1].strip())
        for name in ("blkid-disk.txt", "blkid-partition.txt")
        for line in (RECORDED / name).read_text().splitlines()
    )
    return DeviceFacts("/dev/loop0", nodes, mounts, sigs)


def blank(device: str = "/dev/loop0") -> DeviceFacts:
    return DeviceFacts(device, (device,), (), ())


def test_recorded_lsblk_tree_has_the_mounted_partition() -> None:
    facts = recorded_facts()
    assert facts.nodes == ("/dev/loop0", "/dev/loop0p1")
    assert len(facts.mounts) == 1
    assert facts.mounts[0][0] == "/dev/loop0p1"


def test_mounted_partition_and_signatures_are_each_refused() -> None:
    reasons = device_refusals(recorded_facts(), volume=SCRATCH, writes=True, allow_destructive=True)
    assert any(r.startswith("/dev/loop0p1 is mounted on /tmp/kvgate-block-record") for r in reasons)
    assert '/dev/loop0 carries a signature (PTTYPE="dos")' in reasons
    assert any(r.startswith("/dev/loop0p1 carries a signature") and 'TYPE="ext4"' in r for r in reasons)


def test_a_blank_scratch_device_with_the_flag_is_allowed() -> None:
    assert device_refusals(blank(), volume=SCRATCH, writes=True, allow_destructive=True) == []


@pytest.mark.parametrize(
    ("facts", "volume", "allow", "reason"),
    [
        (blank(), KEEP, True, "volume /mnt/data (/dev/loop0) is not marked scratch"),
        (
            blank(),
            SCRATCH,
            False,
            "a destructive write to a raw device needs the explicit allow-destructive option",
        ),
        (blank(), None, True, "/dev/loop0 is not the declared device of the volume"),
        (
            DeviceFacts(
                "/dev/loop0",
                ("/dev/loop0",),
                (),
                (),
                ("blkid -p /dev/loop0 exited 2: Operation not permitted",),
            ),
            SCRATCH,
            True,
            "cannot prove /dev/loop0 blank: blkid -p /dev/loop0 exited 2: Operation not permitted",
        ),
    ],
)
def test_each_device_rule_alone_refuses(
    facts: DeviceFacts, volume: Volume | None, allow: bool, reason: str
) -> None:
    assert device_refusals(facts, volume=volume, writes=True, allow_destructive=allow) == [reason]


def test_reading_the_declared_device_needs_no_scratch() -> None:
    assert device_refusals(recorded_facts(), volume=KEEP, writes=False, allow_destructive=False) == []
    assert device_refusals(blank("/dev/sdb"), volume=None, writes=False, allow_destructive=False)


@pytest.mark.parametrize(
    ("volume", "target", "resolved", "reason"),
    [
        (SCRATCH, "/mnt/scratch/../data", "/mnt/data", "contains '..': path traversal is refused"),
        (SCRATCH, "/mnt/scratchy/f", "/mnt/scratchy/f", "outside the volume directory /mnt/scratch"),
        (SCRATCH, "/etc/passwd", "/etc/passwd", "outside the volume directory"),
        (SCRATCH, "/mnt/scratch/link/f", "/home/f", "resolves to /home/f, outside /mnt/scratch (symlink)"),
        (SCRATCH, "scratch/f", "/root/scratch/f", "is not an absolute path"),
        (KEEP, "/mnt/data/kvgate", "/mnt/data/kvgate", "is not marked scratch"),
    ],
)
def test_file_target_refusals(volume: Volume, target: str, resolved: str, reason: str) -> None:
    reasons = refusals(volume, target, resolved=resolved, root=volume.path)
    assert len(reasons) == 1
    assert reason in reasons[0]


def test_file_target_inside_a_scratch_volume_is_allowed() -> None:
    assert (
        refusals(SCRATCH, "/mnt/scratch/kvgate/f", resolved="/mnt/scratch/kvgate/f", root="/mnt/scratch")
        == []
    )


def test_recorded_diskstats_and_meminfo_parse_to_bytes() -> None:
    stats = parse_diskstats((RECORDED / "proc-diskstats.txt").read_text())
    line = next(ln for ln in (RECORDED / "proc-diskstats.txt").read_text().splitlines() if " vda " in ln)
    assert stats["vda"][0] == int(line.split()[5]) * 512
    assert meminfo_bytes("MemTotal", proc_root=str(_proc_with_meminfo())) > 20 << 30


def _proc_with_meminfo() -> Path:
    proc = Path(tempfile.mkdtemp(prefix="kvgate-proc-"))
    (proc / "meminfo").write_text((RECORDED / "proc-meminfo.txt").read_text())
    return proc


VDA = Resolved("vda", ("vda",), "disk", "ext4", "/", "/dev/vda")


def proof(*, device_read_bytes: int | None = 95 << 20, **kw: object) -> ColdProof:
    base: dict[str, object] = {
        "volume": VDA,
        "counts": Counts(device_read_bytes, 0, None, counted_on="vda"),
        "fio_read_bytes": 100 << 20,
        "drop": CacheDrop(True, "root", 5 << 30, 1 << 28),
        "direct": True,
        "working_set_bytes": 64 << 20,
        "ram_bytes": 24 << 30,
    }
    return ColdProof(**(base | kw))  # type: ignore[arg-type]


def test_cold_read_served_by_the_device_is_trusted() -> None:
    assert proof().invalid_reason is None


def test_cold_read_not_served_by_the_device_is_invalid_with_both_numbers() -> None:
    reason = proof(device_read_bytes=10 << 20).invalid_reason
    assert reason == "not cold: vda read 10485760 B of the 104857600 B the fio read needed (10% < 90%)"


def test_buffered_working_set_under_twice_ram_is_invalid() -> None:
    reason = proof(direct=False).invalid_reason or ""
    assert reason.startswith("buffered job with a working set of 67108864 bytes < 2 × host RAM")
    assert proof(direct=False, working_set_bytes=50 << 30).invalid_reason is None


def test_no_counter_on_the_volume_cannot_prove_cold() -> None:
    reason = proof(device_read_bytes=None).invalid_reason or ""
    assert "nothing can prove the fio read cold" in reason


def test_proc_stat_line_with_odd_comm_parses() -> None:
    state = ProcState.parse("deadline 3012 4242 (fio (job) 1) D 4241 4242 4242 0 -1 4194560 12")
    assert (state.pid, state.comm, state.state, state.elapsed_ms) == (4242, "fio (job) 1", "D", 3012)


def test_watchdog_reason_names_d_state_and_survivors() -> None:
    text = "\n".join(
        [
            "deadline 8010 100 (fio) S 99 100 100 0",
            "deadline 8010 101 (fio) D 100 101 101 0",
            "deadline 8010 end",
            "after-term 10020 101 (fio) D 100 101 101 0",
            "after-term 10020 end",
            "after-kill 12030 101 (fio) D 1 101 101 0",
            "after-kill 12030 end",
        ]
    )
    report = WatchdogReport.parse(text, 8.0)
    reason = report.reason()
    assert "fio overran its 8 s deadline" in reason
    assert "fired after 8.0 s" in reason
    assert "100 fio state S, 101 fio state D" in reason
    assert "D-state (uninterruptible I/O): 101 (deadline), 101 (after-term), 101 (after-kill)" in reason
    assert reason.endswith("alive after KILL: 101 state D")


RENDERED = FioJob(name="j", rw="read", bs="1m", size="4m", runtime_s=3, ramp_s=1, directory="/mnt/scratch/k")


def test_a_rendered_job_file_reads_back_to_its_one_target() -> None:
    assert parse_jobfile(RENDERED.to_jobfile()) == JobfileView("/mnt/scratch/k", writes=False)
    assert parse_jobfile(RENDERED.to_jobfile(layout_only=True)).writes  # laying out writes the files
    assert parse_jobfile(RENDERED.replace(rw="randwrite").to_jobfile()).writes


@pytest.mark.parametrize(
    ("extra_lines", "reason"),
    [
        (
            "directory=/etc",
            "2 target lines (directory=/mnt/scratch/k, directory=/etc): fio would obey the last",
        ),
        ("filename=/dev/sda", "2 target lines"),
        ("include /etc/evil.fio", "option 'include /etc/evil.fio' is not one kvgate renders"),
        ("exec_prerun=rm -rf /", "option 'exec_prerun' is not one kvgate renders"),
        ("description=${HOME}", "expands '$'"),
        ("ioengine=exec", "ioengine=exec is not one that only reads and writes its target"),
        ("description=" + "x" * 4100, "is over 4000 characters"),
        ("description=a\rdirectory=/etc", "has a control character"),
        ("[j]", "is not a new [section] header"),
        ("[global]\ndirectory=/mnt/scratch/k", "directory outside a job section"),
    ],
)
def test_the_job_file_fio_reads_is_refused_when_it_says_more_than_kvgate_rendered(
    extra_lines: str, reason: str
) -> None:
    with pytest.raises(UnsafeTarget) as err:
        parse_jobfile(RENDERED.to_jobfile() + extra_lines + "\n")
    assert any(reason in r for r in err.value.reasons), err.value.reasons


def test_a_job_file_without_a_target_is_refused() -> None:
    text = RENDERED.to_jobfile().replace("directory=/mnt/scratch/k\n", "")
    with pytest.raises(UnsafeTarget, match="0 target lines"):
        parse_jobfile(text)
