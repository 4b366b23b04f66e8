"""G2's read ceiling is the device's: the sweep covers the readers, a faster read raises it, what contradicts.

Figures from `make demo` (issue 25 item 4, issue 28 item 5): G2's KV restore read 3.87 GB/s against
a fio "ceiling" of 2.26 GB/s, checkpoint read-back beat it too, and the knee sat on the sweep's
last point (16 I/Os in flight, the grid's top).
"""

from __future__ import annotations

import json
from pathlib import Path

from kvgate.base.criteria import Measurement
from kvgate.configuration.fio_matrix import Knee, SweepPoint, fio_matrix
from kvgate.configuration.model_profiles import load_profiles, scale_models
from kvgate.orchestration.g2.ceiling import (
    BEST,
    CEILING,
    RAISED_BY,
    contradictions,
    raise_ceiling,
    readers_reach,
)
from kvgate.orchestration.g3.prediction import too_fast
from kvgate.orchestration.plan import g2_storage
from kvgate.probes.fio.ceiling import Reach, next_level
from kvgate.record.store import RunStore

KV = "kv_restore.parallel.read_bw_bytes_per_s"
READBACK = "checkpoint.readback_bw_bytes_per_s"


def demo_figures(**extra: float) -> dict[str, Measurement]:
    """The demo's G2 figures of one volume, cold-proven (no invalid reason)."""
    values = {CEILING: 2.26e9, BEST: 2.4e9, KV: 3.87e9, READBACK: 2.5e9, **extra}
    return {k: Measurement(k, v, "B/s", (f"artifacts/{k}",)) for k, v in values.items()}


EDGE_KNEE = Knee(16, 2, 8, 2.2e9, False, 0.05, "8m")  # bandwidth still grew at the grid's top
GRID = [SweepPoint(1, 1, 0.9e9, "8m"), SweepPoint(2, 8, 2.2e9, "8m")]


def test_the_sweep_must_cover_the_kv_restores_readers_at_their_block_size() -> None:
    models = load_profiles()
    smoke = {w: models[n] for w, n in scale_models("smoke").items()}
    full = {w: models[n] for w, n in scale_models("full").items()}
    assert readers_reach(smoke) == Reach(32, "4m", "KV restore: 8 requests × 4 readers, 4m reads")
    assert readers_reach(full) == Reach(128, "8m", "KV restore: 16 requests × 8 readers, 8m reads")


def test_the_sweep_goes_on_past_the_grid_until_it_covers_the_readers_and_plateaus() -> None:
    sweep = fio_matrix("smoke").sweep
    assert sweep is not None
    assert max(sweep.numjobs) * max(sweep.iodepth) == 16  # the grid stops short of the readers' 32
    reach = Reach(32, "4m", "KV restore")
    grid = [SweepPoint(2, 8, 2.0e9, "4m")]
    step = next_level(sweep, grid, reach)
    assert step is not None
    assert (step.bs, step.numjobs * step.iodepth) == ("4m", 32)
    still_growing = [*grid, SweepPoint(4, 8, 3.0e9, "4m")]  # covers 32 but +50 %: no plateau yet
    step = next_level(sweep, still_growing, reach)
    assert step is not None
    assert step.numjobs * step.iodepth == 64
    plateau = [*grid, SweepPoint(4, 8, 2.02e9, "4m")]  # +1 % at 32: the plateau, and it covers 32
    assert next_level(sweep, plateau, reach) is None
    capped = [*still_growing, SweepPoint(8, 8, 4.0e9, "4m")]  # still growing at max_parallelism 64
    assert next_level(sweep, capped, reach) is None


