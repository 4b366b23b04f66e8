"""Every destructive-write refusal, proven on real loop devices and real paths (DESIGN rule 3).

Each refused case shows that fio never ran: no run directory was created, and
what was on the device (a filesystem, a partition table) is still there.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from blockdevs import BlockLab, missing, sh

from kvgate.configuration.fio_job import FioJob
from kvgate.configuration.inventory.schema import Volume
from kvgate.probes.fio.run import RunOptions, run_fio
from kvgate.probes.fio.safety import UnsafeTarget
from kvgate.transport.local import LocalExecutor

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
]


@pytest.fixture
def ex() -> LocalExecutor:
    return LocalExecutor()


@pytest.fixture
def opts(tmp_path: Path) -> RunOptions:
    return RunOptions(workdir=str(tmp_path / "wd"), grace_s=30)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[BlockLab]:
    if why := missing():
        pytest.skip(why)
    blocks = BlockLab(tmp_path)
    yield blocks
    blocks.close()


def write_to(target: str, *, device: bool = False) -> FioJob:
    where = {"filename": target} if device else {"directory": target}
    return FioJob(name="w", rw="randwrite", bs="4k", size="4m", runtime_s=1, ramp_s=0, **where)  # type: ignore[arg-type]


def refused(ex: LocalExecutor, job: FioJob, vol: Volume, opts: RunOptions) -> list[str]:
    """The refusal reasons; asserts that nothing ran."""
    with pytest.raises(UnsafeTarget) as err:
        run_fio(ex, job, vol, opts)
    assert not Path(opts.workdir).exists()  # no run directory: fio was never started
    return list(err.value.reasons)


def test_path_traversal_out_of_the_volume_is_refused(
    ex: LocalExecutor, tmp_path: Path, opts: RunOptions
) -> None:
    (tmp_path / "vol").mkdir()
    vol = Volume(path=str(tmp_path / "vol"), kind="candidate", scratch=True)
    reasons = refused(ex, write_to(f"{vol.path}/../outside"), vol, opts)
    assert reasons == [f"target {vol.path}/../outside contains '..': path traversal is refused"]
    assert not (tmp_path / "outside").exists()


def test_symlink_out_of_the_volume_is_refused(ex: LocalExecutor, tmp_path: Path, opts: RunOptions) -> None:
    (tmp_path / "vol").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "vol" / "link").symlink_to(tmp_path / "elsewhere")
    vol = Volume(path=str(tmp_path / "vol"), kind="candidate", scratch=True)
    [reason] = refused(ex, write_to(f"{vol.path}/link"), vol, opts)
    assert reason.endswith(f"resolves to {tmp_path}/elsewhere, outside {vol.path} (symlink)")
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_file_target_on_a_non_scratch_volume_is_refused(
    ex: LocalExecutor, tmp_path: Path, opts: RunOptions
) -> None:
    (tmp_path / "data").mkdir()
    vol = Volume(path=str(tmp_path / "data"), kind="baseline", scratch=False)
    [reason] = refused(ex, write_to(vol.path), vol, opts)
    assert reason.startswith(f"volume {vol.path} is not marked scratch")
    assert list((tmp_path / "data").iterdir()) == []


def test_raw_device_not_marked_scratch_is_refused(ex: LocalExecutor, lab: BlockLab, opts: RunOptions) -> None:
    dev = lab.loop()
    vol = Volume(path="/srv/none", kind="candidate", scratch=False, device=dev)
    reasons = refused(
        ex, write_to(dev, device=True), vol, RunOptions(workdir=opts.workdir, allow_destructive=True)
    )
    assert reasons == [f"volume /srv/none ({dev}) is not marked scratch"]


def test_raw_device_with_a_filesystem_is_refused_and_kept(
    ex: LocalExecutor, lab: BlockLab, tmp_path: Path
) -> None:
    dev = lab.loop()
    lab.mkfs(dev)
    vol = Volume(path="/srv/none", kind="candidate", scratch=True, device=dev)
    opts = RunOptions(workdir=str(tmp_path / "wd"), allow_destructive=True)
    [reason] = refused(ex, write_to(dev, device=True), vol, opts)
    assert reason.startswith(f"{dev} carries a signature (")
    assert 'TYPE="ext4"' in reason
    assert 'TYPE="ext4"' in sh("blkid", "-p", dev)  # the filesystem is untouched


def test_raw_device_with_a_mounted_partition_is_refused(
    ex: LocalExecutor, lab: BlockLab, tmp_path: Path
) -> None:
    dev = lab.loop(partition=True)
    lab.mkfs(f"{dev}p1")
    mnt = lab.mount(f"{dev}p1", tmp_path / "mnt")
    vol = Volume(path="/srv/none", kind="candidate", scratch=True, device=dev)
    opts = RunOptions(workdir=str(tmp_path / "wd"), allow_destructive=True)
    reasons = refused(ex, write_to(dev, device=True), vol, opts)
    assert f"{dev}p1 is mounted on {mnt}" in reasons
    assert f'{dev} carries a signature (PTTYPE="dos")' in reasons


def test_raw_device_without_allow_destructive_is_refused(
    ex: LocalExecutor, lab: BlockLab, opts: RunOptions
) -> None:
    dev = lab.loop()
    vol = Volume(path="/srv/none", kind="candidate", scratch=True, device=dev)
    reasons = refused(ex, write_to(dev, device=True), vol, opts)
    assert reasons == ["a destructive write to a raw device needs the explicit allow-destructive option"]


def test_raw_device_not_declared_by_the_volume_is_refused(
    ex: LocalExecutor, lab: BlockLab, tmp_path: Path
) -> None:
    declared, other = lab.loop(), lab.loop()
    vol = Volume(path="/srv/none", kind="candidate", scratch=True, device=declared)
    opts = RunOptions(workdir=str(tmp_path / "wd"), allow_destructive=True)
    assert refused(ex, write_to(other, device=True), vol, opts) == [
        f"{other} is not the declared device of the volume"
    ]


def test_blank_scratch_device_with_the_flag_is_written(
    ex: LocalExecutor, lab: BlockLab, tmp_path: Path
) -> None:
    dev = lab.loop()
    vol = Volume(path="/srv/none", kind="candidate", scratch=True, device=dev)
    run = run_fio(
        ex, write_to(dev, device=True), vol, RunOptions(workdir=str(tmp_path / "wd"), allow_destructive=True)
    )
    assert run.invalid_reason is None
    assert run.summary().write.io_bytes > 0


def test_a_line_break_in_a_value_cannot_move_fio_out_of_the_volume(
    ex: LocalExecutor, tmp_path: Path, opts: RunOptions
) -> None:
    """Before: the extra `directory=` line reached the job file and fio obeyed it (the last one wins)."""
    (tmp_path / "vol").mkdir()
    (tmp_path / "outside").mkdir()
    vol = Volume(path=str(tmp_path / "vol"), kind="candidate", scratch=True)
    with pytest.raises(ValueError, match="verify must be one of fio's"):
        run_fio(ex, write_to(vol.path).replace(verify=f"crc32c\ndirectory={tmp_path}/outside"), vol, opts)
    assert list((tmp_path / "outside").iterdir()) == []
    assert not Path(opts.workdir).exists()
