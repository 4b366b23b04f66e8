"""Preflight compares the largest cold reads the gates plan on an NFS volume with its server control.

Before, an NFS volume that declared its server's RAM (``ram_gib``) was green in preflight whatever the
gates would read on it; then every G2 read no larger than that RAM was INVALID hours later. Now each
planned read is listed against the control: a drop over SSH covers every read (fio before it runs, the
agent's workloads between their write and their read-back); without one, only a data set larger than
the RAM is cold.
"""

from __future__ import annotations

from pathlib import Path

from kvgate.configuration.gateconfig import in_memory, load_config
from kvgate.configuration.inventory import Inventory, NfsServer
from kvgate.orchestration.preflight.measure import Probe
from kvgate.orchestration.preflight.nfs_reads import planned_reads, shortfall
from kvgate.record import RunStore
from kvgate.transport.local import LocalExecutor

LAB = Path(__file__).resolve().parents[2] / "inventory" / "example-lab.yaml"


def test_the_example_labs_nfs_reads_are_listed_against_its_256_gib_filer() -> None:
    config = load_config(LAB)
    reads = {r.what: r for r in planned_reads(config, "nfs", g3_storage=True)}
    assert reads["G3 checkpoint"].size_bytes == 8 * 65_600_000_000  # R1's save: larger than the RAM
    why = shortfall(list(reads.values()), NfsServer(ram_gib=256), dropped=False)  # an appliance: RAM only
    assert why is not None
    assert "G2 fio sweep-read-1m-j16-qd1 reads 274.9 GB ≤ the server's 256 GiB of RAM" in why
    assert "G3 checkpoint" not in why
    server = config.inventory.inventory.volumes["nfs"].nfs_server
    assert server is not None
    assert server.host == "nfs-filer"  # the example names its filer: kvgate drops its cache
    assert shortfall(list(reads.values()), server, dropped=True) is None  # a drop covers every read


def nfs_lab(tmp_path: Path, ram_gib: float) -> Inventory:
    volume = {"path": str(tmp_path), "kind": "baseline", "scratch": True, "fstype": "nfs4"}
    return Inventory.model_validate(
        {
            "site": "s",
            "scale": "smoke",
            "hosts": {"h": {"transport": "local", "roles": ["storage-client"]}},
            "volumes": {"n": volume | {"nfs_server": {"ram_gib": ram_gib}}},
        }
    )


def server_cache(tmp_path: Path, ram_gib: float) -> tuple[object, str | None]:
    config, ex = in_memory(nfs_lab(tmp_path, ram_gib)), LocalExecutor()
    probe = Probe(ex, config, "h", RunStore(tmp_path / "run"), print, {"h": ex})
    m = probe.server_cache("n", ())
    ex.close()
    return m.value, m.invalid_reason


def test_preflight_passes_an_nfs_volume_only_when_every_planned_read_outsizes_its_server(
    tmp_path: Path,
) -> None:
    assert server_cache(tmp_path, ram_gib=0.01) == (
        "ram_gib declared",
        None,
    )  # 10 MiB: smoke reads are larger
    value, why = server_cache(tmp_path, ram_gib=256)
    assert value is None
    assert why is not None
    assert why.startswith("NFS server cache not controlled: 17 of 17 planned cold reads cannot be cold: ")
