"""gates/references.yaml against the seed, the reference math, and the judge built on it."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvgate.base.criteria import Measurement, Verdict
from kvgate.base.errors import ConfigError
from kvgate.configuration.reference_schema import Kind, References
from kvgate.configuration.references import (
    DEFAULT_PATH,
    check_consistency,
    check_reference,
    criterion_for,
    evaluate_cross_checks,
    improvement,
    improvement_measurement,
    judge_reference,
    load_references,
    recompute,
    seed_position,
)

SEED_NAME = "000_994578b198b8e21d.txt"
SEED = Path(__file__).resolve().parents[3] / "shared" / "seed" / SEED_NAME

# The seed's comparison table, copied verbatim (data rows only).
SEED_TABLE = (
    "| 480B 长上下文冷恢复吞吐（并发 8 档） | — | — | +29% | R2/R3 实测 |",
    "| 480B 长上下文冷恢复吞吐（并发 16 档） | — | — | +40% | R2/R3 实测 |",
    "| 480B·TP4×2 全机口径吞吐 | — | — | +35–36% | R3 实测 |",
    "| 480B·TP8 三档并发 TTFT p50 | 10.17–35.73s | 7.53–26.35s | ↓26–32% | R2 实测 |",
    "| 无外存重算 TTFT p50（conc16） | 149.5s | 11.85s | 8.6–20× | R2 实测 |",
    "| 无外存重算吞吐（conc16） | 4.1 tok/s | 74.9 tok/s | 8.6–20× | R2 实测 |",
    "| 单卡·并发16·冷读盘 TTFT | 37.97s | 9.30s | 4.1× | R1 实测 |",
    "| 单卡·并发16·冷读盘带宽 | 0.98 GB/s | 5.23 GB/s | ↑5.3× | R1 实测 |",
    "| DeepSeek-32B 服务加载（昇腾） | 691s（NFS） | 112s | 6.2× | R9 实测 |",
    "| DeepSeek-70B 服务加载（昇腾） | 1399s（NFS） | 150s | 9.3× | R9 实测 |",
    "| 8 卡 32B LoRA Checkpoint 保存 | 178s / 3.26 GB/s | 94s / 6.40 GB/s | 1.9× / +96% | R1 实测 |",
)

# id: (metric, direction, baseline, candidate, stated, kind, low, high); ranges as (low, high)
EXPECTED: dict[str, tuple[Any, ...]] = {
    "R2R3-cold-restore-throughput-conc8": (
        "throughput_tok_per_s",
        "higher_is_better",
        None,
        None,
        "+29%",
        "percent_gain",
        29,
        29,
    ),
    "R2R3-cold-restore-throughput-conc16": (
        "throughput_tok_per_s",
        "higher_is_better",
        None,
        None,
        "+40%",
        "percent_gain",
        40,
        40,
    ),
    "R3-throughput-tp4x2-whole-machine": (
        "throughput_tok_per_s",
        "higher_is_better",
        None,
        None,
        "+35–36%",
        "percent_gain",
        35,
        36,
    ),
    "R2-ttft-p50-tp8": (
        "ttft_p50_s",
        "lower_is_better",
        (10.17, 35.73),
        (7.53, 26.35),
        "↓26–32%",
        "percent_reduction",
        26,
        32,
    ),
    "R2-recompute-ttft-p50-conc16": (
        "ttft_p50_s",
        "lower_is_better",
        149.5,
        11.85,
        "8.6–20×",
        "ratio",
        8.6,
        20,
    ),
    "R2-recompute-throughput-conc16": (
        "throughput_tok_per_s",
        "higher_is_better",
        4.1,
        74.9,
        "8.6–20×",
        "ratio",
        8.6,
        20,
    ),
    "R1-cold-read-ttft-conc16": ("ttft_s", "lower_is_better", 37.97, 9.30, "4.1×", "ratio", 4.1, 4.1),
    "R1-cold-read-bw-conc16": (
        "read_bw_gb_per_s",
        "higher_is_better",
        0.98,
        5.23,
        "↑5.3×",
        "ratio",
        5.3,
        5.3,
    ),
    "R9-load-time-deepseek-32b": ("load_time_s", "lower_is_better", 691, 112, "6.2×", "ratio", 6.2, 6.2),
    "R9-load-time-deepseek-70b": ("load_time_s", "lower_is_better", 1399, 150, "9.3×", "ratio", 9.3, 9.3),
    "R1-checkpoint-save-time": ("save_time_s", "lower_is_better", 178, 94, "1.9×", "ratio", 1.9, 1.9),
    "R1-checkpoint-write-bw": (
        "write_bw_gb_per_s",
        "higher_is_better",
        3.26,
        6.40,
        "+96%",
        "percent_gain",
        96,
        96,
    ),
}


@pytest.fixture(scope="module")
def refs() -> References:
    return load_references()


def _numbers(cell: str) -> list[float]:
    return [float(n) for n in re.findall(r"\d+(?:\.\d+)?", cell)]


def _span(value: Any) -> tuple[float, float] | None:
    if value is None:
        return None
    return value if isinstance(value, tuple) else (value, value)


# ---- transcription ------------------------------------------------------------------------


def test_every_seed_table_row_is_transcribed_and_nothing_else(refs: References) -> None:
    assert {r.source.row for r in refs.references} == set(SEED_TABLE)
    assert set(refs.ids) == set(EXPECTED)


@pytest.mark.parametrize("ref_id", list(EXPECTED))
def test_reference_carries_the_seed_figures_exactly(refs: References, ref_id: str) -> None:
    metric, direction, base, cand, stated, kind, low, high = EXPECTED[ref_id]
    ref = refs.get(ref_id)
    assert (ref.metric, ref.direction.value) == (metric, direction)
    assert _span(base) == (ref.baseline and (ref.baseline.low, ref.baseline.high))
    assert _span(cand) == (ref.candidate and (ref.candidate.low, ref.candidate.high))
    assert (ref.improvement.stated, ref.improvement.kind.value) == (stated, kind)
    assert (ref.improvement.low, ref.improvement.high) == (low, high)
    assert ref.source.document == f"seed: {SEED_NAME}"


@pytest.mark.parametrize("row", SEED_TABLE, ids=[f"row{i}" for i in range(1, len(SEED_TABLE) + 1)])
def test_every_number_of_a_row_is_in_some_reference(refs: References, row: str) -> None:
    on_row = [r for r in refs.references if r.source.row == row]
    _, base_cell, cand_cell, stated_cell, _ = (c.strip() for c in row.strip("|").split("|"))
    held_base = {v for r in on_row if r.baseline for v in (r.baseline.low, r.baseline.high)}
    held_cand = {v for r in on_row if r.candidate for v in (r.candidate.low, r.candidate.high)}
    assert set(_numbers(base_cell)) == held_base
    assert set(_numbers(cand_cell)) == held_cand
    assert {r.improvement.stated for r in on_row} == set(stated_cell.split(" / "))


def test_platform_model_and_setup_are_what_the_seed_states(refs: References) -> None:
    assert refs.get("R2-ttft-p50-tp8").platform.accelerator == "AMD MI308X"
    assert refs.get("R2-ttft-p50-tp8").parallelism == "TP8"
    assert refs.get("R2-ttft-p50-tp8").concurrency == "three concurrency levels (三档并发)"
    assert refs.get("R3-throughput-tp4x2-whole-machine").parallelism == "TP4×2 (whole machine, 全机口径)"
    assert refs.get("R9-load-time-deepseek-70b").platform.accelerator == "Ascend (昇腾)"
    assert refs.get("R9-load-time-deepseek-70b").platform.network is None  # R1–R4 platform only
    assert "100 GbE" in (refs.get("R1-cold-read-bw-conc16").platform.network or "")
    assert refs.get("R1-cold-read-bw-conc16").platform.accelerator is None
    assert refs.get("R1-cold-read-bw-conc16").model == "Qwen2.5-32B"
    assert refs.get("R2-recompute-ttft-p50-conc16").model is None
    assert [refs.get(i).concurrency for i in EXPECTED if i.startswith("R2R3")] == [8, 16]


def test_context_figures_are_stated(refs: References) -> None:
    ctx = {c.id: (c.value, c.unit) for c in refs.context}
    assert ctx["checkpoint-snapshot-size"] == (65.6, "GB")
    assert ctx["checkpoint-cards"] == (8, "cards")
    assert ctx["checkpoint-model"] == ("32B LoRA", None)
    assert ctx["r2-ttft-parallelism"] == ("TP8", None)
    assert ctx["r3-whole-machine-parallelism"] == ("TP4×2", None)
    assert ctx["r1-r4-link-speed"] == (100, "Gb/s")


@pytest.mark.skipif(not SEED.exists(), reason=f"seed document not beside the repo ({SEED})")
def test_transcription_is_verbatim_in_the_seed(refs: References) -> None:
    text = SEED.read_text()
    seed_rows = [line for line in text.splitlines() if line.startswith("| ") and "场景" not in line]
    assert seed_rows == list(SEED_TABLE)
    quotes = [q for r in refs.references for q in r.source.prose] + [c.quote for c in refs.context]
    assert [q for q in quotes if q not in text] == []


# ---- improvement math and consistency ------------------------------------------------------


@pytest.mark.parametrize(
    ("ref_id", "values"),
    [
        ("R1-cold-read-ttft-conc16", [4.083]),
        ("R1-cold-read-bw-conc16", [5.337]),
        ("R1-checkpoint-save-time", [1.894]),
        ("R1-checkpoint-write-bw", [96.32]),
        ("R9-load-time-deepseek-32b", [6.170]),
        ("R9-load-time-deepseek-70b", [9.327]),
        ("R2-recompute-ttft-p50-conc16", [12.62]),
        ("R2-recompute-throughput-conc16", [18.27]),
        ("R2-ttft-p50-tp8", [25.96, 26.25]),
        ("R2R3-cold-restore-throughput-conc8", []),
    ],
)
def test_improvement_is_recomputed_from_the_rows_figures(
    refs: References, ref_id: str, values: list[float]
) -> None:
    assert [r.value for r in recompute(refs.get(ref_id))] == pytest.approx(values, abs=0.01)


@pytest.mark.parametrize(
    "ref_id",
    [
        "R1-cold-read-ttft-conc16",
        "R1-cold-read-bw-conc16",
        "R1-checkpoint-save-time",
        "R1-checkpoint-write-bw",
        "R9-load-time-deepseek-32b",
        "R9-load-time-deepseek-70b",
    ],
)
def test_stated_improvement_agrees_within_rounding(refs: References, ref_id: str) -> None:
    assert check_reference(refs.get(ref_id)) is None


def test_disagreements_are_reported_with_their_numbers(refs: References) -> None:
    found = {d.subject: d for d in check_consistency(refs)}
    assert {s: d.severity for s, d in found.items()} == {
        "R2-ttft-p50-tp8": "unsupported",
        "R2-recompute-ttft-p50-conc16": "unsupported",
        "R2-recompute-throughput-conc16": "unsupported",
        "X1-checkpoint-one-snapshot-baseline-bw": "mismatch",
        "X2-checkpoint-one-snapshot-candidate-bw": "mismatch",
        "X3-checkpoint-per-card-snapshots-baseline-bw": "mismatch",
        "X4-checkpoint-per-card-snapshots-candidate-bw": "mismatch",
        "X5-checkpoint-same-volume-both-arms": "mismatch",
    }
    ttft = found["R2-ttft-p50-tp8"].message
    assert all(s in ttft for s in ("10.17 → 7.53 s gives ↓26.0%", "35.73 → 26.35 s gives ↓26.3%", "↓32%"))
    assert "12.6×" in found["R2-recompute-ttft-p50-conc16"].message
    assert (
        "65.6 GB / 178 s = 0.3685 GB/s vs 3.26 GB/s: -88.7%"
        in found["X1-checkpoint-one-snapshot-baseline-bw"].message
    )
    assert "8 cards × 65.6 GB / 178 s = 2.948 GB/s vs 3.26 GB/s" in str(
        found["X3-checkpoint-per-card-snapshots-baseline-bw"]
    )
    assert (
        "8 cards × 65.6 GB / 94 s = 5.583 GB/s"
        in found["X4-checkpoint-per-card-snapshots-candidate-bw"].message
    )
    assert "3.26 GB/s × 178 s = 580.3 GB" in found["X5-checkpoint-same-volume-both-arms"].message
    assert "snapshot" in found["X1-checkpoint-one-snapshot-baseline-bw"].reason  # the report says why


def test_cross_checks_that_hold_are_evaluated_too(refs: References) -> None:
    results = {r.check.id: r for r in evaluate_cross_checks(refs)}
    link = results["X6-cold-read-bw-within-link"]
    assert link.ok
    assert link.condition == "5.23 GB/s ≤ 100 Gb/s / 8 = 12.5 GB/s"
    assert results["X5-checkpoint-same-volume-both-arms"].right == pytest.approx(601.6)


# ---- malformed files -----------------------------------------------------------------------


@pytest.fixture
def raw() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(DEFAULT_PATH.read_text())
    return data


def _write(tmp_path: Path, data: dict[str, Any], mutate: Callable[[dict[str, Any]], object]) -> Path:
    data = copy.deepcopy(data)
    mutate(data)
    path = tmp_path / "references.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    return path


def test_a_stated_improvement_the_figures_contradict_is_a_mismatch(
    tmp_path: Path, raw: dict[str, Any]
) -> None:
    def overstate(d: dict[str, Any]) -> None:
        d["references"][6]["improvement"] = {"stated": "4.5×", "kind": "ratio", "low": 4.5, "high": 4.5}
        d["references"][6]["source"]["row"] = SEED_TABLE[6].replace("4.1×", "4.5×")

    refs = load_references(_write(tmp_path, raw, overstate))
    found = check_reference(refs.get("R1-cold-read-ttft-conc16"))
    assert found is not None
    assert (found.severity, found.message) == ("mismatch", "stated 4.5×, but 37.97 → 9.3 s gives 4.08×")


MALFORMED: list[tuple[str, Callable[[dict[str, Any]], object], str, str]] = [
    ("missing field", lambda d: d["references"][3].pop("metric"), "references[3].metric", "missing"),
    (
        "wrong type",
        lambda d: d["references"][3]["improvement"].update(low="x"),
        "references[3].improvement.low",
        "valid number",
    ),
    (
        "unknown key",
        lambda d: d["references"][3].update(colour="red"),
        "references[3].colour",
        "unknown field",
    ),
    (
        "low > high",
        lambda d: d["references"][3]["improvement"].update(low=40),
        "references[3].improvement.high",
        "must be ≥ low (40)",
    ),
    (
        "stated differs",
        lambda d: d["references"][6]["improvement"].update(low=4.2, high=4.2),
        "references[6].improvement",
        "stated '4.1×' gives [4.1]",
    ),
    (
        "metric without unit",
        lambda d: d["references"][6].update(metric="ttft"),
        "references[6].metric",
        "must end in the unit 's'",
    ),
    (
        "duplicate id",
        lambda d: d["references"][4].update(id="R2-ttft-p50-tp8"),
        "references[4].id",
        "duplicate id",
    ),
    (
        "cross-check to nowhere",
        lambda d: d["cross_checks"][0]["figures"].update(snapshot="context.nope"),
        "cross_checks[0].figures.snapshot",
        "no context figure 'nope'",
    ),
    (
        "cross-check code",
        lambda d: d["cross_checks"][0].update(left="__import__('os')"),
        "cross_checks[0].left",
        "only numbers",
    ),
    (
        "cross-check nested deep",
        lambda d: d["cross_checks"][0].update(left="-" * 16000 + "1"),
        "cross_checks[0].left",
        "at most 500 characters",
    ),  # MemoryError in Python's parser
    (
        "cross-check too long",
        lambda d: d["cross_checks"][0].update(left="+".join(["snapshot"] * 1500)),
        "cross_checks[0].left",
        "at most 500 characters",
    ),  # RecursionError in Python's parser
]


@pytest.mark.parametrize(
    ("mutate", "field", "expected"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED]
)
def test_malformed_file_names_file_field_and_expectation(
    tmp_path: Path, raw: dict[str, Any], mutate: Callable[[dict[str, Any]], object], field: str, expected: str
) -> None:
    path = _write(tmp_path, raw, mutate)
    with pytest.raises(ConfigError) as err:
        load_references(path)
    assert (err.value.path, err.value.field) == (str(path), field)
    assert expected in err.value.expected
    assert str(err.value).startswith(f"{path}: {field}: ")


def test_bad_yaml_syntax_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "references.yaml"
    path.write_text("references:\n  - id: R1-x\n    report: [R1\n")
    with pytest.raises(ConfigError, match=r"references\.yaml: line \d+, column \d+: not valid YAML"):
        load_references(path)


def test_a_missing_reference_is_an_error_never_a_pass(refs: References) -> None:
    with pytest.raises(ConfigError, match=r"references\.yaml: references: no reference with id 'R4-nope'"):
        refs.get("R4-nope")


def test_default_path_is_the_repos_gates_file(refs: References) -> None:
    assert Path(refs.path) == DEFAULT_PATH
    assert DEFAULT_PATH.parts[-2:] == ("gates", "references.yaml")


# ---- judging a site against a reference ----------------------------------------------------


def test_the_seeds_own_single_figures_meet_their_references(refs: References) -> None:
    """A site that reproduces the seed's platform passes: R1 37.97 → 9.30 s is 4.08×, written "4.1×"."""
    judged = []
    for ref in refs.references:
        b, c = ref.baseline, ref.candidate
        if b is None or c is None or b.low != b.high or c.low != c.high:
            continue  # no figures, or ranges paired in the seed's own way (check_consistency)
        m = improvement_measurement(ref, baseline=b.low, candidate=c.low)
        judged.append((ref.id, judge_reference(ref, m).verdict))
    assert ("R1-cold-read-ttft-conc16", Verdict.PASS) in judged
    assert ("R9-load-time-deepseek-32b", Verdict.PASS) in judged  # 691 → 112 s is 6.17×, written "6.2×"
    assert {v for _, v in judged} == {Verdict.PASS}, judged


