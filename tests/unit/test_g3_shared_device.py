"""A restore's bandwidth is the engine's own bytes; another reader of the device qualifies its evidence.

Figures from `make demo` (issue 25 item 3): at concurrency 16 the capacity arm's device read
5.26 GB while the engine read 0.77 GB (~85 % was other readers'), and the report showed
"restore 175 MB/s" (every device byte over the restore time) with every row trusted.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from test_g3_tables import inventory, result

from kvgate.configuration.engine_profile import PROFILE_DIR, load_profile
from kvgate.configuration.gate_profiles.g3 import ColdBounds, load_g3_profile
from kvgate.configuration.gateconfig import in_memory
from kvgate.orchestration.g3.load_arms import LoadTrial, summaries
from kvgate.orchestration.g3.measure import DeploymentResult, contradictions, qualify
from kvgate.orchestration.g3.plan import plan
from kvgate.orchestration.g3.protocol import ArmsResult
from kvgate.orchestration.g3.report_rows import rows
from kvgate.record import ArmFigures, held_little
from kvgate.record.store import RunStore
from kvgate.report import render
from kvgate.report.g3_tables import arm_cells, evidence_cells
from kvgate.report.model import load_run
from kvgate.report.restore_evidence import restore_rates
from kvgate.report.scope_lines import capacity_arms, shared_device

LOAD = "load 3.4 (1 min), CPU steal 1%"


def demo_round(k: int, *, device: int = 5_260_000_000) -> LoadTrial:
    """One ssd-tier round at conc 16 as the demo measured it: 30 s to its last first token."""
    summary = {"completed": 16, "failed": 0, "p50_ttft_ms": 9000.0, "output_throughput_tok_per_s": 5.0}
    return LoadTrial(
        "ssd-tier", 16, k, f"s{k}", summary, 4096, device, (), first_tokens_done_s=30.0,
        engine_read_bytes=770_000_000, host_load=LOAD,
    )  # fmt: skip


def test_the_restore_is_the_engines_bytes_and_a_shared_device_qualifies_it() -> None:
    arms = qualify(ArmsResult(capacity_trials={"ssd-tier": [demo_round(k) for k in range(3)]}), ColdBounds())
    s = summaries(arms.capacity_trials)["ssd-tier@c16"]
    assert s.read_bw_gb_per_s is not None
    assert round(s.read_bw_gb_per_s * 1000, 1) == 25.7  # MB/s: 0.77 GB / 30 s, not 5.26 GB / 30 s (175)
    assert (s.device_read_bytes_p50, s.engine_read_bytes_p50) == (5.26e9, 0.77e9)  # both stay
    assert len(s.qualifications) == 3
    assert s.qualifications[0] == (
        "trial 0: another reader shared the device: it read 5.26 GB while the engine read 0.77 GB "
        f"(6.83× > 1.5×); {LOAD}"
    )
    trusted = evidence_cells("h/tiny", s)[-1]
    assert trusted.startswith("qualified (3 of 3): trial 0: another reader shared the device")  # not "yes"
    assert arm_cells("h/tiny", s)[1] == "ssd-tier@c16 (device shared in 3 of 3 trials)"  # beside its TTFT
    binding = next(b for b in load_g3_profile("smoke").verdicts if b.check == "throughput-gain-conc16")
    (rate,) = restore_rates({"candidate-volume@c16": s}, binding)  # R2's arm since the volume arms
    assert rate.startswith(
        "25.7 MB/s by the engine's bytes (candidate-volume · conc 16; another reader shared"
    )
    assert LOAD in rate


def test_a_device_within_the_declared_ratio_is_plainly_trusted() -> None:
    assert load_g3_profile("smoke").cold.max_device_ratio == 1.5  # declared in the profile
    alone = [demo_round(k, device=800_000_000) for k in range(3)]  # readahead, metadata: 1.04×
    s = summaries(qualify(ArmsResult(capacity_trials={"ssd-tier": alone}), ColdBounds()).capacity_trials)
    assert s["ssd-tier@c16"].qualifications == []
    assert evidence_cells("h/tiny", s["ssd-tier@c16"])[-1] == "yes"


def dram_only(device: int) -> dict[str, LoadTrial]:
    return {
        "dram-only": [
            replace(demo_round(k, device=device), arm="dram-only", engine_read_bytes=0) for k in range(3)
        ]
    }


def test_an_arm_that_reads_no_tier_is_qualified_as_a_restore_is_when_another_reader_shared_the_device() -> (
    None
):
    """The demo's dram-only rows read 9.4–34 GB on the device and 0 in the engine, marked 'yes' beside
    restore rows qualified for far less: the arm the tier is compared with was not measured alone."""
    s = summaries(qualify(ArmsResult(capacity_trials=dram_only(350_000_000)), ColdBounds()).capacity_trials)
    assert evidence_cells("h/tiny", s["dram-only@c16"])[-1] == (
        "qualified (3 of 3): trial 0: another reader shared the device: it read 0.35 GB while the engine "
        f"read nothing from it; {LOAD}"
    )
    quiet = summaries(
        qualify(ArmsResult(capacity_trials=dram_only(20_000_000)), ColdBounds()).capacity_trials
    )
    assert evidence_cells("h/tiny", quiet["dram-only@c16"])[-1] == (  # 20 MB < max_idle_device_bytes
        "yes: the engine read nothing from the volume; the device's reads were another reader's"
    )


def test_the_shared_device_is_recorded_as_a_contradiction_with_both_figures() -> None:
    arms = qualify(ArmsResult(capacity_trials={"ssd-tier": [demo_round(k) for k in range(3)]}), ColdBounds())
    result = DeploymentResult("h", "tiny", load_profile(PROFILE_DIR / "llama-cpp-disk.yaml"), device="vda")
    result.arms = summaries(arms.capacity_trials)
    (found,) = contradictions(result)
    assert (found.where, found.first.value, found.second.value) == ("h/tiny", 0.77e9, 5.26e9)
    assert found.second.name == "ssd-tier@c16: the device's reads (vda, median of 3 loads)"
    assert found.meaning.startswith(
        "In 3 of 3 loads another reader shared the device (the first: the device read 5.26 GB while the "
        "engine read 0.77 GB (6.83× > 1.5×)"
    )
    assert "The engine's bytes hold" in found.meaning  # which of the two figures the reader may use
    assert LOAD in found.meaning
    dram = qualify(ArmsResult(capacity_trials=dram_only(350_000_000)), ColdBounds())
    result.arms = summaries(dram.capacity_trials) | {  # an engine that read a log's bytes restores nothing
        "dram-only@c8": summaries(dram.capacity_trials)["dram-only@c16"].model_copy(
            update={"arm": "dram-only@c8", "engine_read_bytes_p50": 139_264.0}
        )
    }
    assert contradictions(result) == []  # its qualification is in its evidence: no restore is at stake


def test_page_one_says_the_host_was_not_quiet(tmp_path: Path) -> None:
    # a reader found the demo's G3 timed beside a test suite (load 5.2 on 2 cores), said in tables only
    row = rows(result(), plan(in_memory(inventory())))
    trials = {"ssd-tier": [demo_round(k) for k in range(3)]}
    shared = summaries(qualify(ArmsResult(capacity_trials=trials), ColdBounds()).capacity_trials)
    row["figures"]["arms"] = {k: v.model_dump(mode="json") for k, v in shared.items()}
    store = RunStore.create(tmp_path, site="s", gate="g3", meta={"planned": [], "g3_rows": {"h/tiny": row}})
    store.finish("complete")
    said = shared_device(load_run(store.path))
    assert said.startswith("in 3 of 3 measured loads the device read far more than the engine: ")
    assert "(one of them: ssd-tier@c16 trial 0: another reader shared the device: it read 5.26 GB" in said
    assert said.endswith(f"{LOAD})")
    render(store.path, pdf=False)
    assert "<strong>Not a quiet host:</strong> in 3 of 3" in (store.path / "report.html").read_text()


def test_an_ssd_tier_faster_than_a_dram_tier_that_reused_as_much_is_a_contradiction(tmp_path: Path) -> None:
    # the demo: its 100 MB DRAM cache reused 904 of the prompt tokens the SSD tier reused 7,164 of, and the
    # SSD tier's TTFT beat it at every level: the capacity the arms compare, said on page 1 (a reader took
    # it for DRAM against SSD); beside a DRAM cache that reused as much, the same gap contradicts the media
    base = summaries({"ssd-tier": [demo_round(k) for k in range(3)]})["ssd-tier@c16"]
    demo = {"c4": (2.30, 0.999, 4, 3_577), "c8": (5.73, 2.10, 904, 7_164), "c16": (7.71, 4.07, 912, 14_316)}

    def arm(name: str, ttft: float, hits: float) -> ArmFigures:
        return base.model_copy(update={"arm": name, "ttft_p50_s": ttft, "hit_tokens_p50": hits})

    dep = DeploymentResult("h", "tiny", load_profile(PROFILE_DIR / "llama-cpp-disk.yaml"), device="vda")
    dep.arms = {f"dram-only@{lv}": arm(f"dram-only@{lv}", d, dh) for lv, (d, _, dh, _) in demo.items()}
    dep.arms |= {f"ssd-tier@{lv}": arm(f"ssd-tier@{lv}", s, sh) for lv, (_, s, _, sh) in demo.items()}
    assert contradictions(dep) == []
    row = rows(result(), plan(in_memory(inventory())))
    row["figures"]["arms"] = {k: v.model_dump(mode="json") for k, v in dep.arms.items()}
    store = RunStore.create(tmp_path, site="s", gate="g3", meta={"planned": [], "g3_rows": {"h/tiny": row}})
    store.finish("complete")
    assert capacity_arms(load_run(store.path)) == (
        "h/tiny (c8): prompt tokens reused per round 904 from DRAM against 7,164 from the SSD tier; "
        "TTFT p50 5.73 s against 2.1 s",
    )
    dep.arms = {k: v.model_copy(update={"hit_tokens_p50": 7_000.0}) for k, v in dep.arms.items()}
    (found,) = contradictions(dep)
    assert (found.first.name, found.first.value, found.second.value) == ("ssd-tier@c8: TTFT p50", 2.10, 5.73)
    assert "at every level where both reused the load (3), here by 2.73×" in found.meaning
    assert "(median, DRAM against SSD): 7,000 against 7,000" in found.meaning
    dep.arms["ssd-tier@c4"] = arm("ssd-tier@c4", 2.2, 7_000)  # one level where DRAM held its own
    assert contradictions(dep) == []


def test_a_dram_tier_that_reused_little_of_the_load_says_so_beside_its_figures() -> None:
    # a reader found the dram-only rows labelled a DRAM tier in the tables, the anomaly on page 1 only
    base = summaries({"ssd-tier": [demo_round(k) for k in range(3)]})["ssd-tier@c16"]
    arms = {
        "dram-only@c8": base.model_copy(update={"arm": "dram-only@c8", "hit_tokens_p50": 904.0}),
        "ssd-tier@c8": base.model_copy(update={"arm": "ssd-tier@c8", "hit_tokens_p50": 7_164.0}),
        "dram-only@c4": base.model_copy(update={"arm": "dram-only@c4", "hit_tokens_p50": 3_000.0}),
        "ssd-tier@c4": base.model_copy(update={"arm": "ssd-tier@c4", "hit_tokens_p50": 3_577.0}),
    }
    assert held_little(arms) == {"dram-only@c8"}  # 904 is 13 % of 7,164; c4's 3,000 is 84 % of 3,577
    arms["dram-only@c16"] = arms["dram-only@c8"].model_copy(
        update={"arm": "dram-only@c16", "hit_tokens_p50": 0.0}
    )
    assert held_little(arms) == {"dram-only@c8", "dram-only@c16"}  # none reused, with no SSD tier beside it
    cell = arm_cells("h/tiny", arms["dram-only@c8"], small_cache=True)[1]
    assert cell.startswith("dram-only@c8 (its cache held little of the load: mostly recompute)")


def test_an_arm_whose_trials_disagree_says_so_beside_its_cv() -> None:
    # a reader found dram-only@whole's TTFT CV of 54 % over 3 trials unmarked beside its p50
    base = summaries({"ssd-tier": [demo_round(k) for k in range(3)]})["ssd-tier@c16"]
    assert arm_cells("h/tiny", base.model_copy(update={"ttft_cv": 0.54}))[7] == "54 % (trials disagree)"
    assert arm_cells("h/tiny", base.model_copy(update={"ttft_cv": 0.2}))[7] == "20 %"
