"""A rack of real test hosts for the scale benchmark: N network namespaces, each with its own sshd.

Every host is tests/integration/netns.py's FarHost (a veth link, an sshd inside, namespaces
named ``kvs-…``); G1 runs over them through the real CLI, in its own process. What one run
costs is measured from outside the code under test:

- kvgate's CPU: the CLI process's own rusage (``os.wait4``), its waited-for children included;
- the lab's CPU: every sshd listener's CPU with its reaped children (the per-connection sshd,
  the session shell and the host-side commands), read once every connection has ended;
- select() calls per command: counted inside the CLI by ``counted_cli.py`` (the SSH
  executor's own select and command start, nothing else).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))

from netns import FarHost, unavailable
from sshd import descendants, write_known_hosts

REPO = Path(__file__).resolve().parents[2]
COUNTED_CLI = Path(__file__).with_name("counted_cli.py")
TICK_S = 1 / os.sysconf("SC_CLK_TCK")
GATE_TIMEOUT_S = 600


@dataclass(frozen=True)
class GateCost:
    """One G1 run over ``hosts`` hosts: its wall time and who spent the CPU."""

    hosts: int
    pdf: bool
    wall_s: float
    kvgate_cpu_s: float
    lab_cpu_s: float
    selects: int
    commands: int

    @property
    def selects_per_command(self) -> float:
        return self.selects / max(self.commands, 1)


def lab_cpu_s(far: FarHost) -> float:
    """The sshd listener's CPU seconds with those of its reaped children (once its sessions ended)."""
    assert far.server is not None
    assert far.server.proc is not None
    pid = far.server.proc.pid
    deadline = time.monotonic() + 30
    while descendants(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) * TICK_S  # utime, stime, cutime, cstime


@dataclass
class Rack:
    """``hosts`` FarHosts, a known_hosts trusting them all, and G1 inventories over the first N."""

    root: Path
    hosts: list[FarHost]
    known_hosts: Path

    @classmethod
    @contextmanager
    def create(cls, root: Path, count: int) -> Iterator[Rack]:
        reason = unavailable()
        if reason:
            raise PermissionError(f"the scale benchmark {reason}")
        with ExitStack() as stack:
            hosts = [
                stack.enter_context(FarHost.create(root / f"h{i:02d}", prefix="kvs")) for i in range(count)
            ]
            known = write_known_hosts(root / "known_hosts", [h.server for h in hosts if h.server])
            yield cls(root, hosts, known)

    def inventory(self, count: int) -> Path:
        """A G1 inventory of the first ``count`` hosts, each expecting what this machine has."""
        scratch = self.root / "scratch"
        scratch.mkdir(exist_ok=True)
        volume = {"path": str(scratch), "kind": "candidate", "scratch": True, "min_free_gib": 0.1}
        hosts = {f"node-{i:02d}": self._entry(far) for i, far in enumerate(self.hosts[:count])}
        path = self.root / f"inventory-{count}.yaml"
        path.write_text(yaml.safe_dump({"site": "scale", "hosts": hosts, "volumes": {"scratch": volume}}))
        return path

    def _entry(self, far: FarHost) -> dict[str, Any]:
        expect = {
            "cpu": {"threads": 1},
            "memory": {"total_gib": 1, "tolerance": 0.0},
            "nvme": {"count": 0},
            "gpus": {"count": 0},
            "tools": {"fio": ">= 3.28"},
            "pcie_full_link": False,
        }
        route = far.host(self.known_hosts).model_dump(mode="json", exclude_defaults=True)
        return {**route, "roles": ["storage-client", "engine"], "expect": expect}

    def run_g1(self, count: int, *, pdf: bool) -> GateCost:
        """G1 over the first ``count`` hosts through the CLI; its cost, or an error with its stderr."""
        lab_before = sum(lab_cpu_s(h) for h in self.hosts[:count])
        counts = self.root / f"counts-{count}-{pdf}.json"
        argv = [
            "run",
            "g1",
            "--inventory",
            str(self.inventory(count)),
            "--results",
            str(self.root / "results"),
        ]
        argv += [] if pdf else ["--no-pdf"]
        env = {**os.environ, "KVGATE_COUNTS": str(counts), "PYTHONPATH": str(REPO)}
        log = self.root / f"g1-{count}-{pdf}.log"
        started = time.perf_counter()
        with log.open("w") as err:
            cmd = [sys.executable, str(COUNTED_CLI), *argv]
            proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=err, stderr=subprocess.STDOUT)
            status, usage = wait_with_usage(proc)
        wall = time.perf_counter() - started
        if status != 0:
            raise AssertionError(f"G1 over {count} hosts exited {status}: {log.read_text()[-3000:]}")
        lab = sum(lab_cpu_s(h) for h in self.hosts[:count]) - lab_before
        seen = json.loads(counts.read_text())
        cpu = usage.ru_utime + usage.ru_stime
        return GateCost(count, pdf, wall, cpu, lab, seen["selects"], seen["commands"])


def wait_with_usage(proc: subprocess.Popen[bytes]) -> tuple[int, Any]:
    """The exit status and resource usage of ``proc`` (its own and its waited-for children's)."""
    deadline = time.monotonic() + GATE_TIMEOUT_S
    while time.monotonic() < deadline:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"G1 did not end within {GATE_TIMEOUT_S} s")
