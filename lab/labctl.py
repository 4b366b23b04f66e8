"""`python3 -m lab.labctl up|down|status`: build the image if needed, boot the lab, stop it.

State lives in <cache>/run/ (never in the work tree): per-lab keys (root's SSH key, each
guest's host key, known_hosts), each guest's throwaway disks, pid file, QMP socket and serial
log, and lab.json with the ports and the timings of the last `up`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from lab import qemu
from lab.guests import ARRAY, CLIENT, GUESTS, NVME_DRIVE_SIZE, Guest, links
from lab.image import Image, build, cache_root

SETUP = Path(__file__).resolve().parent / "setup"
NQN = "nqn.2026-12.io.kvgate:lab-array"
SSH_WAIT_S = 600


def run_dir() -> Path:
    return cache_root() / "run"


def running() -> list[str]:
    return [g.name for g in GUESTS if qemu.pid(g, run_dir()) is not None]


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """One `up` or `down` at a time: a second `up` waits for the first and then reuses its lab."""
    cache_root().mkdir(parents=True, exist_ok=True)
    with open(cache_root() / "lab.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def up() -> dict[str, object]:
    """Boot the lab (reusing one that runs); returns lab.json's content."""
    with _locked():
        lab = run_dir() / "lab.json"
        if len(running()) == len(GUESTS) and lab.is_file():
            return dict(json.loads(lab.read_text()))
        _down()
        try:
            return _boot()
        except BaseException:
            _keep_consoles()
            _down()
            raise


def _keep_consoles() -> None:
    """A failed boot leaves nothing running, but its serial logs stay in <cache>/last-failure/."""
    kept = cache_root() / "last-failure"
    shutil.rmtree(kept, ignore_errors=True)
    kept.mkdir()
    for guest in GUESTS:
        console = run_dir() / guest.name / "console.log"
        if console.is_file():
            shutil.copyfile(console, kept / f"{guest.name}-console.log")


def _boot() -> dict[str, object]:
    img, build_s = build()
    rd = run_dir()
    _prepare(rd, img)
    accel = qemu.accelerator(img, rd)
    start = time.monotonic()
    for guest in GUESTS:
        qemu.start(guest, img, rd, accel)
    ssh_s = {g.name: _wait_ssh(g, start) for g in GUESTS}
    setup_start = time.monotonic()
    _setup_array()
    head = _setup_client()
    state = {
        "image": str(img.directory), "accelerator": accel, "image_build_s": round(build_s, 1),
        "boot_to_ssh_s": ssh_s, "setup_s": round(time.monotonic() - setup_start, 1),
        "key_file": str(rd / "id_ed25519"), "known_hosts": str(rd / "known_hosts"),
        "ssh_ports": {g.name: g.ssh_port for g in GUESTS}, "nvmeof_head": head, "nqn": NQN,
    }  # fmt: skip
    (rd / "lab.json").write_text(json.dumps(state, indent=2) + "\n")
    return state


def down() -> None:
    """Stop every guest and remove the run directory (disks, keys, sockets)."""
    with _locked():
        _down()


def _down() -> None:
    for guest in reversed(GUESTS):
        qemu.stop(guest, run_dir())
    shutil.rmtree(run_dir(), ignore_errors=True)


def _prepare(rd: Path, img: Image) -> None:
    rd.mkdir(parents=True)
    _keygen(rd / "id_ed25519", "kvgate-lab root")
    known = []
    for guest in GUESTS:
        d = rd / guest.name
        d.mkdir()
        (d / "hostname").write_text(guest.name + "\n")
        _keygen(d / "ssh_host_ed25519_key", guest.name)
        pub = (d / "ssh_host_ed25519_key.pub").read_text().split()[:2]
        known.append(f"[127.0.0.1]:{guest.ssh_port} {' '.join(pub)}\n")
        _qemu_img("-f", "qcow2", "-b", str(img.rootfs), "-F", "raw", str(d / "root.qcow2"))
        for n in range(len(guest.nvme_drives)):
            # raw and allocated up front: a qcow2 growing under a busy host stalled a drive
            _qemu_img("-f", "raw", "-o", "preallocation=falloc", str(d / f"nvme{n}.raw"), NVME_DRIVE_SIZE)
    (rd / "known_hosts").write_text("".join(known))


def _keygen(path: Path, comment: str) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)], check=True
    )


def _qemu_img(*args: str) -> None:
    subprocess.run(["qemu-img", "create", "-q", *args], check=True)


def ssh_argv(guest: Guest, command: str) -> list[str]:
    rd = run_dir()
    return ["ssh", "-i", str(rd / "id_ed25519"), "-o", f"UserKnownHostsFile={rd / 'known_hosts'}",
            "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "ConnectTimeout=30",
            "-p", str(guest.ssh_port), "root@127.0.0.1", command]  # fmt: skip


def ssh(
    guest: Guest, command: str, *, stdin: str = "", timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    argv = ssh_argv(guest, command)
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout, check=False)


def _wait_ssh(guest: Guest, start: float) -> float:
    while time.monotonic() - start < SSH_WAIT_S:
        if qemu.pid(guest, run_dir()) is None:
            raise RuntimeError(f"{guest.name} exited; its console log is in {cache_root() / 'last-failure'}")
        try:
            if ssh(guest, "true", timeout=40).returncode == 0:
                return round(time.monotonic() - start, 1)
        except subprocess.TimeoutExpired:
            pass
        time.sleep(2)
    raise RuntimeError(f"{guest.name} did not answer SSH within {SSH_WAIT_S} s")


def _setup(guest: Guest, script: str, env: dict[str, str]) -> str:
    links_env = " ".join(
        f"{qemu.link_mac(guest, link)}={link.subnet}.{guest.address_suffix}/24" for link in links()
    )
    assigns = " ".join(f"{k}='{v}'" for k, v in {**env, "LINKS": links_env}.items())
    body = (SETUP / "links.sh").read_text() + (SETUP / script).read_text()
    result = ssh(guest, f"env {assigns} sh -s", stdin=body)
    if result.returncode != 0:
        raise RuntimeError(f"{script} on {guest.name} failed ({result.returncode}): {result.stderr[-2000:]}")
    return result.stdout.strip()


def _paths() -> dict[str, str]:
    one, two = links()
    return {"NQN": NQN, "PORT1_ADDR": f"{one.subnet}.1", "PORT2_ADDR": f"{two.subnet}.1"}


def _setup_array() -> None:
    _setup(ARRAY, "array.sh", {**_paths(), "NFS_CLIENTS": "10.99.0.0/16"})


def _setup_client() -> str:
    return _setup(CLIENT, "client.sh", {**_paths(), "NFS_SERVER": f"{links()[0].subnet}.1"}).splitlines()[-1]


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else "status"
    if command == "up":
        print(json.dumps(up(), indent=2))
    elif command == "down":
        down()
        print("lab stopped; nothing running" if not running() else f"still running: {running()}")
    elif command == "status":
        print(json.dumps({"running": running(), "run_dir": str(run_dir())}))
    else:
        print(f"usage: {argv[0]} up|down|status", file=sys.stderr)
        return 2
    return 0 if command != "down" or not running() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
