"""The lab's guest image: built once per recipe from Debian's packages, cached by its hash.

The recipe is lab/recipe/ (the package list and the mmdebstrap customize hook) plus the build
settings below; their sha256 names the cache directory, so a changed recipe builds a new image
and an unchanged one is reused. No loop device is mounted: mmdebstrap fills a directory,
`mke2fs -d` copies it into a raw ext4 image, and the kernel and initrd are copied out beside it
for QEMU's -kernel/-initrd.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

RECIPE = Path(__file__).resolve().parent / "recipe"
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
IMAGE_SIZE = "3G"
BUILD_SETTINGS = f"{SUITE} {MIRROR} {IMAGE_SIZE} minbase ext4"


def cache_root() -> Path:
    """Outside the work tree: KVGATE_LAB_CACHE, else ~/.cache/kvgate-lab."""
    return Path(os.environ.get("KVGATE_LAB_CACHE", Path.home() / ".cache" / "kvgate-lab"))


def recipe_hash() -> str:
    h = hashlib.sha256(BUILD_SETTINGS.encode())
    for path in sorted(RECIPE.iterdir()):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def packages() -> list[str]:
    lines = (RECIPE / "packages").read_text().splitlines()
    return [w for line in lines if (w := line.split("#")[0].strip())]


@dataclass(frozen=True)
class Image:
    """A built image: the root file system, the kernel and the initrd it boots with."""

    directory: Path

    @property
    def rootfs(self) -> Path:
        return self.directory / "rootfs.raw"

    @property
    def kernel(self) -> Path:
        return self.directory / "vmlinuz"

    @property
    def initrd(self) -> Path:
        return self.directory / "initrd.img"

    @property
    def ready(self) -> bool:
        return (self.directory / "built").is_file()


def image() -> Image:
    return Image(cache_root() / recipe_hash())


def build(log: Path | None = None) -> tuple[Image, float]:
    """The image for this recipe, built if missing; returns it and the seconds the build took."""
    img = image()
    if img.ready:
        return img, 0.0
    start = time.monotonic()
    work = img.directory / "tree"
    _unmount_below(img.directory)  # a build killed mid-way leaves its chroot's /proc, /sys, /dev mounted
    shutil.rmtree(img.directory, ignore_errors=True)
    img.directory.mkdir(parents=True)
    with open(log or img.directory / "build.log", "w") as out:
        _run(_mmdebstrap_argv(work), out)
        _copy_boot_files(work, img)
        _run(
            ["mke2fs", "-q", "-t", "ext4", "-L", "kvgate-lab", "-d", str(work), str(img.rootfs), IMAGE_SIZE],
            out,
        )
    shutil.rmtree(work)
    (img.directory / "built").write_text(f"{recipe_hash()}\n")
    return img, time.monotonic() - start


def _mounts_below(directory: Path) -> list[str]:
    """Mount points at or under ``directory``, deepest first (/proc/self/mountinfo's fifth field)."""
    root = str(directory.resolve())
    points = [
        re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), line.split()[4])  # a space is written \040
        for line in Path("/proc/self/mountinfo").read_text().splitlines()
    ]
    return sorted((p for p in points if p == root or p.startswith(root + "/")), key=len, reverse=True)


def _unmount_below(directory: Path) -> None:
    """Nothing under ``directory`` stays mounted before it is removed: a removal that crossed into a
    bind mount of the host's /dev or /sys would delete the host's own files."""
    for point in _mounts_below(directory):
        subprocess.run(["umount", "--lazy", point], capture_output=True, check=False)
    if left := _mounts_below(directory):
        raise RuntimeError(f"{directory} still has mounts ({', '.join(left)}); not removing it")


def _mmdebstrap_argv(target: Path) -> list[str]:
    hook = RECIPE / "customize.sh"
    return [
        "mmdebstrap", "--mode=root", "--variant=minbase", "--include=" + ",".join(packages()),
        f'--customize-hook={hook} "$1"', SUITE, str(target), MIRROR,
    ]  # fmt: skip


def _copy_boot_files(tree: Path, img: Image) -> None:
    shutil.copyfile(_newest(tree / "boot", "vmlinuz-*"), img.kernel)
    shutil.copyfile(_newest(tree / "boot", "initrd.img-*"), img.initrd)


def _newest(directory: Path, pattern: str) -> Path:
    found = sorted(directory.glob(pattern))
    if not found:
        raise RuntimeError(f"the image has no {pattern} in {directory}")
    return found[-1]


def _run(argv: list[str], out: object) -> None:
    out.write(f"$ {' '.join(argv)}\n")  # type: ignore[attr-defined]
    out.flush()  # type: ignore[attr-defined]
    result = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, check=False)  # type: ignore[call-overload]
    if result.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed ({result.returncode}); see the build log")
