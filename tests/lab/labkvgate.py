"""kvgate run on the QEMU lab: the CLI on inventory/lab-vm.yaml, or G1's facts of one host in-process."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kvgate.base.criteria import Judgement
from kvgate.configuration.gateconfig import load_config
from kvgate.orchestration.g1.checks import evaluate_facts
from kvgate.orchestration.g1.plan import plan
from kvgate.probes.facts import FAMILIES, HostContext, HostFacts, collect_family
from kvgate.transport import connect
from lab import engine_site, labctl
from lab.guests import ARRAY, CLIENT

SHIPPED = Path(__file__).parents[2] / "inventory" / "lab-vm.yaml"


def lab_inventory() -> Path:
    """inventory/lab-vm.yaml, or a copy naming the lab's keys where KVGATE_LAB_CACHE moved them (the
    shipped file names ~/.cache/kvgate-lab/run, and a moved lab's host keys are not in it)."""
    shipped_run, run = "~/.cache/kvgate-lab/run", labctl.run_dir()
    if Path(shipped_run).expanduser() == run:
        return SHIPPED
    moved = Path(tempfile.mkdtemp(prefix="kvgate-lab-inventory-")) / SHIPPED.name
    moved.write_text(SHIPPED.read_text().replace(shipped_run, str(run)))
    return moved


INVENTORY = lab_inventory()
# a container image of the client guest's own userland: a root of symlinks, /usr and /etc mounted (the
# lab's engine profiles, workloads/engines/llama-cpp-*-lab.yaml, run in it)
IMAGE = "localhost/kvgate-guestroot:lab"
GUEST_ROOT_IMAGE = (
    f"podman image exists {IMAGE} || {{ r=$(mktemp -d); "
    f"mkdir -p $r/etc $r/proc $r/sys $r/dev $r/tmp $r/var/tmp $r/run $r/usr $r/kv; "
    f"for l in bin sbin lib lib64; do ln -s usr/$l $r/$l; done; "
    f"tar -C $r -c . | podman import - {IMAGE} >/dev/null; rm -rf $r; }}"
)


def with_engine(files: dict[str, Path]) -> None:
    """The client guest ready to run the lab's engine profiles (llama-cpp-*-lab): the engine's site
    (lab/engine_site.py, with ``files``: guest path → local file) and the guest-root image."""
    engine_site.install(CLIENT, files)
    done = labctl.ssh(CLIENT, GUEST_ROOT_IMAGE, timeout=300)
    assert done.returncode == 0, done.stderr


def kvgate(
    *args: str, results: Path, inventory: Path | None = None, timeout: float = 1200
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`kvgate ARGS --inventory lab-vm.yaml --results RESULTS` and the run directory it made."""
    cmd = [
        sys.executable,
        "-m",
        "kvgate.cli",
        *args,
        "--inventory",
        str(inventory or INVENTORY),
        "--results",
        str(results),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    runs = sorted((results / "lab-vm").glob("*/run.json"))
    assert runs, f"no run directory: {done.stdout[-2000:]} {done.stderr[-2000:]}"
    return done, runs[-1].parent


def judged(run: Path) -> dict[str, dict[str, Any]]:
    """checks.jsonl by check id (host/check)."""
    return {r["id"]: r for r in map(json.loads, (run / "checks.jsonl").read_text().splitlines())}


def g1_checks(host: str, *families: str, inventory: Path | None = None) -> dict[str, Judgement]:
    """G1's checks of ``families`` on one lab host, from facts collected now over SSH."""
    cfg = load_config(inventory or INVENTORY)
    inv = cfg.inventory.inventory
    ex = connect(host, inv.hosts[host])
    try:
        ctx = HostContext(host, inv.volumes_of(host), inv.hosts[host].sudo)
        facts = HostFacts(host=host, families={f: collect_family(FAMILIES[f], ex, ctx) for f in families})
    finally:
        ex.close()
    return {
        c.check: evaluate_facts(c, facts) for c in plan(cfg) if c.host == host and c.spec.family in families
    }


@contextlib.contextmanager
def set_up(array_up: str, client_up: str, client_down: str, array_down: str) -> Iterator[str]:
    """Something the array serves and the client uses, for one test: up on the array, then the client
    (yields what the client's setup printed); down on the client, then the array, whatever happened."""
    try:
        up = labctl.ssh(ARRAY, array_up)
        assert up.returncode == 0, up.stderr
        up = labctl.ssh(CLIENT, client_up, timeout=180)
        assert up.returncode == 0, up.stderr
        yield up.stdout.strip()
    finally:
        labctl.ssh(CLIENT, client_down)
        labctl.ssh(ARRAY, array_down)


def on_array(command: str) -> str:
    """Run a command as root on the array guest; it must succeed."""
    done = labctl.ssh(ARRAY, command)
    assert done.returncode == 0, f"{command}: {done.stderr}"
    return done.stdout