def test_a_faster_trusted_g2_read_raises_the_ceiling_and_says_why() -> None:
    ms = demo_figures()
    raised = {m.metric: m for m in raise_ceiling(ms, how="bs 8m, 2 jobs × QD 8")}
    assert raised[CEILING].value == 3.87e9
    assert raised[CEILING].evidence == (f"artifacts/{KV}",)  # the read that raised it is its evidence
    assert raised[BEST].value == 3.87e9  # G3's "impossible" bound is at least what G2 saw the device do
    assert raised["ceiling.fio_read_bw_bytes_per_s"].value == 2.26e9  # fio's own figure stays
    why = str(raised[RAISED_BY].value)
    assert why.startswith(
        "KV restore, parallel readers read 3.87 GB/s, above the fio sweep's ceiling of 2.26"
    )
    assert "(bs 8m, 2 jobs × QD 8)" in why
    untrusted = demo_figures() | {KV: Measurement(KV, 3.87e9, "B/s", (), "not cold: vda read 0 B")}
    assert {m.metric: m.value for m in raise_ceiling(untrusted, how="")}[CEILING] == 2.5e9  # read-back's
    assert raise_ceiling(demo_figures(**{KV: 1.0e9, READBACK: 1.0e9}), how="") == []  # none beat it


def test_a_read_g3_would_call_impossible_and_an_edge_knee_are_contradictions() -> None:
    found = contradictions("h/scratch", demo_figures(), knee=EDGE_KNEE, points=GRID)
    assert [(c.first.name, c.first.value, c.second.value) for c in found] == [
        ("KV restore, parallel readers", 3.87e9, 2.4e9),  # 1.61× the best read: beyond G3's +25 %
        ("knee (bs 8m)", 16, 16),
    ]
    assert "the sweep did not find the knee" in found[1].meaning
    ms = demo_figures()
    ms |= {m.metric: m for m in raise_ceiling(ms, how="bs 8m, 2 jobs × QD 8")}
    saturated = Knee(16, 2, 8, 2.2e9, True, 0.05, "8m")
    assert contradictions("h/scratch", ms, knee=saturated, points=GRID) == []  # the ceiling is the device's


def test_g3_holds_restores_to_the_raised_ceiling_so_the_kv_restore_g2_saw_is_not_impossible(
    tmp_path: Path,
) -> None:
    ms = demo_figures()
    ms |= {m.metric: m for m in raise_ceiling(ms, how="bs 8m, 2 jobs × QD 8")}
    store = RunStore.create(tmp_path, site="lab-a", gate="g2", meta={"planned": []})
    data = {k: {"value": m.value, "unit": m.unit, "invalid_reason": m.invalid_reason} for k, m in ms.items()}
    store.artifact("h", "g2/scratch/measurements.json", json.dumps(data))
    figures = g2_storage(store, "h", "scratch")
    assert figures is not None
    assert figures.best.value == 3.87e9  # on main: 2.4 GB/s, and a 3.87 GB/s restore was "impossible"
    assert (
        "KV restore, parallel readers read 3.87 GB/s, above the fio sweep's ceiling" in figures.ceiling.source
    )
    assert too_fast(3.87e9, 1.0, best_bytes_per_s=figures.best.value) is None
    assert too_fast(3.87e9, 1.0, best_bytes_per_s=2.4e9) is not None  # the fio-only bound called it so


def test_parallel_readers_slower_than_one_reader_are_an_anomaly_on_page_1() -> None:
    # the demo: KV restore 5,128 MB/s in parallel against 6,088 MB/s with one reader per request, said
    # on page 2 as "no faster" (a fresh reader, issue 25)
    serial = "kv_restore.serial.read_bw_bytes_per_s"
    ms = demo_figures(**{serial: 6.088e9, KV: 5.128e9, BEST: 7.1e9})
    (found,) = contradictions("h/scratch", ms, knee=None, points=GRID)
    assert (found.first.value, found.second.value) == (5.128e9, 6.088e9)
    assert found.meaning.startswith("The parallel readers read at 0.84× one reader's bandwidth")
    within = demo_figures(**{serial: 5.5e9, KV: 5.128e9, BEST: 7.1e9})  # 0.93×: run-to-run noise
    assert contradictions("h/scratch", within, knee=None, points=GRID) == []
