"""Where ``kvgate plan`` gets its numbers: stored G2 and G3 runs of the inventory, else its promises.

Issue 13 item 7: the plan reads the latest *passed* G2 run of the inventory from --results
and says what it assumed without one. No planner on main: every test here fails there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvgate.base.criteria import Verdict
from kvgate.cli.command_line import main
from kvgate.configuration.gateconfig import configure
from kvgate.configuration.inventory import load
from kvgate.orchestration.plan.deployments import Options, plan_inventory
from kvgate.orchestration.plan.inputs import assumed_storage, g2_named, g2_storage, g3_serving, latest_passed
from kvgate.record import ArmFigures, JudgementRecord, write_manifest
from kvgate.record.store import RunStore, git_revision

SITE, HOST, VOLUME = "lab", "gpu-1", "array"
INVENTORY = f"""
site: {SITE}
scale: full
hosts:
  {HOST}: {{roles: [engine, storage-client]}}
volumes:
  {VOLUME}: {{path: /mnt/array, kind: candidate, scratch: true, expect: {{min_seq_read_gb_per_s: 10}}}}
engines:
  lmcache:
    tier_profile: vllm-lmcache
    recompute_profile: vllm-recompute
    volume: {VOLUME}
    model: /models/qwen2.5-32b
    state_bytes_per_token: 262144
