"""Preflight starts every engine G3 will start for a deployment, each distinct launch once.

Before, preflight started only the deployment's tier engine (the tier probe): a TP8 capacity
engine, a dram-only arm or R1's readers that could not start were found hours into G3.
"""

from __future__ import annotations

from pathlib import Path

from kvgate.base.criteria import Measurement, Verdict, judge
from kvgate.configuration.gateconfig import load_config
from kvgate.orchestration.preflight import plan

INVENTORY = Path(__file__).resolve().parents[2] / "inventory"


def _starts(inventory: str, deployment: str) -> dict[str, str]:
    """Arm → rule of each planned start check of the deployment."""
    prefix = f"engine[{deployment}].start["
    checks = plan(load_config(INVENTORY / inventory))
    return {c.check[len(prefix) : -1]: c.criterion.rule for c in checks if c.check.startswith(prefix)}


def test_the_seed_lab_starts_its_readers_capacity_engines_and_volume_arms_once_each() -> None:
    starts = _starts("example-lab.yaml", "r2r3-480b")
    assert set(starts.values()) == {"PF-ENG-6"}
    assert set(starts) == {
        "recompute",
        "serial-read",
        "parallel-read",
        "dram-only",  # the TP8 capacity engine
        "dram-only#0",  # the whole machine's instances: their own environment and port
        "dram-only#1",
        "ssd-tier",
        "ssd-tier#1",  # ssd-tier#0 is the tier probe's launch: started by engine[r2r3-480b].start
        "candidate-volume",  # R2/R3's tier with the seed's settings; both volume arms launch it alike
        "candidate-volume#0",
        "candidate-volume#1",
    }


def test_a_deployment_without_tier_or_readers_starts_only_what_it_runs() -> None:
    assert set(_starts("local.yaml", "tiny-vllm")) == {"recompute", "dram-only"}


def test_a_start_that_failed_is_fail_with_the_engine_log() -> None:
    [check] = [
        c for c in plan(load_config(INVENTORY / "local.yaml")) if c.check.endswith(".start[recompute]")
    ][:1]
    failed = judge(check.criterion, Measurement("engine_start", "did not start: llama: bad -ngl (log: ...)"))
    assert failed.verdict is Verdict.FAIL
    assert "bad -ngl" in failed.condition
    assert judge(check.criterion, Measurement("engine_start", "ready in 4.2 s")).verdict is Verdict.PASS


def test_the_seed_labs_r9_model_loads_are_started_on_their_host_only() -> None:
    checks = plan(load_config(INVENTORY / "example-lab.yaml"))
    loads = {(c.host, c.check): c.criterion.rule for c in checks if c.check.startswith("model-load[")}
    assert loads == {
        ("npu-1", "model-load[deepseek-32b].start"): "PF-ENG-7",
        ("npu-1", "model-load[deepseek-70b].start"): "PF-ENG-7",
    }
