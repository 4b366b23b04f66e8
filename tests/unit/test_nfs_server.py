"""An NFS volume's server cache: dropped over SSH, outsized by the data, or the cold read is INVALID.

The client's mountstats (recorded, tests/data/recorded/evidence/procfs-mountstats-26231.txt)
prove bytes came from the server, never that the server's disks served them. The drop on
"the server" runs for real on this machine through a LocalExecutor (it is root here).
"""

from __future__ import annotations

from typing import Any

import pytest

from kvgate.base.errors import ConfigError
from kvgate.base.units import GiB
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.inventory import load
from kvgate.configuration.inventory.schema import Inventory, NfsServer
from kvgate.orchestration.preflight.measure import Probe
from kvgate.probes.evidence.blockdev import Resolved
from kvgate.probes.evidence.window import Counts
from kvgate.probes.fio.cold import ColdProof
from kvgate.probes.hostevidence import CacheDrop, HostEvidence
from kvgate.probes.nfs_server import ServerCache
from kvgate.probes.workload_results import cold_reason
from kvgate.record.store import RunStore
from kvgate.transport.local import LocalExecutor

NFS = Resolved(None, (), "nfs", "nfs4", "/mnt/nfs", "filer:/export")
GB = 10**9


def inventory(nfs_server: dict[str, Any] | None) -> dict[str, Any]:
    vol: dict[str, Any] = {"path": "/mnt/nfs/kvgate", "kind": "baseline", "scratch": True}
    if nfs_server is not None:
        vol["nfs_server"] = nfs_server
    return {
        "site": "s",
        "hosts": {"client": {"roles": ["storage-client"]}, "filer": {"transport": "local", "sudo": True}},
        "volumes": {"nfs": vol},
    }


def test_an_undeclared_server_makes_the_cold_read_invalid_naming_the_fields() -> None:
    cold = ServerCache("nfs", None, None).make_cold(data_bytes=8 * GB)
    assert not cold.controlled
    assert cold.reason is not None
    assert cold.reason.startswith("NFS server cache not controlled")
    assert "volumes.nfs.nfs_server" in cold.reason
    assert "ram_gib" in cold.reason


def test_a_data_set_larger_than_the_servers_ram_is_cold_without_a_drop() -> None:
    cache = ServerCache("nfs", NfsServer(ram_gib=4), None)
    assert cache.make_cold(data_bytes=5 * GiB).controlled
    small = cache.make_cold(data_bytes=3 * GiB)
    assert not small.controlled
    assert "fits the server's 4 GiB" in small.how


def test_a_named_server_host_has_its_page_cache_dropped_for_real() -> None:
    inv = Inventory.model_validate(inventory({"host": "filer"}))
    ex = LocalExecutor("filer")
    cold = ServerCache.of(inv, "nfs", {"filer": ex, "client": ex}).make_cold(data_bytes=GB)
    assert cold.controlled, cold.how
    assert cold.how == "dropped on filer (root)"


def test_a_server_host_without_root_or_sudo_is_not_controlled() -> None:
    he = HostEvidence(LocalExecutor("filer"), sudo=False)
    he._root = False  # the SSH user is not root on the server and may not sudo
    cold = ServerCache("nfs", NfsServer(host="filer"), he).make_cold(data_bytes=GB)
    assert not cold.controlled
    assert "not root and sudo not allowed" in (cold.reason or "")


class ZfsFiler(HostEvidence):
    """A server whose drop left ``arc`` bytes of file data in its ZFS ARC (no ZFS on this machine)."""

    def __init__(self, arc: int) -> None:
        super().__init__(LocalExecutor("filer"))
        self.arc = arc

    def drop(self) -> CacheDrop:
        return CacheDrop(True, "root", 40 * GB, GB, arc_data_after_bytes=self.arc)


