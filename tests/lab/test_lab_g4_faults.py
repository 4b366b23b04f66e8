"""G4's health deltas across real faults on the QEMU lab's kernels (issue 26's fault matrix).

G4 takes health snapshots at a soak's start, every ``snapshot_s`` and at its end
(kvgate.orchestration.g4.health); here the same snapshots are taken over SSH before, during
and after a fault made on the lab, with the kernel log of that span, and judged with the G4
profile's limits. No engine soaks meanwhile (a whole soak through a fault is test_lab_g4_engine.py's):
the snapshots, the kernel log and the integrity load do not depend on one.

- A SMART critical warning: the array guest's drives are QEMU's emulated NVMe controllers,
  whose ``smart_critical_warning`` property QEMU itself reports in the drive's SMART log
  (qom-set over QMP). The kernel's nvmet cannot raise one: its SMART log page carries only
  the I/O counters, so the warning is raised on the drive under the target, not on the target.
- An NVMe-oF path down and back: the array stops serving port 2, then serves it again (the
  candidate's optimized path down under a whole soak, engine and integrity load included:
  test_lab_g4_engine.py).
- I/O errors under the NVMe-oF head: the array's backing device of a namespace swapped live to
  dm-flakey; G4's integrity load on the client's multipath head reads them as a real site would
  see a failing array, through nvmet, the fabric and the host's retries.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from labfixture import lab_vm  # noqa: F401 (the session fixture `lab`)
from labkvgate import INVENTORY, set_up
from test_lab_g1 import NQN, port_down

from kvgate.base.criteria import Inputs, Judgement, Verdict
from kvgate.configuration.gate_profiles.g4 import load_g4_profile
from kvgate.configuration.gateconfig import load_config
from kvgate.configuration.inventory import Volume
from kvgate.orchestration.g4 import health, integrity
from kvgate.orchestration.g4.outcome import SoakResult
from kvgate.orchestration.g4.plan import criteria, g4_check
from kvgate.probes import agentctl
from kvgate.probes.scratch import checked
from kvgate.transport import connect
from lab import labctl, qemu
from lab.guests import ARRAY, links

pytestmark = pytest.mark.timeout(1800)  # the first lab test waits for the lab to boot
SMOKE = load_g4_profile("smoke")  # the lab inventory's scale
WARNING = 4  # SMART critical warning bit 2: NVM subsystem reliability degraded


class Snapshots:
    """G4's health snapshots of one lab host, taken when asked; the kernel log of their span."""

    def __init__(self, host: str) -> None:
        inv = load_config(INVENTORY).inventory.inventory
        self.host, self.ex, self.since = host, connect(host, inv.hosts[host]), time.time()
        self.taken: list[dict[str, Any]] = []

    def take(self) -> None:
        self.taken.append(health.snapshot(self.ex, host=self.host, sudo=False))

    def judged(self) -> tuple[dict[str, Judgement], dict[str, Any]]:
        """Each health check's judgement, as G4 makes it from these snapshots and this log; the log."""
        log = health.kernel(self.ex, since=self.since, until=time.time(), sudo=False)
        values, said = health.judged(self.taken, log)
        result = SoakResult("h", "d", None, None)  # type: ignore[arg-type]  # only its inputs are judged
        result.measurements, result.blocked = health.measurements(values, log, (), said), said
        crit = dict(criteria(SMOKE))
        return {
            key: g4_check("h", "d", f"soak[d].{key}", key, crit[key], ruled=None).evaluate(result.inputs(key))
            for key in health.KEYS
        }, log


@contextmanager
def snapshots(host: str) -> Iterator[Snapshots]:
    snaps = Snapshots(host)
    try:
        yield snaps
    finally:
        snaps.ex.close()


def set_warning(value: int) -> None:
    device = "/machine/peripheral/nvmedev1"  # the array's second drive
    qemu.qmp(ARRAY, labctl.run_dir(), "qom-set", path=device, property="smart_critical_warning", value=value)


