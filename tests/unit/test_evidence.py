"""The evidence module on recorded lab artifacts and real local parts (issue 12).

Lab layouts that cannot exist here (NVMe-oF native multipath, dm-multipath, LVM over a
multipath head, NFS) are sysfs trees built from recorded listings and other projects'
fixtures (tests/data/recorded/PROVENANCE.md, "evidence/"); the process tree, O_DIRECT
reads and the counters themselves are this machine's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kvgate.probes.evidence.blockdev import DeviceError, Resolved, carriers, device_numbers, resolve
from kvgate.probes.evidence.counters import device_bytes, parse_diskstats
from kvgate.probes.evidence.engines import engine_reads, parse_io_stat, process_read_bytes, session_members
from kvgate.probes.evidence.nfs import parse_mountstats
from kvgate.probes.evidence.probe import probe
from kvgate.probes.evidence.window import Counts, busiest, cold_reason, snapshot

RECORDED = Path(__file__).parents[1] / "data" / "recorded" / "evidence"
MIB = 1 << 20


def sysfs(root: Path, devices: dict[str, str], **links: list[str]) -> str:
    """A sysfs tree: each device's directory under devices/, class/block/<name> linking to it.

    ``links``: ``<name>__slaves`` / ``<name>__multipath`` → entries in that directory;
    a device path ending in ``/<disk>/<part>`` is a partition of ``disk``.
    """
    for name, where in devices.items():
        target = root / "devices" / where
        target.mkdir(parents=True, exist_ok=True)
        (root / "class" / "block").mkdir(parents=True, exist_ok=True)
        (root / "class" / "block" / name).symlink_to(os.path.relpath(target, root / "class" / "block"))
        if target.parent.name in devices:
            (target / "partition").write_text("1\n")
        if name.startswith("dm-"):
            (target / "dm").mkdir()
    for key, entries in links.items():
        name, kind = key.split("__")
        directory = root / "devices" / devices[name] / kind
        directory.mkdir()
        for entry in entries:
            (directory / entry).mkdir()
    return str(root)


def ledmon_tree(root: Path) -> str:
    """The /sys/block of ledmon PR #152 (RHEL 9.2, kernel 5.14): no multipath/ links on the head."""
    devices = {}
    for line in (RECORDED / "sysblock-ledmon-pr152-nvme-multipath.txt").read_text().splitlines():
        name, target = line.split()[-3], line.split()[-1]
        devices[name] = target.removeprefix("../devices/")
    return sysfs(root, devices)


def test_a_multipath_head_without_links_is_counted_on_its_hidden_paths(tmp_path: Path) -> None:
    tree = ledmon_tree(tmp_path)
    assert carriers("nvme6n1", sys_root=tree) == ("nvme-multipath", ("nvme6c6n1",))
    assert carriers("nvme0n1", sys_root=tree) == ("disk", ("nvme0n1",))  # not multipath: itself


def test_the_head_counts_nothing_and_its_path_everything_as_atop_saw_it() -> None:
    stats = parse_diskstats((RECORDED / "diskstats-atop-pr157-nvme-multipath.txt").read_text())
    assert stats["nvme0n1"] == (0, 0)
    assert stats["nvme0c0n1"] == (4815165730 * 512, 6989322264 * 512)


def test_recent_kernels_link_the_paths_under_the_head(tmp_path: Path) -> None:
    head = "virtual/nvme-subsystem/nvme-subsys2/nvme2n1"
    devices = {
        "nvme2n1": head,
        "nvme2c1n1": "pci/nvme/nvme1/nvme2c1n1",
        "nvme2c2n1": "pci/nvme/nvme2/nvme2c2n1",
    }
    tree = sysfs(tmp_path, devices, nvme2n1__multipath=["nvme2c1n1", "nvme2c2n1"])
    assert carriers("nvme2n1", sys_root=tree) == ("nvme-multipath", ("nvme2c1n1", "nvme2c2n1"))


