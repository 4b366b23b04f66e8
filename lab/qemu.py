"""QEMU for one lab guest: its command line, starting it daemonized, stopping it by pid file.

Acceleration: /dev/kvm may open on a host that is itself a VM while a nested guest still hangs
before its first kernel line, so KVM is trusted only after a probe boot prints the kernel's
banner on the serial console within PROBE_SECONDS; otherwise the lab runs under TCG.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from lab.guests import Guest, Link, links
from lab.image import Image

PROBE_SECONDS = 20
# nvme_core's timeouts at their most: a TCG guest's emulated drive on a busy host once stalled
# past the default 30 s, was aborted, and ext4 under the NFS export went read-only
KERNEL_ARGS = (
    "root=/dev/vda rw console=ttyS0 net.ifnames=1 quiet systemd.show_status=0"
    " nvme_core.io_timeout=255 nvme_core.admin_timeout=255"
)


def accelerator(img: Image, run_dir: Path) -> str:
    """'kvm' when a probe boot under KVM prints the kernel banner, else 'tcg'."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "tcg"
    return "kvm" if boots(img, run_dir, "kvm") else "tcg"


def boots(img: Image, run_dir: Path, accel: str) -> bool:
    """Whether the image's kernel prints its banner on the serial console under ``accel``."""
    console = run_dir / f"{accel}-probe.log"
    argv = ["qemu-system-x86_64", "-accel", accel, "-m", "256", "-display", "none", "-no-reboot",
            "-kernel", str(img.kernel), "-append", "console=ttyS0 panic=-1",
            "-serial", f"file:{console}", "-nic", "none"]  # fmt: skip
    probe = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        return _wait_for(console, b"Linux version", PROBE_SECONDS)
    finally:
        probe.kill()
        probe.wait()


def _wait_for(path: Path, text: bytes, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_bytes():
            return True
        time.sleep(0.5)
    return False


def argv(guest: Guest, img: Image, run_dir: Path, accel: str) -> list[str]:
    d = run_dir / guest.name
    cpu = (
        ["-accel", "kvm", "-cpu", "host"] if accel == "kvm" else ["-accel", "tcg,thread=multi", "-cpu", "max"]
    )
    return [
        "qemu-system-x86_64", "-name", guest.name, "-machine", "q35", *cpu,
        "-smp", "1", "-m", str(guest.memory_mib),
        "-display", "none", "-daemonize", "-pidfile", str(d / "qemu.pid"),
        "-serial", f"file:{d / 'console.log'}",
        "-qmp", f"unix:{d / 'qmp.sock'},server=on,wait=off",
        "-kernel", str(img.kernel), "-initrd", str(img.initrd), "-append", KERNEL_ARGS,
        "-drive", f"file={d / 'root.qcow2'},if=virtio,format=qcow2",
        *_fw_cfg(guest, run_dir), *_user_nic(guest), *_nvme(guest, d),
        *[arg for link in links() for arg in _link_nic(guest, link)],
    ]  # fmt: skip


def _fw_cfg(guest: Guest, run_dir: Path) -> list[str]:
    """What lab-keys.service copies at boot (lab/recipe/customize.sh)."""
    d = run_dir / guest.name
    items = {
        "ssh_host_ed25519_key": d / "ssh_host_ed25519_key",
        "ssh_host_ed25519_key.pub": d / "ssh_host_ed25519_key.pub",
        "authorized_keys": run_dir / "id_ed25519.pub",
        "hostname": d / "hostname",
    }
    return [a for name, path in items.items() for a in ("-fw_cfg", f"name=opt/kvgate/{name},file={path}")]


def _user_nic(guest: Guest) -> list[str]:
    fwd = f"hostfwd=tcp:127.0.0.1:{guest.ssh_port}-:22"
    return [
        "-netdev",
        f"user,id=user0,restrict=on,{fwd}",
        "-device",
        "virtio-net-pci,netdev=user0,mac=52:54:00:00:00:01",
    ]


def _link_nic(guest: Guest, link: Link) -> list[str]:
    mode = "listen" if guest.listens else "connect"
    return ["-netdev", f"socket,id={link.name},{mode}=127.0.0.1:{link.port}",
            "-device", f"virtio-net-pci,netdev={link.name},mac={link_mac(guest, link)}"]  # fmt: skip


def _nvme(guest: Guest, d: Path) -> list[str]:
    out: list[str] = []
    for n, serial in enumerate(guest.nvme_drives):
        out += ["-drive", f"file={d / f'nvme{n}.raw'},if=none,id=nvme{n},format=raw",
                "-device", f"nvme,serial={serial},drive=nvme{n},id=nvmedev{n}"]  # fmt: skip
    return out


def link_mac(guest: Guest, link: Link) -> str:
    return f"52:54:00:0a:{link.subnet.rsplit('.', 1)[1]:0>2}:{guest.address_suffix:02x}"


def start(guest: Guest, img: Image, run_dir: Path, accel: str) -> None:
    subprocess.run(argv(guest, img, run_dir, accel), check=True, capture_output=True, text=True)


def pid(guest: Guest, run_dir: Path) -> int | None:
    """The guest's QEMU pid while that process is alive and is QEMU."""
    pid_file = run_dir / guest.name / "qemu.pid"
    try:
        pid = int(pid_file.read_text().strip())
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ValueError, ProcessLookupError):
        return None
    comm, state = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2]
    return pid if comm.startswith("qemu") and state != "Z" else None  # a zombie has stopped


def stop(guest: Guest, run_dir: Path, grace_s: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after grace_s: the guest's disks are thrown away anyway. Returns once the
    process itself is gone: QEMU removes its pid file before it has exited (a busy machine showed it
    alive after ``make lab-down`` returned)."""
    p = pid(guest, run_dir)
    if p is None:
        return
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            return
        if _exited(p, wait_s):
            return


def _exited(p: int, wait_s: float) -> bool:
    """Whether process ``p`` is gone (or a zombie) within ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{p}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat[stat.rindex(")") + 2] in "ZX":
            return True
        time.sleep(0.1)
    return False


def qmp(guest: Guest, run_dir: Path, command: str, **arguments: object) -> object:
    """One QMP command on the guest's monitor socket (e.g. qom-set a drive's SMART warning)."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(30)
        sock.connect(str(run_dir / guest.name / "qmp.sock"))
        replies = sock.makefile("r")
        replies.readline()  # the greeting
        for message in ({"execute": "qmp_capabilities"}, {"execute": command, "arguments": arguments}):
            sock.sendall(json.dumps(message).encode() + b"\n")
            reply = _reply(replies)
        return reply.get("return")


def _reply(replies: object) -> dict[str, object]:
    """The next reply, past asynchronous events; an error reply raises."""
    while True:
        reply = json.loads(replies.readline())  # type: ignore[attr-defined]
        if "error" in reply:
            raise RuntimeError(f"QMP: {reply['error']}")
        if "event" not in reply:
            return dict(reply)
