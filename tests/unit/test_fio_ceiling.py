"""G2 finds the device's read ceiling: a block size × jobs × depth sweep, its best cell re-measured.

Issue 13 item 8: on the development VM the agent's 8 MiB parallel reader moved 2.8 × G2's
``seqread-1m`` (1 MiB, QD 32), so that cell understated the device. On main the sweep had
one block size and no ceiling: every test here fails there (no ``bs`` list, no
``kvgate.probes.fio.ceiling``, no ``best-single-read.bw`` check).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvgate.base.criteria import Inputs, Measurement, Verdict
from kvgate.configuration.fio_job import FioJob
from kvgate.configuration.fio_matrix import MatrixProfile, SweepPoint, load_profile
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.inventory.schema import Inventory
from kvgate.orchestration.g2.measure import VolumeResult, sweep_series
from kvgate.orchestration.g2.plan import plan
from kvgate.orchestration.g2.report_rows import row
from kvgate.probes.fio.ceiling import CEILING_CELL, best_cell, ceiling_spec, configuration, sweep_points
from kvgate.probes.fio.cold import ColdProof, MeasuredRun
from kvgate.probes.fio.parse import parse_output
from kvgate.probes.fio.run import FioRun
from kvgate.record import RunStore
from kvgate.record.gate_rows import G2Row
from kvgate.report import g2_tables
from kvgate.report.model import load_run

RECORDED = Path(__file__).parents[1] / "data" / "recorded" / "fio"
WORKLOADS = Path(__file__).parents[2] / "workloads" / "fio"


def measured(name: str, *, invalid: str | None = None) -> MeasuredRun:
    """A MeasuredRun around a recorded real fio 3.33 output (tests/data/recorded/fio)."""
    job = FioJob(name=name, rw="read", bs="1m", directory="/scratch")
    output = (RECORDED / f"{name}.json").read_text()
    run = FioRun(
        "lab1", job, job.to_jobfile(), "fio …", 0, "", "", output, 3.0, 40.0, parse_output(output), invalid
    )
    return MeasuredRun(run, ColdProof(None, None, 0, None, True, 0, 0), cold=False)


def profile() -> MatrixProfile:
    return MatrixProfile.model_validate(
        {
            "name": "p",
            "sweep": {"name": "sw", "bs": ["1m", "4m"], "numjobs": [1], "iodepth": [1, 4], "repeats": 1},
        }
    )


def test_the_sweep_covers_every_block_size_and_runs_once_where_it_says() -> None:
    p = profile()
    cells = list(p.fio_jobs("/scratch"))
    assert cells == ["sw-1m-j1-qd1", "sw-1m-j1-qd4", "sw-4m-j1-qd1", "sw-4m-j1-qd4"]
    assert p.fio_jobs("/scratch")["sw-4m-j1-qd4"].bs_bytes == 4 << 20
    assert {j.name for j in p.fio_jobs("/scratch", tag="h").values()} == {"h.sw"}  # one set of files for all
    assert (p.repeats_of("sw-4m-j1-qd4"), p.repeats) == (1, 3)


def test_a_single_block_size_is_still_accepted_as_text() -> None:
    sweep = MatrixProfile.model_validate(
        {"name": "p", "sweep": {"bs": "128k", "numjobs": [1], "iodepth": [1]}}
    ).sweep
    assert sweep is not None
    assert sweep.sizes == ("128k",)


def test_sweep_points_average_valid_runs_per_cell_and_drop_invalid_ones() -> None:
    single, multi = measured("single"), measured("multijob")
    runs = {
        "sw-1m-j1-qd1": (single, multi),
        "sw-1m-j1-qd4": (measured("single", invalid="fio overran its deadline"),),  # no valid run: no point
        "sw-4m-j1-qd1": (multi,),
    }
    points = sweep_points(profile(), runs)
    bw = [r.run.summary().read.bw_bytes_per_s for r in (single, multi)]
    assert points == [SweepPoint(1, 1, sum(bw) / 2, "1m"), SweepPoint(1, 1, bw[1], "4m")]


def test_the_ceiling_is_the_best_cell_over_block_sizes_and_runs_with_the_profiles_runtime() -> None:
    points = [SweepPoint(4, 32, 0.77e9, "1m"), SweepPoint(8, 8, 2.1e9, "8m"), SweepPoint(2, 8, 2.2e9, "4m")]
    best = best_cell(points)
    assert (best.bs, best.numjobs, best.iodepth) == ("4m", 2, 8)
    assert configuration(best) == "bs 4m, 2 jobs × QD 8"
    p = load_profile(WORKLOADS / "baseline.yaml")
    job = p.job(CEILING_CELL, ceiling_spec(p, best), "/scratch")  # a profile's default runtime
    assert (job.bs, job.numjobs, job.iodepth, job.runtime_s) == ("4m", 2, 8, p.defaults.runtime_s)


def test_equal_cells_prefer_fewer_ios_in_flight() -> None:
    assert best_cell([SweepPoint(8, 32, 1e9), SweepPoint(1, 8, 1e9)]).parallelism == 8


def test_g2_judges_the_ceiling_as_a_trusted_site_baseline() -> None:
    inv = Inventory.model_validate(
        {
            "site": "s",
            "scale": "smoke",
            "hosts": {"h": {"roles": ["storage-client"]}},
            "volumes": {"v": {"path": "/mnt/v", "kind": "candidate", "scratch": True}},
        }
    )
    check = next(c for c in plan(in_memory(inv)) if c.check == "volume[v].best-single-read.bw")
    # the most the device delivered, as G3 holds restores to it (a reader found the re-run's mean
    # shown as the ceiling, below the sweep's own knee)
    assert check.criterion.metric == "ceiling.best_read_bw_bytes_per_s"
    assert check.evaluate().verdict is Verdict.INVALID  # not measured is never PASS
    cold = Measurement("ceiling.best_read_bw_bytes_per_s", 2.2e9, "bytes/s", (), "not cold: vda read 0 B")
    assert check.evaluate(Inputs({cold.metric: cold})).verdict is Verdict.INVALID


def test_the_report_shows_the_ceiling_with_its_configuration_and_one_line_per_block_size(
    tmp_path: Path,
) -> None:
    points = (SweepPoint(1, 1, 1e9, "1m"), SweepPoint(1, 4, 1.5e9, "1m"), SweepPoint(1, 1, 2.2e9, "4m"))
    r = VolumeResult("h", "v", ceiling=points[2], sweep=sweep_series(points))
    r.add([Measurement("ceiling.read_bw_bytes_per_s", 2.11e9, "bytes/s")])  # the re-run, below the sweep
    r.add([Measurement("ceiling.best_read_bw_bytes_per_s", 2.2e9, "bytes/s")])
    stored = G2Row.model_validate(json.loads(json.dumps(row(r))))  # as run.json keeps it and reads it back
    # the ceiling is the re-runs' mean, not the winner of the sweep's draws; the best single read beside
    # it is what G3 holds restores to (two readers: one found the mean below the knee, one the one-off max)
    assert g2_tables.fio_cells("h", "v", stored)[-1] == (
        "2,110 (bs 4m, 1 job × QD 1, mean of its re-runs); best single read 2,200"
    )
    store = RunStore.create(tmp_path, site="lab", gate="g2", meta={"planned": [], "g2_rows": {"h/v": row(r)}})
    store.finish("complete")
    assert load_run(store.path).sweeps == {"h/v": {"1m": [(1, 1e9), (4, 1.5e9)], "4m": [(1, 2.2e9)]}}


@pytest.mark.parametrize("name", ["baseline", "smoke"])
def test_shipped_profiles_sweep_block_sizes_once_per_cell(name: str) -> None:
    p = load_profile(WORKLOADS / f"{name}.yaml")
    assert p.sweep is not None
    assert p.sweep.sizes == ("1m", "4m", "8m")
    assert p.sweep.repeats == 1
    assert p.repeats >= 2  # the ceiling cell gets the profile's repeats