def test_criterion_reads_the_reference_lower_bound(refs: References) -> None:
    c = criterion_for(refs.get("R2-ttft-p50-tp8"), threshold_fraction=0.9, tolerance=0.05)
    assert (c.rule, c.metric, c.comparator) == ("R2-ttft-p50-tp8", "ttft_p50_reduction_pct", ">=")
    assert c.expected == pytest.approx(0.9 * 25.5)  # ↓26% as written: ≥ 25.5
    assert (c.tolerance, c.source) == (0.05, f"R2 (seed: {SEED_NAME})")


@pytest.mark.parametrize(
    ("ref_id", "measured", "verdict", "condition"),
    [
        (
            "R2-ttft-p50-tp8",
            (12.7, 8.74, 1.0),
            Verdict.PASS,
            "ttft_p50_reduction_pct=31.18 ≥ 25.5 (R2: ↓26–32%)",
        ),
        (
            "R2-ttft-p50-tp8",
            (12.7, 10.0, 1.0),
            Verdict.FAIL,
            "ttft_p50_reduction_pct=21.26 ≥ 25.5 (R2: ↓26–32%)",
        ),
        (
            "R2-ttft-p50-tp8",
            (12.7, 10.0, 0.8),
            Verdict.PASS,
            "ttft_p50_reduction_pct=21.26 ≥ 20.4 (0.8 × R2: ↓26–32%)",
        ),
        (
            "R9-load-time-deepseek-32b",
            (700, 100, 1.0),
            Verdict.PASS,
            "load_time_speedup_x=7 ≥ 6.15 (R9: 6.2×)",
        ),
        ("R1-cold-read-bw-conc16", (1.0, 5.0, 1.0), Verdict.FAIL, "read_bw_gain_x=5 ≥ 5.25 (R1: ↑5.3×)"),
        ("R1-checkpoint-write-bw", (3.0, 6.0, 1.0), Verdict.PASS, "write_bw_gain_pct=100 ≥ 95.5 (R1: +96%)"),
        (
            "R2R3-cold-restore-throughput-conc16",
            (100, 130, 1.0),
            Verdict.FAIL,
            "throughput_gain_pct=30 ≥ 39.5 (R2/R3: +40%)",
        ),
    ],
)
def test_judge_reference_gives_pass_or_fail_with_a_readable_condition(
    refs: References, ref_id: str, measured: tuple[float, float, float], verdict: Verdict, condition: str
) -> None:
    """measured: (site baseline, site candidate, threshold fraction)."""
    baseline, candidate, fraction = measured
    ref = refs.get(ref_id)
    m = improvement_measurement(ref, baseline=baseline, candidate=candidate, evidence=("a.json",))
    j = judge_reference(ref, m, threshold_fraction=fraction)
    assert (j.verdict, j.condition) == (verdict, condition)
    assert j.criterion.rule == ref_id