"""


def measurement(value: float, reason: str | None = None) -> dict[str, Any]:
    return {"value": value, "unit": "B/s", "invalid_reason": reason, "evidence": []}


G2_MEASURED = {
    "ceiling.read_bw_bytes_per_s": measurement(9.0e9),
    "ceiling.best_read_bw_bytes_per_s": measurement(9.6e9),
    "ceiling.bs_bytes": measurement(4 << 20),
    "ceiling.numjobs": measurement(8),
    "ceiling.iodepth": measurement(16),
    "kv_restore.requests": measurement(16),
    "kv_restore.parallel.request_bytes_per_s": measurement(0.5e9),
}


def stored_run(root: Path, gate: str, sha: str, verdict: Verdict, files: dict[str, Any]) -> RunStore:
    """A run directory as kvgate writes it: run.json, one check with ``verdict``, artifacts of HOST."""
    meta = {"inventory": {"path": "inv.yaml", "sha256": sha}, "planned": [f"{HOST}/c"]}
    store = RunStore.create(root, site=SITE, gate=gate, meta=meta)
    store.record(JudgementRecord(id=f"{HOST}/c", host=HOST, check="c", verdict=verdict, condition="c"))
    for name, doc in files.items():
        store.artifact(HOST, name, json.dumps(doc))
    store.finish("complete")
    write_manifest(store.path)  # as every gate run ends
    return store


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    path = tmp_path / "inv.yaml"
    path.write_text(INVENTORY)
    return path


def test_the_latest_passed_g2_run_of_this_inventory_is_read_and_a_newer_failed_one_skipped(
    tmp_path: Path,
) -> None:
    root = tmp_path / "results"
    passed = stored_run(root, "g2", "abc", Verdict.PASS, {f"g2/{VOLUME}/measurements.json": G2_MEASURED})
    stored_run(root, "g2", "abc", Verdict.FAIL, {})  # newer, failed
    stored_run(root, "g2", "other", Verdict.PASS, {})  # newer, another inventory
    found = latest_passed(root, SITE, "g2", "abc")
    assert found is not None
    assert found.path == passed.path
    figures = g2_storage(found, HOST, VOLUME)
    assert figures is not None
    assert (figures.ceiling.value, figures.per_request.value, figures.best.value) == (9.0e9, 0.5e9, 9.6e9)
    assert "read ceiling (bs 4m, 8 jobs × QD 16)" in figures.ceiling.source
    assert "16 requests at once" in figures.per_request.source
    assert g2_storage(found, HOST, "other-volume") is None
    # the run by name, its verdict and the kvgate that measured it (a reader found G3 citing "the
    # latest passed G2 run", a BASELINE RECORDED one made by another revision)
    revision = git_revision()
    assert figures.ceiling.source.startswith(f"G2 run {passed.path.name} (PASS, kvgate {revision}): ")


def test_a_g2_run_by_another_kvgate_says_so(tmp_path: Path) -> None:
    store = stored_run(tmp_path, "g2", "abc", Verdict.PASS, {f"g2/{VOLUME}/measurements.json": G2_MEASURED})
    record = json.loads((store.path / "run.json").read_text()) | {"git_revision": "0123456789ab"}
    (store.path / "run.json").write_text(json.dumps(record))
    assert f"(PASS, kvgate 0123456789ab; this is kvgate {git_revision()})" in g2_named(store)


def test_an_untrusted_g2_figure_is_not_used(tmp_path: Path) -> None:
    measured = G2_MEASURED | {"ceiling.read_bw_bytes_per_s": measurement(9e9, "not cold: vda read 0 B")}
    store = stored_run(tmp_path, "g2", "abc", Verdict.INVALID, {f"g2/{VOLUME}/measurements.json": measured})
    figures = g2_storage(store, HOST, VOLUME)
    assert figures is not None
    assert figures.ceiling.value is None
    assert "no trusted read ceiling" in figures.ceiling.source


def test_without_g2_the_volumes_promise_is_assumed_and_said_so(inventory: Path) -> None:
    figures = assumed_storage(load(inventory).inventory, HOST, VOLUME)
    assert figures.ceiling.value == 10e9
    assert figures.ceiling.source.startswith(
        "assumed, no usable G2 run: inventory volumes.array.expect.min_seq"
    )
    assert figures.per_request.value is None


# a G3 recompute arm as arms.json keeps it (ArmFigures): 16384 tokens, TTFT 4 s, E2E 7 s
RECOMPUTE = dict.fromkeys(ArmFigures.model_fields) | {
    "arm": "recompute",
    "trials": 3,
    "completed": 3,
    "prompt_tokens_p50": 16384,
    "ttft_p50_s": 4.0,
    "e2e_p50_s": 7.0,
    "invalid_reasons": [],
    "qualifications": [],
}


def test_the_prefill_rate_comes_from_a_trusted_g3_recompute_arm(tmp_path: Path) -> None:
    arm = RECOMPUTE
    good = stored_run(
        tmp_path, "g3", "abc", Verdict.FAIL, {"g3/lmcache/arms.json": {"arms": {"recompute": arm}}}
    )
    serving = g3_serving(good, HOST, "lmcache")
    assert serving is not None
    assert (serving.prefill_tok_per_s.value, serving.decode_s.value) == (4096.0, 3.0)
    bad = arm | {"invalid_reasons": ["trial 0: prompt tokens off target"]}
    untrusted = stored_run(
        tmp_path, "g3", "abc", Verdict.INVALID, {"g3/lmcache/arms.json": {"arms": {"recompute": bad}}}
    )
    assert g3_serving(untrusted, HOST, "lmcache") is None


def test_a_plan_from_stored_runs_predicts_every_g3_workload(inventory: Path, tmp_path: Path) -> None:
    root, loaded = tmp_path / "results", load(inventory)
    stored_run(root, "g2", loaded.sha256, Verdict.PASS, {f"g2/{VOLUME}/measurements.json": G2_MEASURED})
    arm = RECOMPUTE
    stored_run(
        root, "g3", loaded.sha256, Verdict.FAIL, {"g3/lmcache/arms.json": {"arms": {"recompute": arm}}}
    )
    (plan,) = plan_inventory(configure(loaded), root, Options())
    assert [(p.workload.concurrency, p.workload.prompt_tokens) for p in plan.predictions] == [
        (1, 16384),
        (16, 16384),
    ]  # workloads/g3/full.yaml: one prompt, then the recompute rows' conc 16
    one = plan.predictions[0]
    assert one.read_s == pytest.approx(16384 * 262144 / 0.5e9)  # G2's one-request bandwidth
    assert one.recompute_ttft_s == pytest.approx(4.0)  # the measured prefill rate gives it back
    assert plan.prefill.source.startswith("measured: G3 ")


def test_kvgate_plan_prints_the_predictions_and_what_it_assumed(
    inventory: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "plan",
            "--inventory",
            str(inventory),
            "--results",
            str(tmp_path / "none"),
            "--prefill-tok-per-s",
            "3000",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "engine lmcache on gpu-1" in out
    assert "assumed, no usable G2 run" in out
    assert "declared: --prefill-tok-per-s" in out


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--reuse", "1.5", "--reuse must be a share"),
        ("--prefill-tok-per-s", "0", "must be > 0"),
        ("--documents", "0", "--documents must be"),
    ],
)
def test_bad_plan_options_are_usage_errors(
    inventory: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    assert main(["plan", "--inventory", str(inventory), flag, value]) == 4
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("edit", ["measurements", "verdict"])
def test_an_edited_g2_run_stops_the_plan_naming_the_file(
    inventory: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: str
) -> None:
    """Issue 23 item 2: the plan used an edited G2 run's numbers (or a FAIL edited to PASS) without a word."""
    root = tmp_path / "results"
    verdict = Verdict.PASS if edit == "measurements" else Verdict.FAIL
    files = {f"g2/{VOLUME}/measurements.json": G2_MEASURED}
    run = stored_run(root, "g2", load(inventory).sha256, verdict, files).path
    edited = run / (
        "checks.jsonl" if edit == "verdict" else f"artifacts/{HOST}/g2/{VOLUME}/measurements.json"
    )
    edited.write_text(edited.read_text().replace("9000000000.0", "90000000000.0").replace('"FAIL"', '"PASS"'))
    assert main(["plan", "--inventory", str(inventory), "--results", str(root)]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert f"modified after the run: {edited.relative_to(run)}" in said
    assert "a plan from its figures refused" in said


def test_g3_does_not_start_on_an_edited_g2_run_even_with_the_gate_order_forced(
    inventory: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """G3 bounds every restore by the latest passed G2 run: an edited one stops it before it starts."""
    root = tmp_path / "results"
    files = {f"g2/{VOLUME}/measurements.json": G2_MEASURED}
    run = stored_run(root, "g2", load(inventory).sha256, Verdict.PASS, files).path
    (run / "checks.jsonl").write_text((run / "checks.jsonl").read_text().replace('"c"', '"c "', 1))
    argv = ["run", "g3", "--inventory", str(inventory), "--results", str(root), "--force-gate-order", "test"]
    assert main([*argv, "--no-pdf"]) == 2
    assert "modified after the run: checks.jsonl" in " ".join(capsys.readouterr().err.split())
    assert sorted(p.name for p in (root / SITE).iterdir()) == [run.name]  # no G3 run was created
