"""An engine's reads in a container on the lab's volumes, counted the two ways kvgate relies on.

kvgate proves a restore cold by the engine's own bytes (for an engine in a container: its cgroup's
``io.stat``, else the session of the container's init) beside the bytes the volume's devices moved
(for a native multipath head: its paths). This machine's io controller is on cgroup v1, so only a
guest's kernel (cgroup v2, systemd, podman as a site runs it) can hold the two side by side.

The container is the guest's own userland (a root of symlinks imported as an image, /usr and /etc
mounted read-only) with a volume mounted at /kv: the NVMe/TCP head, then the NFS share; its init
waits for a start file and then reads a file there, as an engine's process tree restores its KV.
A reader, where test_lab_engine.py runs an engine profile: the same accounting, at any size.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from labfixture import lab_vm  # noqa: F401 (the session fixture `lab`)
from labkvgate import GUEST_ROOT_IMAGE, IMAGE, INVENTORY

from kvgate.configuration.gateconfig import load_config
from kvgate.probes.evidence import Counts
from kvgate.probes.hostevidence import HostEvidence
from kvgate.transport import connect
from lab import labctl
from lab.guests import CLIENT

pytestmark = pytest.mark.timeout(1800)  # the first lab test waits for the lab to boot

MIB = 64
# the container's init: the engine's process tree, reading its tier once told to
ENGINE = "while [ ! -e /kv/go ]; do sleep 0.2; done; cat /kv/chunk >/dev/null; echo restored; sleep 600"
# the candidate volume (the NVMe/TCP head, counted on its paths) and the baseline (the NFS share)
VOLUMES = {"array": "/mnt/array/kvgate/container-reads", "nfs": "/mnt/nfs/kvgate/container-reads"}


def on_client(command: str, timeout: float = 300) -> str:
    done = labctl.ssh(CLIENT, command, timeout=timeout)
    assert done.returncode == 0, f"{command}: {done.stderr}"
    return done.stdout


@pytest.fixture(params=sorted(VOLUMES))
def engine(request: pytest.FixtureRequest, lab: dict[str, object]) -> Iterator[tuple[str, str, int]]:
    """A container on the client, its init waiting to read MIB MiB of a volume: where, its id, init's pid."""
    kv = VOLUMES[request.param]
    on_client(GUEST_ROOT_IMAGE)
    on_client(f"mkdir -p {kv} && rm -f {kv}/go && head -c {MIB}M /dev/urandom > {kv}/chunk && sync")
    cid = on_client(
        f"podman run -d --rm --network none -v /usr:/usr:ro -v /etc:/etc:ro -v {kv}:/kv "
        f"{IMAGE} sh -c '{ENGINE}'"
    ).strip()
    try:
        yield kv, cid, int(on_client(f"podman inspect -f '{{{{.State.Pid}}}}' {cid}"))
    finally:
        on_client(f"podman rm -f -t 0 {cid} >/dev/null; rm -rf {kv}")


def restore(kv: str, cid: str, pid: int) -> tuple[Counts, dict[str, Any]]:
    """Drop the client's cache, let the container read its chunk; the counts and the engine's record."""
    inv = load_config(INVENTORY).inventory.inventory
    ex = connect(CLIENT.name, inv.hosts[CLIENT.name])
    try:
        he = HostEvidence(ex, sudo=True)
        volume = he.resolve(kv)
        assert he.drop().dropped
        before = he.snapshot(volume, engines=((pid, "cgroup"),))
        on_client(f"touch {kv}/go")
        deadline = time.monotonic() + 300
        while "restored" not in on_client(f"podman logs {cid} 2>&1"):
            assert time.monotonic() < deadline, "the container did not read its chunk in 300 s"
            time.sleep(1)
        after = he.snapshot(volume, engines=((pid, "cgroup"),))
    finally:
        ex.close()
    return Counts.between(before, after), after["engines"][0]


def test_a_containers_reads_are_its_own_bytes_of_the_volume_beside_the_volumes_counters(
    engine: tuple[str, str, int],
) -> None:
    kv, cid, pid = engine
    counts, record = restore(kv, cid, pid)
    want = MIB << 20
    print(kv, counts, record)  # recorded in docs/lab-vm.md
    assert want <= counts.device_read_bytes <= want * 1.1, counts  # type: ignore[operator]
    if kv.startswith("/mnt/nfs"):
        # io.stat never sees NFS: the engine is counted over its init's session, which does
        assert counts.counted_on == "NFS server reads of /mnt/nfs"
        assert record["fallback"].startswith("io.stat counts block devices only, and the volume is NFS")
        assert want <= counts.engine_read_bytes <= want * 1.1, counts  # type: ignore[operator]
    else:
        # the paths carry the head's I/O in diskstats; io.stat counts it on the head itself
        assert counts.counted_on == "nvme0c0n1+nvme0c1n1"
        assert record["scope"] == "cgroup"
        assert record["where"].startswith("/machine.slice/libpod-")  # podman's systemd cgroup manager
        head = on_client("cat /sys/class/block/nvme0n1/dev").strip()
        assert record["per_device"][head] >= want
        assert counts.engine_read_bytes == want, counts  # the volume's bytes, not the root disk's
        assert counts.engines_counted[0].endswith("io.stat, its reads of the volume's devices")