def test_unmeasured_improvement_is_invalid_never_pass(refs: References) -> None:
    j = judge_reference(refs.get("R2-ttft-p50-tp8"), None)
    assert j.verdict is Verdict.INVALID
    assert j.condition == "ttft_p50_reduction_pct: not measured (R2: ↓26–32%)"


def test_improvement_refuses_what_cannot_be_a_measurement(refs: References) -> None:
    ref = refs.get("R2-ttft-p50-tp8")
    with pytest.raises(ValueError, match="must be > 0"):
        improvement(ref, baseline=0.0, candidate=8.0)
    with pytest.raises(ValueError, match="judges 'ttft_p50_reduction_pct'"):
        judge_reference(ref, Measurement("ttft_p50_s", 9.0))


def test_improvement_follows_the_reference_kind(refs: References) -> None:
    gain = refs.get("R1-checkpoint-write-bw")
    assert gain.improvement.kind is Kind.PERCENT_GAIN
    assert improvement(gain, baseline=3.26, candidate=6.40) == pytest.approx(96.32, abs=0.01)
    assert improvement(refs.get("R1-checkpoint-save-time"), baseline=178, candidate=94) == pytest.approx(
        1.894, abs=1e-3
    )


@pytest.mark.parametrize(
    ("ref_id", "value", "where"),
    [
        ("R2-ttft-p50-tp8", 25.6, "inside the seed's ↓26–32%"),  # "26" as written: 25.5 up
        ("R2-ttft-p50-tp8", 25.4, "below the seed's ↓26–32%"),
        ("R2-ttft-p50-tp8", 40.0, "above the seed's ↓26–32%"),  # 1.67× vs 1.47×: above, not far
        ("R2-recompute-ttft-p50-conc16", 12.6, "inside the seed's 8.6–20×"),  # its own 149.5 → 11.85 s
        ("R2-recompute-ttft-p50-conc16", 39.0, "above the seed's 8.6–20×"),
        ("R2R3-cold-restore-throughput-conc16", 180.0, "above the seed's +40%"),  # 2.8 = 2 × 1.4: not far
        ("R2R3-cold-restore-throughput-conc16", 200.0, "far above the seed's +40% (2.1× the speed-up"),
        ("R1-cold-read-ttft-conc16", 4.08, "inside the seed's 4.1×"),  # a single figure: its rounding
    ],
)
def test_the_site_lands_below_inside_or_above_the_seeds_range_and_far_above_is_said(
    refs: References, ref_id: str, value: float, where: str
) -> None:
    assert seed_position(refs.get(ref_id), value).startswith(where)


