"""Real block devices for the fio tests: loop devices, partitions, filesystems, mounts, freezes.

Everything made here is undone by the ExitStack in reverse order (thaw, umount,
partx -d, losetup -d), also when a test fails. Needs root and util-linux.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from contextlib import ExitStack
from pathlib import Path

TOOLS = ("losetup", "partx", "mkfs.ext4", "blkid", "lsblk", "mount", "umount", "fsfreeze")


def missing() -> str | None:
    """Why loop devices cannot be used here, or None."""
    if os.geteuid() != 0:
        return "needs root for loop devices"
    absent = [t for t in TOOLS if shutil.which(t) is None]
    return f"missing {', '.join(absent)}" if absent else None


def sh(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True, timeout=30).stdout.strip()


def write_mbr(image: Path) -> None:
    """One Linux partition (type 0x83) from sector 2048 to the end of the image."""
    sectors = image.stat().st_size // 512
    mbr = bytearray(512)
    mbr[446:462] = struct.pack("<B3sB3sII", 0, b"\x00\x02\x00", 0x83, b"\xff\xff\xff", 2048, sectors - 2048)
    mbr[510:512] = b"\x55\xaa"
    with image.open("r+b") as f:
        f.write(mbr)


class BlockLab:
    """Makes loop devices under ``root``; ``close()`` undoes everything."""

    def __init__(self, root: Path) -> None:
        self.root, self.stack = root, ExitStack()
        self.count = 0

    def loop(self, *, size_mib: int = 32, sector: int = 512, partition: bool = False) -> str:
        """A fresh loop device over a sparse file, optionally with one partition."""
        self.count += 1
        image = self.root / f"disk{self.count}.img"
        image.write_bytes(b"")
        os.truncate(image, size_mib << 20)
        if partition:
            write_mbr(image)
        dev = sh("losetup", "-b", str(sector), "--find", "--show", str(image))
        self.stack.callback(sh, "losetup", "-d", dev)
        if partition:
            sh("partx", "-a", dev)
            self.stack.callback(sh, "partx", "-d", dev)
        return dev

    def mkfs(self, dev: str) -> None:
        sh("mkfs.ext4", "-q", "-F", dev)

    def mount(self, dev: str, where: Path) -> Path:
        where.mkdir(parents=True, exist_ok=True)
        sh("mount", dev, str(where))
        self.stack.callback(sh, "umount", "-l", str(where))
        return where

    def freeze(self, where: Path) -> None:
        """fsfreeze: writers block in uninterruptible sleep (D) until thaw."""
        sh("fsfreeze", "-f", str(where))
        self.stack.callback(self.thaw, where)

    @staticmethod
    def thaw(where: Path) -> None:
        subprocess.run(["fsfreeze", "-u", str(where)], capture_output=True, timeout=30, check=False)

    def close(self) -> None:
        self.stack.close()
