"""NVMe/RDMA on the lab, as the seed's lab runs NVMe-oF over RoCEv2: Soft-RoCE (rdma_rxe) on both
guests' lab links, the array exporting a subsystem over RDMA on two ports, the client connecting
both paths. G1 reads it with a BOM that says RDMA, and the counter probe counts the RDMA head on
its paths.

What rxe cannot show is a lossless fabric: PFC, ECN/DCQCN and switch buffers (`roce:` in a BOM)
need a real RoCE NIC, so this BOM leaves `roce:` out. The subsystem is the test's own (a file on
the array, its own NQN), set up and torn down here: the lab's NVMe/TCP paths are not touched.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from labfixture import lab_vm  # noqa: F401 (the session fixture `lab`)
from labkvgate import INVENTORY, g1_checks, set_up

from kvgate.base.criteria import Verdict
from kvgate.configuration.gateconfig import load_config
from kvgate.probes.hostevidence import HostEvidence
from kvgate.transport import connect
from lab import labctl
from lab.guests import CLIENT, links

pytestmark = pytest.mark.timeout(1800)  # the first lab test waits for the lab to boot

RDMA_NQN = f"{labctl.NQN}-rdma"
CFG = "/sys/kernel/config/nvmet"
BACKING = "/var/tmp/kvgate-rdma.img"
MOUNT = "/mnt/kvgate-rdma"
SUBNETS = [link.subnet for link in links()]
# rxe on each lab link's NIC (found by its address), named after the link
RXE_UP = " && ".join(
    f"{{ rdma link show rxe{i}/1 >/dev/null 2>&1 || "
    f"rdma link add rxe{i} type rxe netdev $(ip -o -4 addr show to {net}.0/24 | awk '{{print $2}}'); }}"
    for i, net in enumerate(SUBNETS, 1)
)
ARRAY_UP = (
    f"modprobe nvmet-rdma && {RXE_UP} && truncate -s 256M {BACKING} && "
    f"S={CFG}/subsystems/{RDMA_NQN} && mkdir $S && echo 1 > $S/attr_allow_any_host && "
    f"N=$S/namespaces/1 && mkdir $N && echo {BACKING} > $N/device_path && echo 1 > $N/enable"
    + "".join(
        f" && P={CFG}/ports/{i + 2} && mkdir $P && echo rdma > $P/addr_trtype && echo ipv4 > $P/addr_adrfam"
        f" && echo {net}.1 > $P/addr_traddr && echo 4420 > $P/addr_trsvcid"
        f" && ln -s $S $P/subsystems/{RDMA_NQN}"
        for i, net in enumerate(SUBNETS, 1)
    )
)
CLIENT_UP = (
    f"modprobe nvme-rdma && {RXE_UP} && "
    + " && ".join(
        f"nvme connect -t rdma -a {net}.1 -s 4420 -n {RDMA_NQN} --keep-alive-tmo=30 >/dev/null"
        for net in SUBNETS
    )
    + " && for i in $(seq 50); do for b in /sys/block/nvme*n1; do case ${b##*/} in *c*) continue ;; esac; "
    f"grep -qx {RDMA_NQN} $b/device/subsysnqn 2>/dev/null && D=/dev/${{b##*/}}; done; "
    f'[ -n "$D" ] && break; sleep 0.2; done; [ -n "$D" ] && mkfs.ext4 -q $D && mkdir -p {MOUNT} && '
    f"mount $D {MOUNT} && mkdir -p {MOUNT}/kvgate && echo $D"
)
CLIENT_DOWN = f"umount {MOUNT}; nvme disconnect -n {RDMA_NQN}; rdma link delete rxe1; rdma link delete rxe2"
ARRAY_DOWN = (
    f"rm -f {CFG}/ports/3/subsystems/{RDMA_NQN} {CFG}/ports/4/subsystems/{RDMA_NQN}; "
    f"rmdir {CFG}/ports/3 {CFG}/ports/4 {CFG}/subsystems/{RDMA_NQN}/namespaces/1; "
    f"rmdir {CFG}/subsystems/{RDMA_NQN}; "
    f"rm -f {BACKING}; rdma link delete rxe1; rdma link delete rxe2"
)
# the client's BOM for this array: RDMA NICs and NVMe/RDMA, two live paths, both optimized
RDMA_BOM = {
    "nics": [{"name": "^enp0s[34]$", "count": 2, "rdma": True}],  # the two lab links (not slirp's enp0s2)
    "nvmeof": {
        "subsystems": 1,
        "transport": "rdma",
        "min_live_paths": 2,
        "min_optimized_paths": 2,
        "iopolicy": "numa",
        "persistent": False,
        "model": "^Linux$",  # nvmet's model when the subsystem sets none
        "capacity_gb": 0.26,
        # not judged here: the kernel log since boot holds the lab's earlier fault tests (a port
        # cut, I/O errors); test_lab_g1 judges it on a fresh lab, and a disconnect is none (unit)
        "max_transport_errors": None,
    },
}


@pytest.fixture(scope="module")
def rdma_head(lab: dict[str, object]) -> Iterator[str]:
    """The client's multipath head of the array's RDMA subsystem, mounted at MOUNT."""
    with set_up(ARRAY_UP, CLIENT_UP, CLIENT_DOWN, ARRAY_DOWN) as head:
        yield head


def rdma_inventory(tmp: Path) -> Path:
    """The lab's inventory with the client's BOM for the RDMA array."""
    doc = yaml.safe_load(INVENTORY.read_text())
    doc["hosts"][CLIENT.name]["expect"] |= RDMA_BOM
    path = tmp / "lab-rdma.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_g1_reads_nvme_over_rdma_on_soft_roce(rdma_head: str, tmp_path: Path) -> None:
    checks = g1_checks(CLIENT.name, "nics", "rdma", "nvme", "nvmeof", inventory=rdma_inventory(tmp_path))
    wanted = [c for c in checks if c.startswith(("nic[", "nvmeof."))]
    not_passed = {
        c: f"{checks[c].verdict.name}: {checks[c].condition}"
        for c in wanted
        if checks[c].verdict is not Verdict.PASS
    }
    assert not_passed == {}
    assert checks["nvmeof.live_paths"].condition.endswith("live_paths=2 ≥ 2 — nvme2 live, nvme3 live")
    print({c: checks[c].condition for c in wanted})  # recorded in docs/lab-vm.md


def test_the_counter_probe_counts_the_rdma_head_on_its_paths(rdma_head: str) -> None:
    inv = load_config(INVENTORY).inventory.inventory
    ex = connect(CLIENT.name, inv.hosts[CLIENT.name])
    try:
        probe = HostEvidence(ex, sudo=True).probe(f"{MOUNT}/kvgate", mib=16, scratch=True)
    finally:
        ex.close()
    head = rdma_head.removeprefix("/dev/")
    assert probe["volume"]["head"] == head
    assert len(probe["volume"]["carriers"]) == 2, probe["volume"]
    assert probe["counts"]["device_read_bytes"] == probe["read_bytes"] == 16 << 20, probe