def test_a_smart_critical_warning_raised_mid_soak_fails_the_health_delta(lab: dict[str, object]) -> None:
    with snapshots("lab-array") as snaps:
        snaps.take()  # the soak's start
        set_warning(WARNING)
        try:
            snaps.take()  # mid-soak (a warning that clears by the end still counts: tests/unit)
            checks, _ = snaps.judged()
        finally:
            set_warning(0)

    warning = checks["nvme-critical-warning"]
    print(f"\nSMART critical warning: {warning.verdict.name}: {warning.condition}")
    assert warning.verdict is Verdict.FAIL
    assert "nvme_critical_warning_max=4" in warning.condition
    mid = [d["critical_warning"] for d in snaps.taken[1]["smart"].values()]
    assert sorted(mid) == [0, 0, WARNING]  # the drive itself reported it, in its SMART log
    assert checks["nvme-media-errors"].verdict is Verdict.PASS  # only the warning moved


def test_an_nvmeof_path_down_and_back_is_counted_and_judged_by_the_profile(lab: dict[str, object]) -> None:
    with snapshots("lab-client") as snaps:
        snaps.take()
        with port_down(2):
            snaps.take()
        snaps.take()
        checks, log = snaps.judged()

    paths, kernel = checks["paths"], checks["kernel-log"]
    print(
        f"\npath flap: {paths.verdict.name}: {paths.condition}; kernel log {kernel.verdict.name}: "
        f"{len(log.get('lines', []))} line(s), first {log.get('lines', [{}])[:1]}"
    )
    assert paths.verdict is Verdict.FAIL  # smoke allows no path change (max_path_changes: 0)
    assert health.judged(snaps.taken, log)[0]["paths"] >= 2  # down, then back
    assert set(snaps.taken[0]["paths"].values()) == set(snaps.taken[-1]["paths"].values())  # back as it was
    assert kernel.verdict is Verdict.FAIL  # the kernel logged the path's loss and its reconnection


# I/O errors under the NVMe-oF head: on the array, a loop file under a device-mapper device (linear
# for now) exported as its own subsystem on both ports; on the client, its multipath head formatted
# and mounted. The fault is the array's: its table swapped live to dm-flakey, every I/O failing.
FLAKEY_NQN = f"{NQN}-flakey"
FLAKEY_IMG, FLAKEY_MNT = "/var/tmp/kvgate-flakey.img", "/mnt/kvgate-flakey"
CFG = "/sys/kernel/config/nvmet"
ARRAY_FLAKEY_UP = (
    f"truncate -s 256M {FLAKEY_IMG} && L=$(losetup -f --show {FLAKEY_IMG}) && "
    'dmsetup create kvflakey --table "0 $(blockdev --getsz $L) linear $L 0" && '
    f"S={CFG}/subsystems/{FLAKEY_NQN} && mkdir $S && echo 1 > $S/attr_allow_any_host && "
    "mkdir $S/namespaces/1 && echo /dev/mapper/kvflakey > $S/namespaces/1/device_path && "
    "echo 1 > $S/namespaces/1/enable && "
    f"for p in 1 2; do ln -s $S {CFG}/ports/$p/subsystems/{FLAKEY_NQN}; done"
)
CLIENT_FLAKEY_UP = (
    f"for a in {links()[0].subnet}.1 {links()[1].subnet}.1; do "
    f"nvme connect -t tcp -a $a -s 4420 -n {FLAKEY_NQN} --keep-alive-tmo=30 || exit 1; done; "
    "for i in $(seq 50); do for b in /sys/block/nvme*n1; do case ${b##*/} in *c*) continue ;; esac; "
    f"grep -qx {FLAKEY_NQN} $b/device/subsysnqn 2>/dev/null && D=/dev/${{b##*/}}; done; "
    f'[ -n "$D" ] && break; sleep 0.2; done; '
    f'[ -n "$D" ] && mkfs.ext4 -q $D && mkdir -p {FLAKEY_MNT} && mount $D {FLAKEY_MNT}'
)
SWAP_TABLE = (  # on the array, the same device, its table swapped live: %s is the target and its arguments
    f"L=$(losetup -j {FLAKEY_IMG} | cut -d: -f1) && S=$(blockdev --getsz /dev/mapper/kvflakey) && "
    'dmsetup suspend kvflakey && dmsetup load kvflakey --table "0 $S {} $L 0{}" && dmsetup resume kvflakey'
)
CLIENT_FLAKEY_DOWN = f"umount -l {FLAKEY_MNT}; nvme disconnect -n {FLAKEY_NQN}"
ARRAY_FLAKEY_DOWN = (
    f"rm -f {CFG}/ports/*/subsystems/{FLAKEY_NQN}; rmdir {CFG}/subsystems/{FLAKEY_NQN}/namespaces/1 "
    f"{CFG}/subsystems/{FLAKEY_NQN}; dmsetup remove --force kvflakey; "
    f"for l in $(losetup -j {FLAKEY_IMG} | cut -d: -f1); do losetup -d $l; done; rm -f {FLAKEY_IMG}"
)
SMALL = {"cycle_s": 1, "rate_bytes_per_s": 32 << 20, "fio_bytes": 2 << 20, "checkpoint_bytes": 1 << 20}
SMALL |= {"kv_chunk_bytes": 256 << 10, "kv_chunks": 4, "io_bytes": 64 << 10}