def test_a_zfs_arc_left_holding_the_data_set_is_not_cold() -> None:
    held = ServerCache("nfs", NfsServer(host="filer"), ZfsFiler(3 * GB)).make_cold(data_bytes=10 * GB)
    assert not held.controlled
    assert "ZFS ARC still holds 3.00 GB of file data, more than 10% of the 10.00 GB data set" in held.how
    assert "primarycache=metadata" in held.how
    emptied = ServerCache("nfs", NfsServer(host="filer"), ZfsFiler(GB // 2)).make_cold(data_bytes=10 * GB)
    assert emptied.controlled
    assert emptied.how == "dropped on filer (root; ZFS ARC data left 0.50 GB)"


def test_the_server_host_must_be_in_the_inventory(tmp_path: Any) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text(
        "site: s\nhosts: {client: {roles: [storage-client]}}\n"
        "volumes: {nfs: {path: /mnt/nfs/kvgate, kind: baseline, scratch: true, nfs_server: {host: filer}}}\n"
    )
    with pytest.raises(ConfigError, match=r"volumes\.nfs\.nfs_server\.host: host 'filer' is not defined"):
        load(path)


def test_a_fio_read_on_nfs_carries_the_servers_cache_in_its_proof() -> None:
    counts = Counts(8 * GB, 0, None, "NFS server reads of /mnt/nfs")  # the client read it all from the server
    proof = ColdProof(NFS, counts, 8 * GB, None, True, 8 * GB, 64 * GB)
    assert proof.invalid_reason is None  # the client's side alone is proven
    uncontrolled = ServerCache("nfs", None, None).make_cold(data_bytes=8 * GB)
    unproven = ColdProof(NFS, counts, 8 * GB, None, True, 8 * GB, 64 * GB, uncontrolled)
    assert unproven.invalid_reason == uncontrolled.reason
    assert unproven.to_json()["nfs_server_cache"] == uncontrolled.how


def test_agent_reads_on_nfs_are_cold_when_the_server_dropped_or_their_data_outsizes_it() -> None:
    cold = {
        "volume": NFS.to_json(),
        "counts": Counts(2 * GB, 2 * GB, None, "NFS server reads of /mnt/nfs").to_json(),
        "drop_caches": {"requested": True, "done": True},
        "server_drop": {"controlled": True, "how": "dropped on filer (root)"},
        "expected_read_bytes": 2 * GB,
    }
    assert cold_reason(cold, {}, None) is None  # the controller dropped the server's cache
    refused = {**cold, "server_drop": {"controlled": False, "how": "drop on filer: permission denied"}}
    assert (
        cold_reason(refused, {}, None) == "NFS server cache not controlled: drop on filer: permission denied"
    )
    undropped = {**cold, "server_drop": None}  # the spec asked for no drop: only the data's size counts
    declared = ServerCache("nfs", NfsServer(host="filer", ram_gib=1), None)
    assert cold_reason(undropped, {}, declared) is None  # 2 GB > 1 GiB of server RAM
    why = cold_reason(undropped, {}, ServerCache("nfs", NfsServer(host="filer", ram_gib=256), None))
    assert why is not None
    assert "no drop asked and the 2.0 GB data set is not larger" in why
    assert "volumes.nfs.nfs_server.ram_gib" in why
    local = {**cold, "volume": Resolved("vda", ("vda",), "disk", "ext4", "/", "/dev/vda").to_json()}
    assert cold_reason(local, {}, None) is None  # a block device needs no server


@pytest.mark.parametrize(
    ("server", "value", "said"),
    [
        # every read the gates plan outsizes 1 MiB of server RAM, and the host's cache is dropped
        ({"host": "filer", "ram_gib": 0.001}, "dropped", None),
        ({"ram_gib": 0.001}, "ram_gib declared", None),
        # a drop covers every read, the agent's too (between its write and its read-back)
        ({"host": "filer"}, "dropped", None),
        ({"ram_gib": 256}, None, "≤ the server's 256 GiB of RAM"),
        (None, None, "volumes.nfs.nfs_server"),
    ],
)
def test_preflight_says_whether_the_gates_will_control_the_server_cache(
    tmp_path: Any, server: dict[str, Any] | None, value: str | None, said: str | None
) -> None:
    inv = Inventory.model_validate(inventory(server))
    ex = LocalExecutor("filer")
    store = RunStore.create(tmp_path, site="s", gate="preflight", meta={})
    probe = Probe(ex, in_memory(inv), "client", store, print, {"client": ex, "filer": ex})
    m = probe.server_cache("nfs", ())
    assert m.value == value, m.invalid_reason
    assert (m.invalid_reason is None) == (said is None)
    assert said is None or said in (m.invalid_reason or "")


def test_preflight_holds_a_zfs_arc_residue_against_the_smallest_planned_read(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(HostEvidence, "drop", lambda self: ZfsFiler(2 * GB).drop())
    inv = Inventory.model_validate(inventory({"host": "filer"}))
    ex = LocalExecutor("filer")
    store = RunStore.create(tmp_path, site="s", gate="preflight", meta={})
    m = Probe(ex, in_memory(inv), "client", store, print, {"client": ex, "filer": ex}).server_cache("nfs", ())
    assert m.value is None
    # 2 GB is more than a tenth of G2's smallest read at full scale (a 16 GiB sweep file)
    assert "ZFS ARC still holds 2.00 GB of file data, more than 10% of the 17.18 GB data set" in (
        m.invalid_reason or ""
    ), m.invalid_reason