def test_dm_multipath_and_lvm_resolve_to_their_slaves(tmp_path: Path) -> None:
    # prometheus/procfs fixtures: dm-0 (vg0--lv_root) over sda, dm-1 (mpathA) over sdb and sdc
    devices = {"dm-0": "virtual/block/dm-0", "dm-1": "virtual/block/dm-1"}
    devices |= {d: f"pci/{d}" for d in ("sda", "sdb", "sdc")}
    tree = sysfs(tmp_path, devices, **{"dm-0__slaves": ["sda"], "dm-1__slaves": ["sdb", "sdc"]})
    assert carriers("dm-0", sys_root=tree) == ("dm", ("sda",))
    assert carriers("dm-1", sys_root=tree) == ("dm", ("sdb", "sdc"))
    stats = device_bytes(("sdb", "sdc"), proc_root=str(_proc(tmp_path, "procfs-diskstats.txt")))
    assert stats["sdb"][0] == 9657779 * 512  # the fixture's line for sdb


def test_an_lv_on_a_multipath_head_and_a_partition_of_one_count_on_the_paths(tmp_path: Path) -> None:
    head = "virtual/nvme-subsystem/nvme-subsys3/nvme3n1"
    devices = {
        "nvme3n1": head,
        "nvme3n1p1": f"{head}/nvme3n1p1",
        "nvme3c0n1": "pci/a/nvme3c0n1",
        "nvme3c1n1": "pci/b/nvme3c1n1",
        "dm-4": "virtual/block/dm-4",
    }
    tree = sysfs(tmp_path, devices, **{"dm-4__slaves": ["nvme3n1p1"]})
    assert carriers("nvme3n1p1", sys_root=tree) == ("nvme-multipath", ("nvme3c0n1", "nvme3c1n1"))
    assert carriers("dm-4", sys_root=tree) == ("dm", ("nvme3c0n1", "nvme3c1n1"))


def test_a_broken_tree_is_an_error_that_names_the_device(tmp_path: Path) -> None:
    tree = sysfs(
        tmp_path,
        {"dm-0": "virtual/dm-0", "dm-1": "virtual/dm-1"},
        **{"dm-0__slaves": ["dm-1"], "dm-1__slaves": ["dm-0"]},
    )
    with pytest.raises(DeviceError, match="deeper than"):
        carriers("dm-0", sys_root=tree)
    with pytest.raises(DeviceError, match="no block device sdz"):
        carriers("sdz", sys_root=tree)


def test_nfs_is_counted_by_the_clients_bytes_read_from_the_server() -> None:
    mounts = parse_mountstats((RECORDED / "procfs-mountstats-26231.txt").read_text())
    assert list(mounts) == ["/mnt/nfs/test"]  # rootfs, sysfs, proc and ext4 are not NFS
    nfs = mounts["/mnt/nfs/test"]
    assert (nfs.source, nfs.fstype, nfs.server_read_bytes) == ("192.168.1.1:/srv/test", "nfs4", 1210214218)
    assert (nfs.options["vers"], nfs.options["rsize"], nfs.options["proto"]) == ("4.0", "1048576", "tcp")
    volume = Resolved(None, (), "nfs", "nfs4", "/mnt/nfs/test", nfs.source)
    before = {"nfs": nfs.to_json(), "engines": [], "cached_bytes": 0}
    after_counts = {**nfs.counts, "server_read": nfs.server_read_bytes + 100 * MIB}
    after = {"nfs": {**nfs.to_json(), "counts": after_counts}, "engines": [], "cached_bytes": 0}
    counts = Counts.between(before, after)
    assert (counts.device_read_bytes, counts.counted_on) == (100 * MIB, "NFS server reads of /mnt/nfs/test")
    assert cold_reason(counts, needed_bytes=100 * MIB, what="read", caches_dropped=True) is None
    assert "nfs" in volume.how.lower()


