"""The lab's own machinery: the image cache, the KVM probe, isolation, and `down` leaving nothing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from labfixture import lab_vm  # noqa: F401 (the session fixture `lab`)

from lab import image, labctl, qemu
from lab.guests import CLIENT, GUESTS

pytestmark = pytest.mark.timeout(1800)  # the first test waits for the lab to boot (and build once)


def test_the_image_is_named_by_its_recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    recipe = tmp_path / "recipe"
    shutil.copytree(image.RECIPE, recipe)
    monkeypatch.setattr(image, "RECIPE", recipe)
    before = image.recipe_hash()
    assert image.recipe_hash() == before  # an unchanged recipe reuses its image
    with open(recipe / "packages", "a") as packages:
        packages.write("strace\n")
    assert image.recipe_hash() != before
    assert "strace" in image.packages()


def test_a_killed_builds_mounts_are_undone_before_its_directory_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mmdebstrap killed mid-build leaves /proc, /sys and /dev mounted in its chroot: the next build
    unmounts them (a path with a space, as mountinfo escapes it) before removing the directory."""
    monkeypatch.setenv("KVGATE_LAB_CACHE", str(tmp_path / "a cache"))
    proc = image.image().directory / "tree" / "proc"
    proc.mkdir(parents=True)
    subprocess.run(["mount", "-t", "proc", "proc", str(proc)], check=True)
    try:
        assert image._mounts_below(image.image().directory) == [str(proc)]
        image._unmount_below(image.image().directory)
        assert image._mounts_below(image.image().directory) == []
    finally:
        subprocess.run(["umount", "--lazy", str(proc)], capture_output=True, check=False)


def test_a_built_image_is_reused(lab: dict[str, object]) -> None:
    img, seconds = image.build()
    assert (img.ready, seconds) == (True, 0.0)
    assert str(img.directory) == lab["image"]


def test_the_kvm_probe_recognises_a_kernel_that_boots(lab: dict[str, object], tmp_path: Path) -> None:
    """The probe that rejects a hanging nested KVM sees the banner of a kernel that does boot (TCG)."""
    assert qemu.boots(image.image(), tmp_path, "tcg")


def test_a_guest_reaches_only_its_lab(lab: dict[str, object]) -> None:
    """slirp with restrict=on: the host's gateway and outside addresses are unreachable."""
    probe = (
        "import socket,sys\nfor a in sys.argv[1:]:\n"
        " try: socket.create_connection((a, 22), 3); print(a)\n except OSError: pass"
    )
    done = labctl.ssh(CLIENT, "python3 -c '" + probe + "' 10.0.2.2 10.0.2.3 1.1.1.1 10.99.1.1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["10.99.1.1"]  # the array over the lab link, nothing else


def test_down_leaves_no_qemu_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real QEMU processes under a lab's pid files are stopped and their run directory removed."""
    monkeypatch.setenv("KVGATE_LAB_CACHE", str(tmp_path))
    for guest in GUESTS:
        d = labctl.run_dir() / guest.name
        d.mkdir(parents=True)
        argv = ["qemu-system-x86_64", "-machine", "none", "-S", "-display", "none", "-daemonize",
                "-pidfile", str(d / "qemu.pid")]  # fmt: skip
        subprocess.run(argv, check=True)
    pids = [qemu.pid(g, labctl.run_dir()) for g in GUESTS]
    assert labctl.running() == [g.name for g in GUESTS]
    assert None not in pids
    labctl.down()
    assert labctl.running() == []
    assert not labctl.run_dir().exists()
    assert not [p for p in pids if p is not None and _alive(p)]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"
