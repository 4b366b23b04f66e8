"""The typed fio job and the baseline matrix profile: what kvgate refuses to render, and the stats."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvgate.base.errors import ConfigError
from kvgate.configuration.fio_job import FioJob, fio_size, parse_size
from kvgate.configuration.fio_matrix import SweepPoint, cv, load_profile, saturation_knee

WORKLOADS = Path(__file__).parents[2] / "workloads" / "fio"


def job(**kw: object) -> FioJob:
    base: dict[str, object] = {"name": "rr", "rw": "randread", "bs": "4k", "directory": "/scratch"}
    return FioJob(**(base | kw))  # type: ignore[arg-type]


def test_jobfile_is_time_based_with_runtime_and_ramp_and_no_group_reporting() -> None:
    text = job(iodepth=32, numjobs=4, runtime_s=30, ramp_s=5).to_jobfile()
    lines = text.splitlines()
    assert {"time_based=1", "runtime=30", "ramp_time=5", "direct=1", "ioengine=libaio"} <= set(lines)
    assert {"[rr]", "rw=randread", "bs=4k", "iodepth=32", "numjobs=4", "directory=/scratch"} <= set(lines)
    assert "group_reporting" not in text
    assert "create_only=1" in job().to_jobfile(layout_only=True)
    assert "create_only" not in text


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"ramp_s": 60, "runtime_s": 60}, "ramp_s < runtime_s"),
        ({"ramp_s": 90, "runtime_s": 60}, "ramp_s < runtime_s"),
        ({"runtime_s": 0, "ramp_s": 0}, "time_based needs runtime_s"),
        ({"filename": "/scratch/f"}, "exactly one of filename, directory"),
        ({"directory": None}, "exactly one of filename, directory"),
        ({"bs": "4 lumps"}, "fio sizes"),
        ({"name": "a b"}, "name must match"),
        ({"extra": (("group_reporting", "1"),)}, "managed by kvgate"),
        ({"extra": (("time_based", "0"),)}, "managed by kvgate"),
        ({"extra": (("description", "x\n[evil]\nrw=write"),)}, "single fio option line"),
        ({"verify": "crc32c\ndirectory=/etc"}, "verify must be one of fio's"),
        ({"verify": "crc32c directory=/etc"}, "verify must be one of fio's"),
        ({"bs": "4k\nfilename=/etc/passwd"}, "fio sizes"),
        ({"size": " 16g"}, "fio sizes"),
        ({"directory": "/scratch\n[evil]"}, "must be an absolute path"),
        ({"directory": "/scratch:/etc"}, "fio splits ':'"),
        ({"directory": "/scratch/${HOME}"}, "must be an absolute path"),
        ({"directory": "/scratch/" + "d" * 1100}, "must be an absolute path"),
        ({"ioengine": "exec"}, "ioengine must be one of"),
        ({"ioengine": "external:/tmp/evil.so"}, "ioengine must be one of"),
        ({"extra": (("exec_prerun", "rm -rf /"),)}, "not one kvgate allows"),
        ({"extra": (("write_bw_log", "/etc/cron.d/x"),)}, "not one kvgate allows"),
        ({"extra": (("rate", "10m=1"),)}, "single fio option line"),
        ({"iodepth": "8\nfilename=/etc"}, "whole numbers"),
    ],
)
def test_job_refuses_to_exist_when_unsafe_to_render(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        job(**changes)


def test_job_properties() -> None:
    j = job(rw="randwrite", bs="1MiB", size="16m", numjobs=4)
    assert (j.bs_bytes, j.size_bytes, j.working_set_bytes) == (1 << 20, 16 << 20, 64 << 20)
    assert j.writes
    assert not j.reads
    shared = job(directory=None, filename="/scratch/f", size="16m", numjobs=4)
    assert shared.working_set_bytes == 16 << 20  # clones share one file
    assert job().replace(iodepth=8).iodepth == 8


def test_sizes_are_1024_based_like_fio() -> None:
    assert [parse_size(s) for s in ("4k", "4K", "1m", "2g", "1MiB", "512")] == [
        4096,
        4096,
        1 << 20,
        2 << 30,
        1 << 20,
        512,
    ]
    assert [fio_size(n) for n in (4096, 1 << 20, 3 << 30, 1000)] == ["4k", "1m", "3g", "1000"]


@pytest.mark.parametrize("name", ["baseline", "smoke"])
def test_shipped_profiles_load(name: str) -> None:
    profile = load_profile(WORKLOADS / f"{name}.yaml")
    jobs = profile.fio_jobs("/scratch/kvgate", tag="gpu-1")
    assert {"seqread-1m", "seqwrite-1m", "randread-4k"} <= set(jobs)
    assert jobs["seqread-1m"].name == "gpu-1.seqread-1m"  # host tag in the fio job name
    assert (jobs["seqread-1m"].rw, jobs["seqread-1m"].bs_bytes) == ("read", 1 << 20)
    assert (jobs["randread-4k"].rw, jobs["randread-4k"].bs_bytes) == ("randread", 4096)
    assert all(j.direct and j.ramp_s < j.runtime_s for j in jobs.values())
    assert profile.sweep is not None
    sweep_cells = len(profile.sweep.sizes) * len(profile.sweep.numjobs) * len(profile.sweep.iodepth)
    assert len(jobs) == len(profile.jobs) + sweep_cells
    assert {"1m", "4m", "8m"} <= set(profile.sweep.sizes)  # the ceiling is searched over block sizes too


def test_baseline_repeats_default_to_three() -> None:
    assert load_profile(WORKLOADS / "baseline.yaml").repeats == 3


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('verify: "crc32c\\ndirectory=/etc"', "jobs.a.verify"),
        ('bs: "1m\\nfilename=/etc/passwd"', "jobs.a.bs"),
        ("size: 1m 2m", "jobs.a.size"),
    ],
)
def test_a_job_file_value_from_a_profile_is_checked_for_its_option(
    tmp_path: Path, line: str, field: str
) -> None:
    path = tmp_path / "bad.yaml"
    bs = "" if line.startswith("bs:") else "    bs: 1m\n"
    path.write_text(f"name: x\njobs:\n  a:\n    rw: read\n{bs}    {line}\n")
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert (err.value.path, err.value.field) == (str(path), field)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ("name: x\nrepeats: 0\n", "repeats"),
        ("name: x\njobs:\n  a: {rw: read, bs: 1m, iodepht: 4}\n", "jobs.a.iodepht"),
        ("name: x\ndefaults: {runtime_s: 5, ramp_s: 5}\njobs:\n  a: {rw: read, bs: 1m}\n", "jobs"),
    ],
)
def test_profile_errors_name_file_and_field(tmp_path: Path, body: str, field: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(body)
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert err.value.path == str(path)
    assert err.value.field == field


def test_cv() -> None:
    assert cv([100.0, 100.0, 100.0]) == 0
    assert cv([90.0, 110.0]) == pytest.approx(((200.0) ** 0.5) / 100)
    assert cv([100.0]) is None


def test_knee_is_where_more_parallelism_stops_paying() -> None:
    points = [
        SweepPoint(1, 1, 100.0),
        SweepPoint(1, 4, 300.0),
        SweepPoint(2, 4, 310.0),
        SweepPoint(4, 4, 312.0),
    ]
    knee = saturation_knee(points, 0.05)
    assert (knee.parallelism, knee.numjobs, knee.iodepth, knee.saturated) == (4, 1, 4, True)


def test_knee_ignores_a_plateau_followed_by_growth() -> None:
    points = [
        SweepPoint(1, 1, 100.0),
        SweepPoint(1, 2, 101.0),
        SweepPoint(1, 4, 200.0),
        SweepPoint(1, 8, 204.0),
    ]
    assert saturation_knee(points).parallelism == 4


def test_knee_of_a_still_growing_sweep_is_not_saturated() -> None:
    knee = saturation_knee([SweepPoint(1, 1, 100.0), SweepPoint(1, 2, 200.0), SweepPoint(1, 4, 400.0)])
    assert (knee.parallelism, knee.saturated) == (4, False)


def test_knee_takes_the_best_cell_per_parallelism() -> None:
    points = [
        SweepPoint(1, 1, 100.0),
        SweepPoint(4, 1, 150.0),
        SweepPoint(1, 4, 400.0),
        SweepPoint(2, 4, 405.0),
    ]
    knee = saturation_knee(points)
    assert (knee.parallelism, knee.numjobs, knee.iodepth) == (4, 1, 4)
