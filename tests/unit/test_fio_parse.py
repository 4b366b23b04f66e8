"""fio json+ parsing on recorded real fio 3.33 outputs (tests/data/recorded/fio/PROVENANCE.md).

Robust ingestion (FIELD-NOTES rows 8 and 10; fio #731, #1685, #2132, #1668): the
JSON is found after fio's error lines, jobs are aggregated by kvgate, latency
percentiles come from the merged json+ histograms and equal fio's own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvgate.base.criteria import Criterion, Verdict, judge
from kvgate.configuration.fio_job import FioJob
from kvgate.probes.fio.hist import (
    CEILING_FLOOR_NS,
    CEILING_NS,
    PLAT_NR,
    Histogram,
    plat_idx_to_val,
    plat_val_to_idx,
)
from kvgate.probes.fio.measure import measurements, percentile_measurement
from kvgate.probes.fio.parse import FioOutputError, FioResult, locate_json, parse_output
from kvgate.probes.fio.run import FioRun

RECORDED = Path(__file__).parents[1] / "data" / "recorded" / "fio"
OUTPUTS = ["single", "seqwrite", "multijob", "group_reporting", "error_prefix", "clients", "ceiling"]


def recorded(name: str) -> FioResult:
    return parse_output((RECORDED / f"{name}.json").read_text())


@pytest.mark.parametrize("name", OUTPUTS)
def test_every_recording_parses_with_version_and_jobs(name: str) -> None:
    result = recorded(name)
    assert result.fio_version == "fio-3.33"
    assert result.jobs


@pytest.mark.parametrize("name", OUTPUTS)
def test_histogram_percentiles_equal_fios_own(name: str) -> None:
    """Every percentile fio printed is reproduced exactly from the json+ bins."""
    checked = 0
    for job in recorded(name).jobs:
        for d in (job.read, job.write):
            for p, fio_value in d.fio_clat_percentiles_ns:
                assert d.clat.percentile_ns(p) == fio_value, (job.name, p)
                checked += 1
    assert checked > 0 or name == "error_prefix"


def test_histogram_samples_equal_fios_sample_count() -> None:
    raw = json.loads((RECORDED / "single.json").read_text())["jobs"][0]["read"]["clat_ns"]
    assert recorded("single").jobs[0].read.clat.samples == raw["N"] > 1000


def test_multijob_aggregate_is_the_sum_of_jobs() -> None:
    result = recorded("multijob")
    summary = result.summary()
    assert len(result.jobs) == 4
    assert not result.group_reported
    assert summary.read.bw_bytes_per_s == sum(j.read.bw_bytes_per_s for j in result.jobs)
    assert summary.read.iops == pytest.approx(sum(j.read.iops for j in result.jobs))
    assert summary.read.clat.samples == sum(j.read.clat.samples for j in result.jobs)


def test_merged_percentile_is_not_the_mean_of_job_percentiles() -> None:
    """Merging histograms is exact; the p99.9 of the merge lies within the jobs' range."""
    jobs = recorded("multijob").jobs
    merged = recorded("multijob").summary().read.clat_ns(99.9)
    per_job = [j.read.clat_ns(99.9) or 0 for j in jobs]
    assert merged is not None
    assert min(per_job) <= merged <= max(per_job)


def test_group_reporting_is_flagged_and_still_one_entry() -> None:
    result = recorded("group_reporting")
    assert result.group_reported
    assert len(result.jobs) == 1
    assert (
        result.jobs[0].read.clat.samples
        == json.loads((RECORDED / "group_reporting.json").read_text())["jobs"][0]["read"]["clat_ns"]["N"]
    )


def test_error_lines_before_the_json_are_kept_as_prefix() -> None:
    text = (RECORDED / "error_prefix.json").read_text()
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)  # the recording really is not plain JSON
    result = parse_output(text)
    assert "io_u error on file" in result.prefix
    assert "Invalid argument" in result.prefix
    assert result.errors == ("job ioerr: error 22",)


def test_client_mode_per_host_and_all_clients() -> None:
    result = recorded("clients")
    hosts = result.per_host()
    assert sorted(hosts) == ["127.0.0.1:18765", "127.0.0.1:18766"]
    assert result.prefix.startswith("<")  # servers' text lines before the JSON
    total = result.summary()
    assert total.read.bw_bytes_per_s == sum(h.read.bw_bytes_per_s for h in hosts.values())
    assert result.fio_all_clients is not None
    assert abs(result.fio_all_clients.read.bw_bytes_per_s - total.read.bw_bytes_per_s) <= 1
    assert not result.fio_all_clients.read.clat.samples  # fio gives no bins for All clients...
    assert total.read.clat_ns(99.9) is not None  # ...kvgate merges them itself


def test_ceiling_bucket_is_detected() -> None:
    summary = recorded("ceiling").summary()
    assert summary.ceiling_hit
    assert summary.read.clat.ceiling_samples == 4
    assert not recorded("single").summary().ceiling_hit
    assert CEILING_NS == 17_112_760_320
    assert CEILING_FLOOR_NS == 17_045_651_456
    worst = percentile_measurement("read_clat_p100_ns", summary.read.clat, 100)
    assert worst.value == CEILING_NS
    assert worst.invalid_reason
    assert "last bucket" in worst.invalid_reason


