"""One host's preflight probes, each turned into the Measurement its check judges.

A probe that shows the lab cannot be measured gives a Measurement with its reason
(the check is INVALID); a lab failure (an engine that does not start) is kept as the
LabError of its checks (ERROR); the host's other probes still run.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kvgate.base.criteria import Measurement
from kvgate.base.errors import Interrupted, LabError
from kvgate.configuration.gateconfig import GateConfig
from kvgate.configuration.inventory import Inventory
from kvgate.orchestration.g3 import launches, probe_deployment, start_each, start_model_load, storage_pairs
from kvgate.orchestration.g4_reach import reach as g4_reach
from kvgate.orchestration.preflight.nfs_reads import planned_reads, shortfall
from kvgate.probes.engines import engine_python, read_pool_missing
from kvgate.probes.evidence import DEFAULT_MIB
from kvgate.probes.hostevidence import HostEvidence
from kvgate.probes.nfs_server import ServerCache
from kvgate.record import RunStore
from kvgate.transport import Executor

Found = dict[str, Measurement | LabError]
_PY = "import sys; print('%d.%d.%d' % sys.version_info[:3])"


@dataclass(frozen=True)
class Probe:
    """One host's probing: where, what it may do, where its evidence goes."""

    ex: Executor
    config: GateConfig
    host: str
    store: RunStore
    notify: Callable[[str], None]
    executors: Mapping[str, Executor]  # every host's: an NFS volume's server may be another host

    @property
    def inv(self) -> Inventory:
        return self.config.inventory.inventory

    def all(self) -> Found:
        """Every probe of the host (see kvgate.orchestration.preflight.plan for what each must show)."""
        found = self.basics()
        he = HostEvidence(self.ex, sudo=self.inv.hosts[self.host].sudo)
        for name, vol in self.inv.volumes_of(self.host).items():
            self.notify(f"volume {name}: counter probe")
            probe = functools.partial(self.volume, he, name, vol.path, scratch=vol.scratch)
            found |= guarded(probe, (f"volume[{name}].counters", f"volume[{name}].nfs"))
        for name in self.inv.engines:
            if self.host in self.inv.engine_hosts(name):
                self.notify(f"engine {name}: start, metrics, tokenizer, tier cycle")
                checks = tuple(f"engine[{name}].{k}" for k in ("start", "metrics", "tokenizer", "tier-cycle"))
                found |= guarded(functools.partial(self.deployment, name), checks)
                found |= guarded(functools.partial(self.read_pool, name), (f"engine[{name}].read-pool",))
                starts = tuple(f"engine[{name}].start[{arm}]" for arm in started_arms(self.config, name))
                found |= guarded(functools.partial(self.arm_starts, name), starts)
        for name in model_loads_of(self.inv, self.host):
            self.notify(f"model load {name}: start")
            found |= guarded(functools.partial(self.model_load_start, name), (f"model-load[{name}].start",))
        if any(self.host in self.inv.engine_hosts(name) for name in self.inv.engines):
            self.notify("G4: its plan here and the health counters this host has")
            try:
                found_g4 = g4_reach(self.ex, self.config, self.host)
            except LabError as exc:  # the page says G4's reach was not found here; the checks stand
                self.notify(f"G4's reach not found: {exc}")
            else:
                self.store.merge_meta(g4_reach={k: v.model_dump() for k, v in found_g4.items()})
        return found

    def basics(self) -> Found:
        """The transport, sudo where allowed, the agent's Python."""
        t0 = time.monotonic()
        self.ex.run("true", timeout_s=60, check=True)
        found: Found = {"ssh": Measurement("command_round_trip_s", time.monotonic() - t0, "s")}
        if self.inv.hosts[self.host].sudo:
            root = self.ex.run("id -u", timeout_s=60).stdout.strip() == "0"
            res = self.ex.run("true" if root else "sudo -n true", timeout_s=60)  # root needs no sudo
            why = None if res.ok else f"sudo -n true was refused: {res.tail(2)}"
            found["sudo"] = Measurement("sudo_ok", True if res.ok else None, "", invalid_reason=why)
        res = self.ex.run("python3 -c %s", _PY, timeout_s=60)
        why = None if res.ok else f"python3 is missing or broken: {res.tail(2)}"
        found["agent-python"] = Measurement(
            "agent_python", res.stdout.strip() or None, "", invalid_reason=why
        )
        return found

    def volume(self, he: HostEvidence, name: str, path: str, *, scratch: bool) -> Found:
        """The counter sanity probe, and what NFS says about its server's cache."""
        result = he.probe(path, mib=DEFAULT_MIB, scratch=scratch)
        text = json.dumps(result, indent=1)
        ev = (self.store.artifact(self.host, f"preflight/volume-{name}.json", text),)
        moved, read = (result["counts"] or {}).get("device_read_bytes"), result["read_bytes"]
        ratio = moved / read if moved is not None and read else None
        counters = Measurement("counters_moved_ratio", ratio, "x", ev, result["reason"])
        return {f"volume[{name}].counters": counters, f"volume[{name}].nfs": self.server_cache(name, ev)}

    def server_cache(self, name: str, ev: tuple[str, ...]) -> Measurement:
        """Whether the NFS server's cache can be made cold for every read the gates plan on the volume."""
        cache = ServerCache.of(self.inv, name, self.executors)
        reads = planned_reads(self.config, name, g3_storage=self._storage_baseline(name))
        smallest = min(
            reads, key=lambda r: r.size_bytes, default=None
        )  # what a ZFS ARC's residue spoils first
        if cache.evidence is not None:
            cold = cache.make_cold(data_bytes=smallest.size_bytes if smallest else 0)
            if cold.reason:
                return Measurement("nfs_server_cache", None, "", ev, cold.reason)
        if cache.evidence is None and (cache.server is None or cache.server.ram_gib is None):
            return Measurement("nfs_server_cache", None, "", ev, cache.make_cold(data_bytes=0).reason)
        if why := shortfall(reads, cache.server, dropped=cache.evidence is not None):
            return Measurement("nfs_server_cache", None, "", ev, f"NFS server cache not controlled: {why}")
        return Measurement("nfs_server_cache", "dropped" if cache.evidence else "ram_gib declared", "", ev)

    def _storage_baseline(self, volume: str) -> bool:
        """Whether G3 runs its model-load and checkpoint workloads on ``volume`` from this host."""
        return any(h == self.host and base == volume for h, _, base in storage_pairs(self.inv))

    def deployment(self, name: str) -> Found:
        """G3's tier probe on one deployment: start, /metrics, tokenizer, one prompt's tier cycle."""
        result, probe = probe_deployment(
            self.ex, self.config, host=self.host, name=name, store=self.store, notify=self.notify
        )
        d = f"engine[{name}]"
        found: Found = {
            f"{d}.start": Measurement("ready_s", result.engines.get("probe", {}).get("ready_s"), "s"),
            f"{d}.metrics": _verdict("named_counters_missing", 0, "missing", probe.metrics),
            f"{d}.tokenizer": _verdict("tokenizer_ok", True, "", probe.tokenizer),
        }
        if probe.restore is not None:
            r = probe.restore
            # as G3's restore_read_ratio: the less of the device's and the engine's bytes, over the prediction
            seen = (
                [b for b in (r.window.device_read_bytes, r.window.engine_read_bytes) if b is not None]
                if r.window
                else []
            )
            ratio = min(seen) / r.predicted_bytes if seen and r.predicted_bytes else None
            found[f"{d}.tier-cycle"] = Measurement(
                "restore_read_ratio", ratio, "x", r.evidence, r.invalid_reason
            )
        return found

    def arm_starts(self, name: str) -> Found:
        """Every other engine G3 starts for the deployment, each started once: "ready in N s" or why not."""
        said = start_each(
            self.ex, self.config, host=self.host, name=name, store=self.store, notify=self.notify
        )
        return {f"engine[{name}].start[{arm}]": Measurement("engine_start", s) for arm, s in said.items()}

    def model_load_start(self, name: str) -> Found:
        """R9's model load started once from a candidate's copy, its other copies looked for."""
        said = start_model_load(self.ex, self.config, host=self.host, name=name, store=self.store)
        return {f"model-load[{name}].start": Measurement("engine_start", said)}

    def read_pool(self, name: str) -> Found:
        """Whether the LMCache R1's parallel reader runs with has its parallel disk-read pool."""
        dep = self.inv.engines[name]
        if dep.cold_read is None:
            return {}
        python = engine_python(self.inv.hosts[self.host], dep)
        why = read_pool_missing(self.ex, python, self.config.engine(dep.cold_read.parallel))
        return {f"engine[{name}].read-pool": _verdict("read_pool", True, "", why)}


def model_loads_of(inv: Inventory, host: str) -> list[str]:
    """R9's model loads (``model_loads:``) that G3 starts on ``host``."""
    return [name for name, ml in inv.model_loads.items() if host in ml.hosts]


def started_arms(config: GateConfig, name: str) -> list[str]:
    """The arms whose launch preflight starts once (the tier probe's own is ``engine[<name>].start``)."""
    return [launch.arm for launch in launches(config, name)[1:]]


def _verdict(metric: str, good: object, unit: str, why: str | None) -> Measurement:
    """``good`` when nothing is wrong, else no value and the reason."""
    return Measurement(metric, None if why else good, unit, invalid_reason=why)  # type: ignore[arg-type]


def guarded(probe: Callable[[], Found], keys: tuple[str, ...]) -> Found:
    """The probe's measurements; a LabError becomes the result of every one of its checks (ERROR)."""
    try:
        return probe()
    except Interrupted:
        raise
    except LabError as exc:
        return dict.fromkeys(keys, exc)