def test_a_cgroup_counts_every_device_it_read_from() -> None:
    per_device = parse_io_stat((RECORDED / "cgroup-v2-io-stat-kernel-doc.txt").read_text())
    assert per_device == {"8:16": 1459200, "8:0": 90430464}


def container_proc(tmp: Path, mountinfo_fs: str) -> Path:
    """A /proc with a container init (pid 700, its own session) and a child, and the host's mountinfo."""
    proc = tmp / "proc"
    for pid, ppid, read in ((700, 650, 4096), (701, 700, 90430464)):
        (proc / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "stat").write_text(f"{pid} (python3) S {ppid} 700 700 0 -1 0\n")
        (proc / str(pid) / "io").write_text(f"rchar: 1\nread_bytes: {read}\nwrite_bytes: 0\n")
        (proc / str(pid) / "cgroup").write_text(
            "7:blkio:/libpod_parent/libpod-ab\n0::/libpod_parent/libpod-ab\n"
        )
    (proc / "self").mkdir()
    (proc / "self" / "mountinfo").write_text(
        f"35 24 0:30 / {tmp / 'cgroup'} rw,relatime shared:9 - {mountinfo_fs} cgroup2 rw\n"
    )
    return proc


def container_group(tmp_path: Path, procs: str, io_stat: str = "cgroup-v2-io-stat-kernel-doc.txt") -> str:
    """A container's /proc and its cgroup v2 group with a recorded io.stat; returns the proc root."""
    proc = container_proc(tmp_path, "cgroup2")
    group = tmp_path / "cgroup" / "libpod_parent" / "libpod-ab"
    group.mkdir(parents=True)
    (group / "io.stat").write_text((RECORDED / io_stat).read_text())
    (group / "cgroup.procs").write_text(procs)
    return str(proc)


def test_a_container_is_counted_on_its_cgroup_v2_io_stat_where_cgroup_v2_is_mounted(tmp_path: Path) -> None:
    reads = engine_reads(700, "cgroup", proc_root=container_group(tmp_path, "700\n701\n"))
    assert (reads["scope"], reads["read_bytes"], reads["processes"]) == ("cgroup", 1459200 + 90430464, 2)


def test_a_containers_reads_of_the_volume_are_told_apart_from_its_root_disks(tmp_path: Path) -> None:
    """On the lab, io.stat counted a 64 MiB restore on the head (259:1) and 0.5 MB of programs on vda."""
    proc = container_group(tmp_path, "700\n")
    reads = engine_reads(700, "cgroup", volume_devices=("8:16", "9:9"), proc_root=proc)
    assert (reads["read_bytes"], reads["volume_read_bytes"]) == (1459200 + 90430464, 1459200)
    earlier = reads | {"read_bytes": 0, "volume_read_bytes": 1000}
    counts = Counts.between(
        {"engines": [earlier], "cached_bytes": 0}, {"engines": [reads], "cached_bytes": 0}
    )
    assert counts.engine_read_bytes == 1459200 - 1000  # the volume's bytes, not the root disk's
    assert counts.engines_counted == (
        "cgroup /libpod_parent/libpod-ab io.stat, its reads of the volume's devices",
    )


def test_io_stat_keys_a_partitions_reads_by_its_disk_and_a_path_by_nothing(tmp_path: Path) -> None:
    head = "virtual/nvme-subsystem/nvme-subsys0/nvme0n1"
    devices = {
        "nvme0n1": head,
        "nvme0n1p1": f"{head}/nvme0n1p1",
        "nvme0c0n1": "pci/a/nvme0c0n1",
        "vda": "pci/v/vda",
    }
    tree = sysfs(tmp_path, devices)
    for name, number in {"nvme0n1": "259:1", "nvme0n1p1": "259:2", "vda": "254:0"}.items():
        (tmp_path / "devices" / devices[name] / "dev").write_text(number + "\n")
    assert device_numbers(("nvme0n1p1", "nvme0c0n1"), sys_root=tree) == ("259:1",)
    assert device_numbers(("nvme0n1", "nvme0n1p1", "vda"), sys_root=tree) == ("259:1", "254:0")


