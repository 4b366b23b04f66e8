"""The one scratch check: what may be written, created and removed on a host (real paths, real rm)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kvgate.configuration.inventory.schema import Volume
from kvgate.probes import agentctl
from kvgate.probes.scratch import UnsafeWrite, checked, create, refusals, remove
from kvgate.transport.local import LocalExecutor

EX = LocalExecutor()


def scratch_volume(path: Path, *, scratch: bool = True) -> Volume:
    path.mkdir(exist_ok=True)
    return Volume(path=str(path), kind="candidate", scratch=scratch)


def refused(vol: Volume, path: str) -> list[str]:
    with pytest.raises(UnsafeWrite) as err:
        checked(EX, vol, path)
    return list(err.value.reasons)


def test_a_directory_below_a_scratch_volume_is_created_and_removed_with_its_empty_parents(
    tmp_path: Path,
) -> None:
    vol = scratch_volume(tmp_path / "vol")
    d = checked(EX, vol, f"{vol.path}/kvgate-g3/run-1/dep")
    create(EX, d)
    (Path(d.path) / "tier.bin").write_bytes(b"kv")
    remove(EX, d, parents=5)  # more parents than lie inside: the volume itself stays
    assert list((tmp_path / "vol").iterdir()) == []
    assert (tmp_path / "vol").is_dir()


def test_a_symlink_out_of_the_volume_is_refused_before_anything_is_created(tmp_path: Path) -> None:
    vol = scratch_volume(tmp_path / "vol")
    (tmp_path / "outside").mkdir()
    (tmp_path / "vol" / "kvgate-g2").symlink_to(tmp_path / "outside")
    [reason] = refused(vol, f"{vol.path}/kvgate-g2/host-run")
    assert reason.endswith(f"resolves to {tmp_path}/outside/host-run, outside {vol.path} (symlink)")
    assert list((tmp_path / "outside").iterdir()) == []


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../outside/x", "contains '..': path traversal is refused"),
        ("", "is the volume directory itself"),
        ("a\nb", "contains a control character"),
    ],
)
def test_traversal_the_volume_itself_and_control_characters_are_refused(
    tmp_path: Path, name: str, reason: str
) -> None:
    vol = scratch_volume(tmp_path / "vol")
    path = f"{vol.path}/{name}" if name else vol.path
    assert reason in refused(vol, path)[0]


def test_a_volume_not_marked_scratch_is_never_written(tmp_path: Path) -> None:
    vol = scratch_volume(tmp_path / "data", scratch=False)
    [reason] = refused(vol, f"{vol.path}/kvgate")
    assert reason.startswith(f"volume {vol.path} is not marked scratch")


def test_a_volume_that_is_not_there_is_not_created_on_the_root_filesystem(tmp_path: Path) -> None:
    vol = Volume(path=str(tmp_path / "not-mounted"), kind="candidate", scratch=True)
    [reason] = refused(vol, f"{vol.path}/kvgate")
    assert reason == f"volume directory {vol.path} does not exist on localhost (not mounted?)"
    assert not (tmp_path / "not-mounted").exists()


def test_a_volume_resolving_into_a_system_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "vol").symlink_to("/etc")
    vol = Volume(path=str(tmp_path / "vol"), kind="candidate", scratch=True)
    assert refused(vol, f"{vol.path}/kvgate") == [
        f"volume {vol.path} resolves to /etc, inside the system directory /etc"
    ]
    assert refusals(vol, "/x", resolved="/x", root="/")[-1].endswith("inside the system directory /")


def test_a_directory_swapped_for_a_symlink_after_the_check_is_not_removed(tmp_path: Path) -> None:
    vol = scratch_volume(tmp_path / "vol")
    d = checked(EX, vol, f"{vol.path}/work")
    create(EX, d)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "precious").write_text("customer data")
    Path(d.path).rmdir()
    Path(d.path).symlink_to(tmp_path / "outside")  # someone else on the volume, between check and rm
    with pytest.raises(UnsafeWrite, match="changed since it was checked"):
        remove(EX, d)
    with pytest.raises(UnsafeWrite, match="changed since it was checked"):
        create(EX, d, fresh=True)
    assert (tmp_path / "outside" / "precious").read_text() == "customer data"


def test_removal_does_not_cross_into_a_filesystem_mounted_below(tmp_path: Path) -> None:
    vol = scratch_volume(tmp_path / "vol")
    d = checked(EX, vol, f"{vol.path}/work")
    create(EX, d)
    mnt = Path(d.path) / "mnt"
    mnt.mkdir()
    if subprocess.run(
        ["mount", "-t", "tmpfs", "tmpfs", str(mnt)], capture_output=True, check=False
    ).returncode:
        pytest.skip("mounting a tmpfs needs root")
    try:
        (mnt / "precious").write_text("on another filesystem")
        remove(EX, d)
        assert (mnt / "precious").read_text() == "on another filesystem"
    finally:
        subprocess.run(["umount", str(mnt)], check=True)
    remove(EX, d)
    assert not Path(d.path).exists()


def test_an_agent_workload_writes_its_target_only_with_the_scratch_proof(tmp_path: Path) -> None:
    spec = {"target_dir": str(tmp_path), "snapshot_bytes": 1 << 20, "ranks": 1}
    with pytest.raises(ValueError, match=r"kvgate\.probes\.scratch\.checked"):
        agentctl.start(EX, "checkpoint", spec)  # refused before anything is uploaded or started
    other = checked(EX, scratch_volume(tmp_path / "vol"), f"{tmp_path}/vol/other")
    with pytest.raises(ValueError, match="is not the checked"):
        agentctl.start(EX, "checkpoint", spec, target=other)
    assert list(tmp_path.iterdir()) == [tmp_path / "vol"]
