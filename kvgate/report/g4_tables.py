"""G4's report tables, laid out at render time: the soak's windows, its trends, its verdicts.

Read from the windows the soak stored (``artifacts/<host>/g4/<deployment>/windows.jsonl``)
and what G4 recorded per deployment (``g4_rows``: verdicts before waivers, how the soak
ended, its near-ties and tier; kvgate.orchestration.g4.report_rows). A 72-hour soak has
hundreds of windows: the table shows at most MAX_ROWS of them, evenly spaced with the
first and the last.

>>> cell(3106.4), cell(0.09623), cell(None)
('3,106', '0.0962', '—')
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kvgate.base.safefile import open_regular
from kvgate.base.units import MiB
from kvgate.probes.agent import hit_ratio
from kvgate.record import (
    G4Row,
    Section,
    SoakFacts,
    VerdictRow,
)
from kvgate.report.engine_tables import Engines, engine_cells, engine_tables
from kvgate.report.g4_extra_tables import evidence_sections, utc
from kvgate.report.numbers import cell, human
from kvgate.report.tables import Cells, in_order, limit_cell, measured_cell, table

Window = dict[str, Any]
MAX_ROWS = 48
WINDOW_COLUMNS = [
    "host/engine",
    "window",
    "start (UTC)",
    "requests ok/failed",
    "empty",
    "TTFT p50 s",  # TTFT in seconds everywhere in the report
    "TTFT p99 s",
    "TPOT p50 ms",
    "output tok/s",
    "TTFT p50 s reuse / fresh",
    "engine RSS MiB",
    "tier MiB",
    "device MiB read / written (of which the engines read)",
    "hit ratio",
    "canary",
]
VERDICT_COLUMNS = ["host/engine", "check", "measured", "site limit", "source", "verdict"]
NOTE = (
    "Each window: batches of streamed requests for window_s (a share of them turns on shared documents, "
    "the rest fresh prompts, all unique to this run), then the canary prompts (greedy, the same every "
    "window: the first window computes them, later ones are served from cache and must match), then a "
    "sample on the host: the engines' RSS (every process of their groups, or of their containers' "
    "cgroups), the tier directory, the candidate device's bytes and the engines' hit counter. TTFT/TPOT "
    "percentiles per window as vllm bench serve computes them: with fewer than 100 requests in a window "
    "(its requests column), its p99 is its slowest request or next to it."
)
VERDICT_NOTE = (
    "The seed sets no G4 figures beyond 72 h stable: every limit is the site's "
    "(workloads/g4/<profile>.yaml). Verdicts before waivers; the checks table shows waivers."
)


def soak_windows(path: Path) -> list[Window]:
    """The stored windows in order; a torn or foreign line is left out (none: no file). Read only as a
    regular file (a link or FIFO planted there is a StoreError naming it)."""
    try:
        with open_regular(path) as f:
            text = f.read().decode(errors="replace")
    except FileNotFoundError:
        return []
    out = []
    for line in text.splitlines():
        try:
            w = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(w, dict) and isinstance(w.get("end_unix_s"), int | float):
            out.append(w)
    return out


def shown(windows: list[Window]) -> list[Window]:
    """At most MAX_ROWS windows, evenly spaced, always the first and the last."""
    if len(windows) <= MAX_ROWS:
        return list(windows)
    step = (len(windows) - 1) / (MAX_ROWS - 1)
    return [windows[round(i * step)] for i in range(MAX_ROWS)]


SPIKE = 10  # a window whose TTFT p99 is this many times its soak's median p99 is marked, and said on page 1


def median_of(windows: list[Window], key: str) -> float | None:
    """The windows' median summary figure ``key`` (the upper middle of an even count), None if none."""
    found = sorted(v for w in windows if isinstance(v := w["summary"].get(key), int | float))
    return found[len(found) // 2] if found else None


def spikes(windows: list[Window]) -> list[tuple[Window, float]]:
    """The windows whose TTFT p99 is over SPIKE times the windows' median p99, each with that multiple
    (a reader found a last window's p99 45× the others' in a chart, with the soak's p50 trend said on
    page 1 and nothing of the spike)."""
    typical = median_of(windows, "p99_ttft_ms")
    return [
        (w, p99 / typical)
        for w in windows
        if typical and isinstance(p99 := w["summary"]["p99_ttft_ms"], int | float) and p99 > SPIKE * typical
    ]


def spike_said(where: str, windows: list[Window]) -> list[str]:
    """Page 1's words for each TTFT p99 spike: the window, its p99 against the median, its requests."""
    median, done = median_of(windows, "p99_ttft_ms"), median_of(windows, "completed")
    return [
        f"{where}, window {w['index']}: TTFT p99 {human(w['summary']['p99_ttft_ms'] / 1000, 's')}, "
        f"{times:.0f}× its windows' median {human((median or 0) / 1000, 's')}, with "
        f"{w['summary']['completed']:,} requests completed against a median of {done or 0:,.0f}"
        for w, times in spikes(windows)
    ]


def window_cells(
    where: str,
    w: Window,
    first: Window,
    *,
    warmup: int = 0,
    typical_tpot_ms: float | None = None,
    spike: float | None = None,
) -> list[str]:
    s = w["summary"]
    tpot = cell(s["p50_tpot_ms"])
    if (
        isinstance(s["p50_tpot_ms"], int | float)
        and typical_tpot_ms
        and s["p50_tpot_ms"] < typical_tpot_ms / 10
    ):
        tpot += " (collapsed: tokens read in bursts)"  # a reader found 0.00383 ms beside 1.5–2 ms, unmarked
    dev = "—"
    if w["device_read_bytes"] is not None:
        dev = f"{w['device_read_bytes'] / MiB:.1f} / {w['device_write_bytes'] / MiB:.1f}"
        if isinstance(own := w.get("engine_read_bytes"), int | float):
            dev += f" (engines read {own / MiB:.1f})"
    tier = "—" if w["cache_dir_bytes"] is None else f"{w['cache_dir_bytes'] / MiB:.1f}"
    canary = "computed" if w is first else _canary(w, first)
    kinds = f"{cell(w['reuse_ttft_p50_ms'], 1000)} / {cell(w['fresh_ttft_p50_ms'], 1000)}"
    start = utc(w["start_unix_s"])
    return [
        where,
        f"{w['index']} (warm-up)" if isinstance(w["index"], int) and w["index"] < warmup else str(w["index"]),
        start,
        f"{s['completed']}/{s['failed']}",
        str(w["empty_responses"]),
        cell(s["p50_ttft_ms"], 1000),
        cell(s["p99_ttft_ms"], 1000) + (f" (spike: {spike:.0f}× the median)" if spike else ""),
        tpot,
        cell(s["output_throughput_tok_per_s"]),
        kinds,
        f"{w['rss_kib'] / 1024:.0f}",
        tier,
        dev,
        cell(hit_ratio(w), digits=2),
        canary,
    ]


def _canary(w: Window, first: Window) -> str:
    want = {c["index"]: c["text"] for c in first["canary"]}
    same = sum(1 for c in w["canary"] if c["success"] and want.get(c["index"]) == c["text"])
    return f"{same}/{len(w['canary'])} identical"


def verdict_cells(where: str, v: VerdictRow) -> list[str]:
    return [where, v.check, measured_cell(v), limit_cell(v), v.source, v.verdict]


def note(where: str, soak: SoakFacts, windows: list[Window]) -> str:
    """The soak's end, near-ties, and what this engine cannot show."""
    ties = soak.near_ties
    parts = [f"{where}: {len(windows)} window(s), ended by {soak.ended}."]
    spent = [w["sample_cpu_s"] for w in windows if isinstance(w.get("sample_cpu_s"), int | float)]
    if spent and len(windows) > 1:
        span = windows[-1]["end_unix_s"] - windows[0]["start_unix_s"]
        parts.append(f"The sampler took {100 * sum(spent) / span:.3f} % of a core (its samples' CPU time).")
    if ties:
        parts.append(f"{len(ties)} canary output(s) differed only from a near-tie on; first: {ties[0]}.")
    if not soak.serves_concurrently:
        queue = "concurrent requests queue in front of it"
        parts.append(f"{soak.tier} serves one request at a time: {queue}.")
    if slower := reuse_slower(windows):
        parts.append(slower)
    if io := busiest_window(windows):
        parts.append(io)
    return " ".join(parts)


def busiest_window(windows: list[Window]) -> str:
    """Which window moved the device most, and what that says — once stated for every soak, and a reader
    found the demo's table against it (its window 4 read 8.9 GB, its first 0.6)."""
    moved = [
        (w["device_read_bytes"] + (w.get("device_write_bytes") or 0), w["index"])
        for w in windows
        if isinstance(w.get("device_read_bytes"), int | float)
    ]
    if len(moved) < 2:
        return ""
    most, index = max(moved)
    if index == moved[0][1] and any(w.get("cache_dir_bytes") is not None for w in windows):
        return (
            "Its first window's device I/O is the largest: the tier starts empty, so every shared "
            "document's state is written to it for the first time."
        )
    if index == moved[0][1]:  # a reader found a tier-less engine's first window explained by its tier
        return (
            "Its first window's device I/O is the largest. This engine has no tier on the storage: that "
            "I/O is the integrity load's first files and the host's own, not a KV tier's."
        )
    busiest = next(w for w in windows if w["index"] == index)
    own = busiest.get("engine_read_bytes")
    engines = (
        f" The engines themselves read {own / MiB:,.1f} MiB of its {busiest['device_read_bytes'] / MiB:,.0f} "
        "MiB read: the rest was the integrity load's and other readers'."
        if isinstance(own, int | float)
        else ""
    )
    return (
        f"The device moved the most in window {index} ({most / MiB:,.0f} MiB read and written; the first "
        f"window {moved[0][0] / MiB:,.0f} MiB): its counters count every reader and writer of the device, "
        f"the soak's and anything else on the host.{engines}"
    )


def reuse_slower(windows: list[Window]) -> str:
    """'Turns on a shared document were slower than fresh prompts in 3 of 5 windows …': said, since the
    tier exists to make them faster (a reader found it only by comparing two columns)."""
    pairs = [(r, f) for w in windows if isinstance(r := w.get("reuse_ttft_p50_ms"), int | float)
             and isinstance(f := w.get("fresh_ttft_p50_ms"), int | float)]  # fmt: skip
    slower = sum(1 for reuse, fresh in pairs if reuse > fresh)
    if not pairs or 2 * slower <= len(pairs):
        return ""
    return (
        f"Turns on a shared document were slower than fresh prompts (TTFT p50) in {slower} of {len(pairs)} "
        "windows: the cache did not speed reuse up here (seen, not judged)."
    )


def deployment(where: str, row: G4Row, run_dir: Path, warmup: int) -> tuple[Cells, Cells, str]:
    """One host/deployment's window rows (the first ``warmup`` marked: not in the trends), verdict rows
    and note."""
    host, _, name = where.partition("/")
    windows = soak_windows(run_dir / "artifacts" / host / "g4" / name / "windows.jsonl")
    typical, spiked = median_of(windows, "p50_tpot_ms"), {id(w): times for w, times in spikes(windows)}
    rows = [
        window_cells(where, w, windows[0], warmup=warmup, typical_tpot_ms=typical, spike=spiked.get(id(w)))
        for w in shown(windows)
    ]
    return rows, [verdict_cells(where, v) for v in row.verdicts], note(where, row.soak, windows)


def sections(
    stored: Mapping[str, G4Row], run_dir: Path, engines: Engines, *, warmup: int = 0
) -> list[Section]:
    """The G4 sections of the report, from every stored host/deployment (``engines``: run.json's;
    ``warmup``: the profile's warm-up windows, kept out of the trends)."""
    ordered = list(in_order(stored))

    parts = [deployment(k, r, run_dir, warmup) for k, r in ordered]
    notes = " ".join(p[2] for p in parts)
    return [
        table("G4 soak windows", WINDOW_COLUMNS, [c for p in parts for c in p[0]], f"{NOTE} {notes}"),
        table(
            "G4 verdicts against the site's limits",
            VERDICT_COLUMNS,
            [c for p in parts for c in p[1]],
            VERDICT_NOTE,
        ),
        *evidence_sections(ordered),
        *engine_tables("G4", [c for k, _ in ordered for c in engine_cells(k, engines.get(k) or {})]),
    ]
