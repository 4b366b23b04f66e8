"""What the soak samples on the engine host after every window: memory, cache bytes, I/O, hits.

All of it comes from the kernel and the engine itself, read on the host:

- the engine's memory: VmRSS and RssAnon summed over every process of its
  process group (vLLM's EngineCore is a child; LMCache #3767 grew RssAnon), or, in a
  container, whose processes are not in the runtime client's group, over its cgroup's;
- the KV tier's directory size in apparent bytes, against its configured cap
  (LMCache #1454, #4725: unbounded disk growth);
- the read and write bytes of the devices carrying the candidate volume (kvgate.probes.evidence),
  and what the engines themselves read (their sessions' ``read_bytes``, or containers' ``io.stat``);
- one Prometheus counter of the engine (its hit tokens), when the profile names one.

>>> group_memory_kib([]) == {"rss_kib": 0, "rss_anon_kib": 0, "processes": 0}
True
>>> counter_value('a_total{x="1"} 3\\na_total{x="2"} 4\\nb 9\\n', "a_total")
7.0
>>> counter_value('a_total{x="1"} 3\\na_total{x="2"} 4\\n', 'a_total{x="2"}')
4.0
>>> counter_value('a_total{tp_rank="0"} 5\\na_total{tp_rank="1"} 5\\n', "a_total")
5.0
"""

from __future__ import annotations

import http.client
import os
import re
import urllib.request
from typing import Any

from kvgate.probes.agent.engine_log import LogHits
from kvgate.probes.evidence import EngineGone, cgroup_pids, device_bytes, engine_reads

RANK_LABELS = ("tp_rank", "pp_rank", "attn_tp_rank")  # as kvgate.probes.engines.metrics (not shippable here)
_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"')


def group_pids(pgid: int) -> list[int]:
    """Every live process whose process group is ``pgid`` (field 5 of /proc/<pid>/stat)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # it exited while we looked
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            pids.append(int(entry))
    return sorted(pids)


def group_memory_kib(pids: list[int]) -> dict[str, int]:
    """VmRSS and RssAnon (KiB) summed over ``pids``."""
    rss = anon = seen = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        seen += 1
        rss += int(fields.get("VmRSS", "0 kB").split()[0])
        anon += int(fields.get("RssAnon", "0 kB").split()[0])
    return {"rss_kib": rss, "rss_anon_kib": anon, "processes": seen}


def engine_memory_kib(eng: dict[str, Any], pids: list[int]) -> dict[str, int]:
    """One engine's memory: over its container's processes when it runs in one, else its group's."""
    if eng.get("container_pid") is None:
        return group_memory_kib(pids)
    try:
        return group_memory_kib(cgroup_pids(eng["container_pid"]))
    except EngineGone:  # stopped: nothing of it is left in memory
        return group_memory_kib([])


def engine_read_bytes(eng: dict[str, Any]) -> int | None:
    """What one engine has read from storage so far: its session's ``read_bytes``, or its container's
    cgroup's; None when it is gone or unreadable (a window's delta is then not said)."""
    container = eng.get("container_pid")
    try:
        found = engine_reads(container or eng["pgid"], "cgroup" if container else "session")
    except EngineGone:
        return None
    value = found.get("read_bytes")
    return int(value) if isinstance(value, int) else None


def dir_bytes(path: str | None) -> int | None:
    """Apparent bytes of every file under ``path`` (as ``du -sb``); None without a path or directory."""
    if not path or not os.path.isdir(path):
        return None
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:  # evicted while we walked
                continue
    return total


def volume_bytes(volume: dict[str, Any] | None) -> dict[str, int] | None:
    """Read and written bytes so far of the devices carrying the volume (probes.evidence), None without."""
    if not volume or not volume.get("carriers"):
        return None
    counts = device_bytes(tuple(volume["carriers"]))
    return {
        "read_bytes": sum(r for r, _ in counts.values()),
        "write_bytes": sum(w for _, w in counts.values()),
    }


def counter_value(text: str, selector: str) -> float | None:
    """Sum of the samples matching ``name`` or ``name{label="v",...}``; None when none matches.

    Copies of one count exported per TP/PP rank are counted once (kvgate.probes.engines.metrics.RANK_LABELS).
    """
    name, _, wanted = selector.partition("{")
    want = dict(_LABEL.findall(wanted))
    per_replica: dict[tuple[tuple[str, str], ...], float] = {}
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if not m or m.group(1) != name:
            continue
        labels = dict(_LABEL.findall(m.group(2) or ""))
        if all(labels.get(k) == v for k, v in want.items()):
            replica = tuple(sorted((k, v) for k, v in labels.items() if k not in RANK_LABELS))
            per_replica[replica] = max(float(m.group(3)), per_replica.get(replica, float("-inf")))
    return sum(per_replica.values()) if per_replica else None


def scrape_counter(url: str | None, selector: str | None, timeout_s: float = 10.0) -> float | None:
    """The engine's counter now; None when the profile names none. Raises OSError when unreachable."""
    if not url or not selector:
        return None
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        return counter_value(response.read().decode("utf-8", "replace"), selector)


def sample(engines: list[dict[str, Any]], volume: dict[str, Any] | None) -> dict[str, Any]:
    """One sample of everything the soak trends, summed over the engines, named with units.

    Each engine is ``{"pgid", "container_pid", "cache_dir", "metrics_url", "hit_counter", "hit_log"}``
    (None where it has none; ``container_pid``: the container's init, for an engine in a container;
    ``hit_log``: the log of an engine that counts its hits there alone, kvgate.probes.agent.engine_log).
    """
    out: dict[str, Any] = {"rss_kib": 0, "rss_anon_kib": 0, "processes": 0, "engines_alive": 0}
    caches, hits, errors, reads, prompts = [], [], [], [], []
    for eng in engines:
        reads.append(engine_read_bytes(eng))
        pids = group_pids(eng["pgid"])
        out["engines_alive"] += bool(pids)
        for key, value in engine_memory_kib(eng, pids).items():
            out[key] += value
        caches.append(dir_bytes(eng.get("cache_dir")))
        if eng.get("hit_log"):  # an engine without a hit counter: the hits its log says, read on
            tally = eng.setdefault("_log_hits", LogHits(eng["hit_log"])).count()
            hits.append(None if tally is None else tally.restored)
            prompts.append(None if tally is None else tally.prompt)
            continue
        try:
            hits.append(scrape_counter(eng.get("metrics_url"), eng.get("hit_counter")))
        except (OSError, ValueError, http.client.HTTPException) as exc:  # one bad scrape: this sample only
            hits.append(None)
            errors.append(f"{eng.get('metrics_url')}: {exc}")
    out["cache_dir_bytes"] = None if None in caches else sum(c for c in caches if c is not None)
    out["engine_read_bytes"] = None if None in reads else sum(r for r in reads if r is not None)
    out["hit_counter"] = None if None in hits else sum(h for h in hits if h is not None)
    # the prompts' tokens as the engines logged them, where every engine logs its hits (None elsewhere)
    logged = [p for p in prompts if p is not None]
    out["logged_prompt_tokens"] = sum(logged) if logged and len(logged) == len(engines) else None
    out["metrics_errors"] = errors
    out["device"] = volume_bytes(volume)
    return out
