"""Preflight is a readiness check: its report says so, and how many of G3's references this
inventory lets G3 judge (from G3's plan, recorded by the preflight run), and why not the others."""

from __future__ import annotations

import subprocess
from pathlib import Path

from kvgate.base.criteria import Verdict
from kvgate.configuration.gateconfig import load_config
from kvgate.orchestration.gate_plans import record_g3_reach
from kvgate.record import JudgementRecord, RunStore, outcome
from kvgate.report import render


def preflight_run(root: Path) -> Path:
    """A preflight run of inventory/local.yaml (one llama.cpp and one vLLM deployment, one disk)."""
    meta = {"inventory": {"path": "inventory/local.yaml", "sha256": "cd" * 32}, "planned": ["localhost/ssh"]}
    store = RunStore.create(root, site="local", gate="preflight", meta=meta)
    record_g3_reach(store, load_config("inventory/local.yaml"))  # as the plugin does for preflight
    rec = JudgementRecord(id="localhost/ssh", host="localhost", check="ssh", verdict=Verdict.PASS)
    store.record(rec)
    store.finish("complete")
    return store.path


def test_preflight_records_what_g3s_plan_can_judge_with_this_inventory(tmp_path: Path) -> None:
    reach = RunStore.open(preflight_run(tmp_path)).run_record().g3_reach
    assert reach is not None
    assert len(reach.references) == 12
    judged = set(reach.references) - set(reach.unjudged)
    # the volume arms of llama-cpp-disk-keep run, but a smoke profile's arms are never the seed's: a
    # reader saw preflight promise R2 and G3 skip it only because its figure landed far above the range
    assert judged == set()
    assert reach.unjudged["R2-ttft-p50-tp8"].startswith(
        "not comparable at this scale: at smoke scale the figure is not comparable"
    )
    assert reach.far_above == {}
    assert "one request at a time" in reach.unjudged["R2-recompute-ttft-p50-conc16"]
    assert "scratch baseline volume" in reach.unjudged["R9-load-time-deepseek-70b"]


def test_the_preflight_report_is_titled_a_readiness_check_and_says_what_g3_can_judge(tmp_path: Path) -> None:
    paths = render(preflight_run(tmp_path))
    assert paths.pdf is not None
    pdftotext = ["pdftotext", "-layout", "-l", "1", str(paths.pdf), "-"]
    text = subprocess.run(pdftotext, capture_output=True, text=True, check=True)
    page1 = " ".join(text.stdout.split())
    assert "kvgate PREFLIGHT readiness check — local" in page1
    assert "kvgate acceptance report" not in page1  # the page footer
    assert "PREFLIGHT acceptance report" not in page1
    # a reader saw a green PASS over "G3 can judge 0 of 12": the word says the lab is ready with gaps
    assert "READINESS CHECK READY WITH GAPS G3 can judge 0 of 12 references" in page1
    assert outcome(RunStore.open(paths.html.parent))[0].text == (
        "READY WITH GAPS — G3 can judge 0 of 12 references"
    )
    assert "not comparable at this scale: at smoke scale the figure is not comparable" in page1
    assert "R9 DeepSeek-70B service load time against NFS (Ascend) (R9-load-time-deepseek-70b)" in page1