def test_bucket_mapping_round_trips_and_rejects_foreign_keys() -> None:
    assert all(plat_val_to_idx(plat_idx_to_val(i)) == i for i in range(PLAT_NR))
    assert plat_val_to_idx(10**15) == PLAT_NR - 1  # beyond the range: the last bucket
    with pytest.raises(ValueError, match="not a fio 29-group bucket value"):
        Histogram.from_bins({"1000": 1})


def test_locate_json_errors_say_what_fio_printed() -> None:
    with pytest.raises(FioOutputError, match="engine nonexistent not loadable"):
        locate_json("fio: engine nonexistent not loadable\nfio: failed to load engine\n")
    with pytest.raises(FioOutputError, match="truncated"):
        locate_json('{\n  "fio version" : "fio-3.33",\n  "jobs" : [')


def fake_run(name: str, *, invalid: str | None = None) -> FioRun:
    """A FioRun around a recorded output, as run_fio would build it."""
    job = FioJob(name=name, rw="randread", bs="4k", directory="/scratch")
    output = (RECORDED / f"{name}.json").read_text()
    result = parse_output(output)
    return FioRun("lab1", job, job.to_jobfile(), "fio …", 0, "", "", output, 3.0, 40.0, result, invalid)


def test_measurements_mean_cv_and_merged_percentiles() -> None:
    runs = [fake_run("single"), fake_run("multijob")]
    found = {m.metric: m for m in measurements("rr", runs, evidence=("artifacts/fio.json",))}
    bws = [r.summary().read.bw_bytes_per_s for r in runs]
    assert found["rr.read_bw_bytes_per_s"].value == pytest.approx(sum(bws) / 2)
    assert found["rr.read_bw_bytes_per_s"].unit == "bytes/s"
    assert found["rr.read_bw_bytes_per_s_cv"].value == pytest.approx(
        abs(bws[0] - bws[1]) / (2**0.5) / (sum(bws) / 2)
    )
    merged = Histogram.merge(r.summary().read.clat for r in runs)
    assert found["rr.read_clat_p99_9_ns"].value == merged.percentile_ns(99.9)
    assert "rr.write_bw_bytes_per_s" not in found  # no write I/O, no write metrics
    assert all(m.invalid_reason is None for m in found.values())


def test_one_invalid_repeat_makes_the_cell_invalid_for_the_judge() -> None:
    runs = [fake_run("single"), fake_run("single", invalid="fio overran its 33 s deadline")]
    found = {m.metric: m for m in measurements("rr", runs)}
    bw = found["rr.read_bw_bytes_per_s"]
    assert bw.invalid_reason == "repeat 2 of 2: fio overran its 33 s deadline"
    verdict = judge(Criterion("G2-FIO-1", "rr.read_bw_bytes_per_s", ">=", 1), bw)
    assert verdict.verdict is Verdict.INVALID
    assert "overran" in verdict.condition


def test_cv_needs_two_repeats() -> None:
    found = {m.metric: m for m in measurements("rr", [fake_run("single")])}
    cv = found["rr.read_bw_bytes_per_s_cv"]
    assert cv.value is None
    assert cv.invalid_reason == "needs ≥ 2 valid repeats, got 1 of 1"


@pytest.mark.parametrize(
    ("name", "version"), [("pkb-fio-2.1.4", "fio-2.1.4"), ("pkb-fio-2.17-hist", "fio-2.17")]
)
def test_fio_before_3_is_refused_with_its_version(name: str, version: str) -> None:
    """fio 2.x printed io_bytes in KiB and no bw_bytes: read as bytes they would be 1024x too small."""
    with pytest.raises(FioOutputError, match=rf"^{version} has no bw_bytes: fio before 3\.0 printed KiB/s"):
        parse_output((RECORDED / f"{name}.json").read_text())


def test_unified_rw_reporting_mixed_only_is_refused() -> None:
    with pytest.raises(FioOutputError, match=r"^fio-3\.33 ran with unified_rw_reporting=1: reads and writes"):
        parse_output((RECORDED / "unified_mixed.json").read_text())


def test_unified_rw_reporting_both_keeps_read_and_write() -> None:
    raw = json.loads((RECORDED / "unified_both.json").read_text())["jobs"][0]
    job = parse_output((RECORDED / "unified_both.json").read_text()).jobs[0]
    assert (job.read.bw_bytes_per_s, job.write.bw_bytes_per_s) == (
        raw["read"]["bw_bytes"],
        raw["write"]["bw_bytes"],
    )
    assert job.read.clat.samples == raw["read"]["clat_ns"]["N"] > 0


@pytest.mark.parametrize("entry", ["[1]", '[{"jobname": "x", "read": {"clat_ns": 5}}]', '[{"jobname": "x"}]'])
def test_malformed_job_entries_name_the_version(entry: str) -> None:
    with pytest.raises(FioOutputError, match=r"^fio-3\.99: "):
        parse_output('{"fio version": "fio-3.99", "jobs": ' + entry + "}")