def test_a_container_reading_nfs_is_counted_over_its_inits_session(tmp_path: Path) -> None:
    """io.stat counts block devices only: on the lab a container's 32 MiB read of the NFS share moved
    its io.stat by 0.2 MB (its programs, from vda) and its init's read_bytes by all of it."""
    proc = container_group(tmp_path, "700\n", io_stat="cgroup-v2-io-stat-kernel-doc.txt")
    reads = engine_reads(700, "cgroup", block_volume=False, proc_root=proc)  # io.stat never read
    assert (reads["scope"], reads["read_bytes"]) == ("session", 4096 + 90430464)
    assert reads["fallback"].startswith("io.stat counts block devices only, and the volume is NFS")


def test_a_container_on_a_host_without_io_stat_is_counted_over_its_inits_session(tmp_path: Path) -> None:
    """cgroup v1 or hybrid hosts (the io controller on v1 blkio): no io.stat, and the record says so."""
    proc = container_proc(tmp_path, "cgroup2")
    (tmp_path / "cgroup" / "libpod_parent" / "libpod-ab").mkdir(parents=True)  # v2 group, no io controller
    reads = engine_reads(700, "cgroup", proc_root=str(proc))
    assert (reads["scope"], reads["read_bytes"], reads["processes"]) == ("session", 4096 + 90430464, 2)
    assert "has no io.stat" in reads["fallback"]
    assert "container's init 700" in reads["fallback"]
    no_v2 = container_proc(tmp_path / "v1", "tmpfs")  # no cgroup2 mount at all
    assert engine_reads(700, "cgroup", proc_root=str(no_v2))["scope"] == "session"


def test_one_wording_for_every_way_a_read_is_not_cold() -> None:
    short = Counts(
        device_read_bytes=10 * MIB,
        device_written_bytes=0,
        engine_read_bytes=None,
        counted_on="nvme2c1n1+nvme2c2n1",
    )
    assert cold_reason(short, needed_bytes=100 * MIB, what="restore", caches_dropped=False, engines=True) == (
        "page cache not dropped before the restore; not cold: nvme2c1n1+nvme2c2n1 read 10485760 B of the "
        "104857600 B the restore needed (10% < 90%); the engine's read counters could not be read "
        "(/proc/<pid>/io or its cgroup io.stat)"
    )
    nothing = Counts(None, None, None, counted_on="no counter")
    assert "nothing can prove the read cold" in (
        cold_reason(nothing, needed_bytes=1, what="read", caches_dropped=True) or ""
    )


def _proc(root: Path, diskstats: str) -> Path:
    proc = root / "proc"
    proc.mkdir(exist_ok=True)
    (proc / "diskstats").write_text((RECORDED / diskstats).read_text())
    return proc


# -- this machine's real parts -----------------------------------------------------------------

CHILD_READS = """
import mmap, os, sys, time
path, go, done = sys.argv[1], sys.argv[2], sys.argv[3]
if os.fork() == 0:  # a child of the leader does the I/O, as vLLM's EngineCore does
    while not os.path.exists(go):
        time.sleep(0.01)
    buf = mmap.mmap(-1, 1 << 20)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    for i in range(8):
        os.preadv(fd, [buf], i << 20)
    os.close(fd)
    open(done, "w").close()
    time.sleep(60)
time.sleep(60)
"""