@pytest.fixture
def flakey(lab: dict[str, object]) -> Iterator[None]:
    """A scratch volume on the client over an NVMe-oF namespace whose backing device can be made to fail."""
    with set_up(ARRAY_FLAKEY_UP, CLIENT_FLAKEY_UP, CLIENT_FLAKEY_DOWN, ARRAY_FLAKEY_DOWN):
        try:
            yield
        finally:  # the table back to linear first: the client's pending I/O completes, then it goes
            labctl.ssh(ARRAY, SWAP_TABLE.format("linear", ""))


def cycles_seen(ex: Any, job: agentctl.RemoteJob, offset: int) -> tuple[int, int]:
    events, offset, _ = agentctl.poll(ex, job, offset)
    return sum(1 for e in events if e["event"] == "cycle"), offset


def test_io_errors_under_the_nvmeof_head_fail_naming_place_and_time(flakey: None) -> None:
    inv = load_config(INVENTORY).inventory.inventory
    ex = connect("lab-client", inv.hosts["lab-client"])
    soak_dir = "/var/tmp/kvgate-flakey-soak"
    try:
        ex.run("rm -rf %s && mkdir -p %s", soak_dir, soak_dir, check=True)
        vol = Volume(path=FLAKEY_MNT, kind="candidate", scratch=True)
        spec = integrity.spec(SMOKE, soak_state_dir=soak_dir, duration_s=600) | SMALL
        target = checked(ex, vol, f"{FLAKEY_MNT}/kvgate-g4/lab-client-run/tiny/integrity")
        t0 = time.time()
        job = integrity.start(ex, target, spec, python="python3")
        seen, offset = 0, 0
        while seen < 1:  # a clean cycle first
            n, offset = cycles_seen(ex, job, offset)
            seen += n
            time.sleep(1)
        # the guest stamps what it finds by its own clock (TCG's drifts): the fault's time on that clock
        before = time.time()
        guest_now = float(ex.run("date %s", "+%s.%N", check=True).stdout)
        skew = guest_now - (before + time.time()) / 2
        failed_at = time.time() + skew  # the fault starts inside the swap: an I/O may fail before ssh returns
        labctl.ssh(ARRAY, SWAP_TABLE.format("flakey", " 0 3600")).check_returncode()  # every I/O fails
        time.sleep(10)
        ex.run("echo 0 > %s/exit_code", soak_dir, check=True)  # the soak ended: the load stops
        followed = integrity.follow(ex, job, timeout_s=300, poll_s=1)
    finally:
        ex.run("rm -rf %s", soak_dir)
        ex.close()
    windows = [{"index": 0, "start_unix_s": t0, "end_unix_s": time.time() + 60}]
    fig = integrity.figures(followed, windows, volume="array", share=32 << 20)
    crit = dict(criteria(SMOKE))["integrity-reads"]
    check = g4_check("lab-client", "tiny", "soak[tiny].integrity-reads", "integrity-reads", crit, ruled=None)
    detail = integrity.details(fig, "lab-client").get("integrity-reads", "")
    judged = check.evaluate(Inputs(integrity.measurements(fig, ()), detail=detail))

    first = fig["failures"][0]
    kinds = sorted({f["kind"] for f in fig["failures"]})
    print(
        f"\ndm-flakey: {judged.verdict.name}: {judged.condition}; {len(fig['failures'])} place(s) {kinds}, "
        f"first {first['kind']} {first['first_seen_unix_s'] - failed_at:.1f} s after the fault: {detail}"
    )
    assert judged.verdict is Verdict.FAIL
    assert "read-error" in kinds  # what was written before the fault no longer reads back
    assert failed_at - 1 <= first["first_seen_unix_s"] <= failed_at + 15, f"guest clock {skew:+.2f} s"
    assert f"host lab-client, volume array: {first['kind']} in {FLAKEY_MNT}/kvgate-g4/" in detail
    assert "first seen " in detail
