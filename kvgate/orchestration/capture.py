"""`kvgate inventory capture HOST`: record a known-good host's facts as its expectations.

Like goss autoadd: collect G1 facts over the host's executor and write the BOM
that host satisfies, as an `expect:` block to paste into the inventory. Exact
values become anchored regexes or lower bounds; review before committing.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from kvgate.base.errors import UsageError
from kvgate.base.units import GiB
from kvgate.configuration.inventory import Expectations, LoadedInventory
from kvgate.orchestration.g1 import configured, optimized_per_namespace, tools_wanted
from kvgate.probes.facts import HostContext, HostFacts, collect_host
from kvgate.transport import connect


def capture(loaded: LoadedInventory, host: str) -> str:
    """Collect the host's facts and render the expectations it meets as YAML."""
    inv = loaded.inventory
    if host not in inv.hosts:
        raise UsageError(f"{loaded.path}: no host {host!r}; hosts: {', '.join(inv.hosts)}")
    ex = connect(host, inv.hosts[host])
    try:
        ctx = HostContext(host, inv.volumes_of(host), inv.hosts[host].sudo, tools_wanted(inv, host))
        facts = collect_host(ex, ctx)
    finally:
        ex.close()
    header = f"# captured from {host} ({inv.hosts[host].address}) by kvgate inventory capture\n"
    expect = expectations(facts)
    Expectations.model_validate(expect)  # what we write must load back
    body = {"hosts": {host: {"expect": expect}}}
    return header + yaml.safe_dump(body, sort_keys=False, allow_unicode=True)


BOM_TRANSPORTS = ("rdma", "tcp", "fc")  # NvmeofExpect.transport


def exact(text: str) -> str:
    return f"^{re.escape(text)}$"


def expectations(facts: HostFacts) -> dict[str, Any]:
    """The BOM this host satisfies; sections whose facts are missing are left out."""
    sections = {
        "cpu": _cpu(facts.family("cpu").facts),
        "memory": _memory(facts.family("memory").facts),
        "os": _os(facts.family("os").facts),
        "nvme": _nvme(facts.family("nvme").facts),
        "nics": _nics(facts.family("nics").facts, facts.family("rdma").facts),
        "gpus": _gpus(facts.family("gpus").facts),
        "nvmeof": _nvmeof(facts.family("nvme").facts, facts.family("nvmeof").facts),
        "tools": {n: f">= {t['version']}" for n, t in facts.family("tools").facts.get("tools", {}).items()},
        "pcie_full_link": _full_link(facts.family("pcie").facts),
    }
    return {k: v for k, v in sections.items() if v not in (None, {}, [])}


def _full_link(f: dict[str, Any]) -> bool:
    """Require full PCIe links only where links were measured and none is downgraded."""
    return bool(f.get("measured")) and not f.get("downgraded")


def _cpu(f: dict[str, Any]) -> dict[str, Any] | None:
    keys = ("sockets", "cores", "threads")
    return {"model": exact(f["model"]), **{k: f[k] for k in keys if f.get(k)}} if f.get("model") else None


def _memory(f: dict[str, Any]) -> dict[str, Any] | None:
    total = f.get("mem_total_bytes")
    return {"total_gib": round(total / GiB, 1), "tolerance": 0.03} if total else None


def _os(f: dict[str, Any]) -> dict[str, Any] | None:
    if not f.get("id"):
        return None
    return {
        "id": f["id"],
        "version": exact(str(f.get("version_id", ""))),
        "kernel": exact(f.get("kernel", "")),
    }


def _common(devices: list[dict[str, Any]], key: str) -> str | None:
    values = {str(d.get(key)) for d in devices if d.get(key)}
    return exact(values.pop()) if len(values) == 1 else None


def _nvme(f: dict[str, Any]) -> dict[str, Any] | None:
    if "count" not in f:
        return None
    local = [d for d in f.get("devices", []) if d.get("local", True)]
    out: dict[str, Any] = {"count": f["count"]}
    for key in ("model", "firmware"):
        if value := _common(local, key):
            out[key] = value
    if capacity := _capacity_gb(local):
        out["capacity_gb"] = capacity
    return out


