"""G4 report sections: the soak's windows, its trends against the site's limits, and what it could not show.

Rows are kept per host/deployment in run.json (``g4_rows``), so a resumed run adds to
the earlier ones. A 72-hour soak has hundreds of windows: the table shows at most
MAX_ROWS of them, evenly spaced with the first and the last; every window is in
``artifacts/<host>/g4/<deployment>/windows.jsonl``.
"""

from __future__ import annotations

import time
from typing import Any

from kvgate.base.criteria import Inputs, fmt
from kvgate.base.units import MiB
from kvgate.orchestration.g3.sections import in_order, table
from kvgate.orchestration.g4.plan import G4Check
from kvgate.orchestration.g4.soak import SoakResult
from kvgate.orchestration.g4.trends import Window, hit_ratio, slopes

MAX_ROWS = 48
WINDOW_COLUMNS = [
    "host/engine",
    "window",
    "start (UTC)",
    "requests ok/failed",
    "empty",
    "TTFT p50 ms",
    "TTFT p99 ms",
    "TPOT p50 ms",
    "output tok/s",
    "TTFT p50 ms reuse / fresh",
    "engine RSS MiB",
    "tier MiB",
    "device MiB read / written",
    "hit ratio",
    "canary",
]
VERDICT_COLUMNS = ["host/engine", "check", "measured", "site limit", "source", "verdict"]


def _n(value: float | None, digits: int = 3) -> str:
    """``digits`` significant digits; large values whole (3106, not 3.11e+03)."""
    if value is None:
        return "—"
    return f"{value:.0f}" if abs(value) >= 10**digits else f"{value:.{digits}g}"


def shown(windows: tuple[Window, ...]) -> list[Window]:
    """At most MAX_ROWS windows, evenly spaced, always the first and the last."""
    if len(windows) <= MAX_ROWS:
        return list(windows)
    step = (len(windows) - 1) / (MAX_ROWS - 1)
    return [windows[round(i * step)] for i in range(MAX_ROWS)]


def window_row(where: str, w: Window, first: Window) -> list[str]:
    s = w["summary"]
    dev = "—"
    if w["device_read_bytes"] is not None:
        dev = f"{w['device_read_bytes'] / MiB:.1f} / {w['device_write_bytes'] / MiB:.1f}"
    tier = "—" if w["cache_dir_bytes"] is None else f"{w['cache_dir_bytes'] / MiB:.1f}"
    canary = "computed" if w is first else _canary(w, first)
    start, kinds = _utc(w["start_unix_s"]), f"{_n(w['reuse_ttft_p50_ms'])} / {_n(w['fresh_ttft_p50_ms'])}"
    return [
        where,
        str(w["index"]),
        start,
        f"{s['completed']}/{s['failed']}",
        str(w["empty_responses"]),
        _n(s["p50_ttft_ms"]),
        _n(s["p99_ttft_ms"]),
        _n(s["p50_tpot_ms"]),
        _n(s["output_throughput_tok_per_s"]),
        kinds,
        f"{w['rss_kib'] / 1024:.0f}",
        tier,
        dev,
        _n(hit_ratio(w), 2),
        canary,
    ]


def _canary(w: Window, first: Window) -> str:
    want = {c["index"]: c["text"] for c in first["canary"]}
    same = sum(1 for c in w["canary"] if c["success"] and want.get(c["index"]) == c["text"])
    return f"{same}/{len(w['canary'])} identical"


def _utc(unix_s: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(unix_s))


def verdict_row(check: G4Check, r: SoakResult) -> list[str]:
    j = check.evaluate(Inputs(r.measurements, detail=r.detail(check.key)))
    m, c = j.measurement, check.criterion
    measured = "—" if m is None or m.value is None else f"{fmt(m.value)} {m.unit}".strip()
    limit = f"{c.comparator} {fmt(c.expected)} {c.unit}".strip()
    return [f"{r.host}/{r.deployment}", check.check, measured, limit, c.source, j.verdict.value]


def rows(r: SoakResult, checks: list[G4Check]) -> dict[str, Any]:
    """Everything the G4 sections show for one deployment on one host (stored in run.json)."""
    where = f"{r.host}/{r.deployment}"
    ws = r.soak.windows
    return {
        "windows": [window_row(where, w, ws[0]) for w in shown(ws)],
        "verdicts": [verdict_row(c, r) for c in checks],
        "notes": note(r),
        # for the report's charts: the tiers' summed capacity (the windows are in windows.jsonl)
        "figures": {"cap_bytes": r.soak.cap_bytes},
    }


def note(r: SoakResult) -> str:
    """Slopes, near-ties, the soak's end, and what this engine cannot show."""
    s = slopes(r.soak)
    parts = [
        f"{r.host}/{r.deployment}: {len(r.soak.windows)} window(s), ended by {r.soak.ended}; slopes per hour "
        f"(all windows): TTFT p50 {_n(s['ttft_p50_ms_per_h'])} ms, engine RSS {_n(s['rss_mib_per_h'])} MiB, "
        f"tier {_n(s['cache_mib_per_h'])} MiB."
    ]
    if r.near_ties:
        parts.append(
            f"{len(r.near_ties)} canary output(s) differed only from a near-tie on; first: {r.near_ties[0]}."
        )
    if not r.tier.serves_concurrently:
        parts.append(f"{r.tier.name} serves one request at a time: concurrent requests queue in front of it.")
    return " ".join(parts)


NOTE = (
    "Each window: batches of streamed requests for window_s (a share of them turns on shared documents, "
    "the rest fresh prompts, all unique to this run), then the canary prompts (greedy, the same every "
    "window: the first window computes them, later ones are served from cache and must match), then a "
    "sample on the host: the engines' RSS (every process of their groups), the tier directory, the "
    "candidate device's bytes and the engines' hit counter. TTFT/TPOT percentiles per window as vllm bench "
    "serve computes them. Trends: median of the last baseline windows against the first after warm-up "
    "(workloads/g4/<scale>.yaml)."
)


def sections(stored: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The G4 sections of the report, from every stored host/deployment."""
    ordered, notes = in_order(stored, "notes")
    return [
        table("G4 soak windows", WINDOW_COLUMNS, "windows", ordered, f"{NOTE} {notes}"),
        table(
            "G4 verdicts against the site's limits",
            VERDICT_COLUMNS,
            "verdicts",
            ordered,
            "The seed sets no G4 figures beyond 72 h stable: every limit is the site's "
            "(workloads/g4/<scale>.yaml). Verdicts before waivers; the checks table shows waivers.",
        ),
    ]