def test_an_engines_reads_are_summed_over_its_session_not_only_its_leader(tmp_path: Path) -> None:
    data = tmp_path / "weights.bin"
    data.write_bytes(os.urandom(8 * MIB))
    os.sync()
    if resolve(str(tmp_path)).kind == "none":
        pytest.skip(f"{tmp_path} has no block device (tmpfs): O_DIRECT reads are not counted there")
    go, done = tmp_path / "go", tmp_path / "done"
    leader = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(CHILD_READS), str(data), str(go), str(done)],
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(session_members(leader.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        before, leader_before = engine_reads(leader.pid, "session"), process_read_bytes(leader.pid) or 0
        go.touch()
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert done.exists(), "the child never finished its reads"
        after = engine_reads(leader.pid, "session")
        assert (before["processes"], after["processes"]) == (2, 2)
        assert after["read_bytes"] - before["read_bytes"] >= 8 * MIB  # the child's reads are the engine's
        leader_reads = (process_read_bytes(leader.pid) or 0) - leader_before
        assert leader_reads < 8 * MIB  # the leader alone never saw them
    finally:
        os.killpg(leader.pid, 9)
        leader.wait()


def test_the_counter_probe_moves_this_disks_counters(tmp_path: Path) -> None:
    volume = resolve(str(tmp_path))
    if volume.kind == "none":
        pytest.skip(f"{tmp_path} has no block device (tmpfs)")
    result = probe(volume, str(tmp_path), mib=16, scratch=True)
    assert result["ok"], result["reason"]
    assert result["counts"]["device_read_bytes"] >= 16 * MIB
    assert not list(tmp_path.iterdir())  # its own file is gone


def test_the_probe_says_why_a_volume_without_counters_cannot_be_measured() -> None:
    shm = Path("/dev/shm")
    volume = resolve(str(shm))
    assert (volume.kind, volume.carriers) == ("none", ())
    result = probe(volume, str(shm), mib=4, scratch=True)
    assert not result["ok"]
    assert "tmpfs" in result["reason"] or "O_DIRECT" in result["reason"]


def test_a_snapshot_reads_every_counter_of_the_volume_and_the_engines(tmp_path: Path) -> None:
    volume = resolve(str(tmp_path))
    log = tmp_path / "engine.log"
    log.write_text("one\ntwo\n")
    engine = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        snap = snapshot(volume, engines=((engine.pid, "session"),), count_lines=(str(log),))
    finally:
        engine.kill()
        engine.wait()
    assert snap["lines"] == {str(log): 2}
    assert snap["engines"][0]["processes"] == 1
    assert snap["mem_total_bytes"] > snap["cached_bytes"] > 0
    if volume.carriers:
        assert set(snap["devices"]) == set(volume.carriers)


def test_a_window_names_the_hosts_busiest_readers(tmp_path: Path) -> None:
    """A reader asked who the "other reader" of a shared device was: kvgate counted bytes, not processes.
    A real process reading 32 MiB with O_DIRECT between two snapshots is named with what it read."""
    if resolve(str(tmp_path)).kind == "none":
        pytest.skip(f"{tmp_path} has no block device (tmpfs)")
    data = tmp_path / "data"
    data.write_bytes(os.urandom(32 * MIB))
    read = textwrap.dedent(f"""
        import mmap, os, sys, time
        fd, buf = os.open({str(data)!r}, os.O_RDONLY | os.O_DIRECT), mmap.mmap(-1, 1 << 20)
        while os.readv(fd, [buf]):
            pass
        print("read", flush=True)
        time.sleep(60)
    """)
    before = snapshot(None)
    with subprocess.Popen([sys.executable, "-c", read], stdout=subprocess.PIPE, text=True) as reader:
        try:
            assert reader.stdout is not None
            assert reader.stdout.readline() == "read\n"
            after = snapshot(None)
        finally:
            reader.kill()
    counts = Counts.between(before, after)
    everyone = busiest(before["readers"], after["readers"], most=10_000)  # another busy process may read more
    name = Path(sys.executable).name[:15]  # the kernel's comm: the name it was run as, at most 15 characters
    assert any(r.startswith(f"{name} (pid {reader.pid}) 0.03") for r in everyone), everyone
    assert counts.busiest_readers == everyone[:3]  # the window names the three that read most
    assert "the host's busiest readers of any device: " in counts.host_load