def test_far_above_asks_whether_the_baseline_was_the_seeds(refs: References) -> None:
    far = seed_position(refs.get("R2R3-cold-restore-throughput-conc8"), 505.0)
    assert (
        far
        == "far above the seed's +29% (4.7× the speed-up at its upper end): was the baseline arm the seed's?"
    )


def test_every_reference_is_bound_to_its_source_report_with_arms_workload_and_cache_settings() -> None:
    refs = {r.id: r for r in load_references().references}
    for ref in refs.values():
        assert ref.binding is not None, ref.id
        assert ref.binding.source.repository == "mingxin-tech/mingxin-kvcache-bench"
    r2 = refs["R2-ttft-p50-tp8"].binding
    assert r2 is not None
    assert r2.source.report == "reports/AISSD5000-KVCache性能测试报告（480B·TP8长上下文·正式版）.md"
    assert "§4.2" in r2.source.sections
    assert "local NVMe" in str(r2.arms.baseline)  # not a DRAM-only arm
    assert "34 distinct sessions" in r2.workload
    assert "LMCACHE_MAX_LOCAL_CPU_SIZE=4" in str(r2.cache_settings)
    assert "baseline_volume" in r2.kvgate
    r3 = refs["R3-throughput-tp4x2-whole-machine"].binding
    assert r3 is not None
    assert "TP4x2·全指标汇总" in str(r3.source.report)
    assert "local NVMe" in str(r3.arms.baseline)
    assert refs["R9-load-time-deepseek-32b"].binding.source.report is None  # type: ignore[union-attr]