def _capacity_gb(devices: list[dict[str, Any]]) -> float | None:
    """The smallest device's size in GB, rounded down: G1 holds each device to ``>=`` it."""
    sizes = [d["capacity_bytes"] for d in devices if d.get("capacity_bytes")]
    return math.floor(min(sizes) / 1e8) / 10 if sizes else None


def _nics(f: dict[str, Any], rdma: dict[str, Any]) -> list[dict[str, Any]]:
    active = {n for p in rdma.get("ports", []) if p.get("state") == "ACTIVE" for n in p.get("netdevs", [])}
    out = []
    for nic in f.get("interfaces", []):
        if nic.get("virtual") or nic.get("operstate") != "up":
            continue
        spec = {"name": exact(nic["name"]), "mtu": nic.get("mtu"), "speed_mbps": nic.get("speed_mbps")}
        spec |= {"driver": nic.get("driver"), "rdma": nic["name"] in active}
        out.append({k: v for k, v in spec.items() if v is not None})
    return out


def _gpus(f: dict[str, Any]) -> dict[str, Any]:
    devices = f.get("devices", [])
    if not devices:
        return {"count": 0}
    vendor = devices[0]["vendor"]
    out: dict[str, Any] = {"vendor": vendor, "count": len(devices)}
    if model := _common(devices, "model"):
        out["model"] = model
    if driver := f.get("driver_version", {}).get(vendor):
        out["driver"] = f">= {driver}"
    return out


def _nvmeof(nvme: dict[str, Any], fabric: dict[str, Any]) -> dict[str, Any] | None:
    """The array as this host reaches it: subsystems with a fabric path (a local drive's PCIe
    subsystem is not one), their paths, ANA, multipath policy, connect timeouts and namespaces."""
    if "subsystems" not in nvme:
        return None
    subs = [s for s in nvme["subsystems"] if any(p.get("transport") in BOM_TRANSPORTS for p in s["paths"])]
    transports = {p["transport"] for s in subs for p in s["paths"] if p.get("transport") in BOM_TRANSPORTS}
    if len(transports) != 1:  # none, or a host on two fabrics: the BOM names one transport
        return {"subsystems": 0} if not subs else None
    t = transports.pop()
    out: dict[str, Any] = {"subsystems": len(subs), "transport": t}
    out["min_live_paths"] = max(1, min(sum(p.get("state") == "live" for p in s["paths"]) for s in subs))
    ctrls = [c for c in fabric.get("controllers", []) if c.get("transport") == t]
    nqns = {c["nqn"] for c in ctrls}
    optimized = [
        n for q in nqns for n in optimized_per_namespace([c for c in ctrls if c["nqn"] == q]).values()
    ]
    if any(p.get("ana_state") for c in ctrls for p in c["paths"]):
        out["min_optimized_paths"] = min(optimized, default=0)
    policies = {s["iopolicy"] for s in fabric.get("subsystems", []) if s["nqn"] in nqns and s.get("iopolicy")}
    if len(policies) == 1:
        out["iopolicy"] = policies.pop()
    if losses := [c["ctrl_loss_tmo_s"] for c in ctrls if isinstance(c.get("ctrl_loss_tmo_s"), int)]:
        out["min_ctrl_loss_tmo_s"] = min(losses)
    if delays := [c["reconnect_delay_s"] for c in ctrls if isinstance(c.get("reconnect_delay_s"), int)]:
        out["max_reconnect_delay_s"] = max(delays)
    if (persistent := fabric.get("persistent")) is not None:
        out["persistent"] = (
            all(configured(c, persistent) for c in ctrls) and persistent.get("autoconnect") == "enabled"
        )
    array = [d for d in nvme.get("devices", []) if d.get("transport") == t]
    for key in ("model", "firmware"):
        if value := _common(array, key):
            out[key] = value
    if capacity := _capacity_gb(array):
        out["capacity_gb"] = capacity
    heads = [n for s in fabric.get("subsystems", []) if s["nqn"] in nqns for n in s["namespaces"]]
    caches = {n["write_cache"] for n in heads if n.get("write_cache")}
    if len(caches) == 1:
        out["write_cache"] = caches.pop()
    return out
