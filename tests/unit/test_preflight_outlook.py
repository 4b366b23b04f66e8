"""Preflight is a readiness check: its report says so, and how many of G3's references this
inventory lets G3 judge (from G3's plan, recorded by the preflight run), and why not the others."""

from __future__ import annotations

import subprocess
from pathlib import Path

from kvgate.base.criteria import Verdict
from kvgate.configuration.gateconfig import load_config
from kvgate.orchestration.g4_reach import reach as g4_reach
from kvgate.orchestration.gate_plans import record_g3_reach
from kvgate.record import JudgementRecord, RunStore, outcome
from kvgate.report import render
from kvgate.transport import connect


def preflight_run(root: Path) -> Path:
    """A preflight run of inventory/local.yaml (one llama.cpp and one vLLM deployment, one disk)."""
    meta = {"inventory": {"path": "inventory/local.yaml", "sha256": "cd" * 32}, "planned": ["localhost/ssh"]}
    store = RunStore.create(root, site="local", gate="preflight", meta=meta)
    record_g3_reach(store, load_config("inventory/local.yaml"))  # as the plugin does for preflight
    rec = JudgementRecord(id="localhost/ssh", host="localhost", check="ssh", verdict=Verdict.PASS)
    store.record(rec)
    store.finish("complete")
    return store.path


def pdftotext(pdf: Path) -> str:
    return subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout


def test_preflight_records_what_g3s_plan_can_judge_with_this_inventory(tmp_path: Path) -> None:
    reach = RunStore.open(preflight_run(tmp_path)).run_record().g3_reach
    assert reach is not None
    assert len(reach.references) == 12
    judged = set(reach.references) - set(reach.unjudged)
    # the volume arms of llama-cpp-disk-keep run, but a smoke profile's arms are never the seed's: a
    # reader saw preflight promise R2 and G3 skip it only because its figure landed far above the range
    assert judged == set()
    assert reach.unjudged["R2-ttft-p50-tp8"].startswith(
        "not comparable at this scale: at smoke scale the figure is not the seed's kind of figure"
    )
    assert reach.far_above == {}
    assert "one request at a time" in reach.unjudged["R2-recompute-ttft-p50-conc16"]
    assert "no second baseline volume kvgate may write to" in reach.unjudged["R9-load-time-deepseek-70b"]


def test_the_preflight_report_is_titled_a_readiness_check_and_says_what_g3_can_judge(tmp_path: Path) -> None:
    paths = render(preflight_run(tmp_path))
    assert paths.pdf is not None
    pdftotext = ["pdftotext", "-layout", "-l", "1", str(paths.pdf), "-"]
    text = subprocess.run(pdftotext, capture_output=True, text=True, check=True)
    page1 = " ".join(text.stdout.split())
    assert "kvgate PREFLIGHT readiness check — local" in page1
    assert "kvgate acceptance report" not in page1  # the page footer
    assert "PREFLIGHT acceptance report" not in page1
    # a reader saw a green PASS over "G3 can judge 0 of 12", two more "READY" over it: the word says none
    assert "READINESS CHECK NO REFERENCE REACHABLE G3 can judge 0 of 12 references" in page1
    assert outcome(RunStore.open(paths.html.parent))[0].text == (
        "NO REFERENCE REACHABLE — G3 can judge 0 of 12 references"
    )
    legend = " ".join(paths.html.read_text().split())  # a reader found the word defined nowhere
    assert (
        "NO REFERENCE REACHABLE: no check failed, so the lab can be measured, but this inventory keeps G3 "
        "from judging any" in legend
    )
    assert "not comparable at this scale: at smoke scale the figure is not the seed's kind of figure" in page1
    assert "R9 DeepSeek-70B service load time against NFS (Ascend) (R9-load-time-deepseek-70b)" in page1
    # a reader took 15 PASS for evidence of the storage: page 1 says what they are
    assert "its passed checks show that what the gates need works here" in page1


def test_preflight_says_what_g4_can_judge_on_this_host(tmp_path: Path) -> None:
    """A reader saw preflight forecast G3 only, then G4 skip 30 of its 48 checks: the plan's rulings and
    the health counters this machine has (no NVMe drive, no NIC loss counter, no NVMe-oF path) say so."""
    config = load_config("inventory/local.yaml")
    ex = connect("localhost", config.inventory.inventory.hosts["localhost"])
    try:
        found = g4_reach(ex, config, "localhost")  # G1's collectors, read on this machine now
    finally:
        ex.close()
    assert set(found) == {"localhost/tiny-llama", "localhost/tiny-vllm"}
    llama = found["localhost/tiny-llama"]
    assert llama.unjudged["ttft-drift"].startswith("not judged at this soak length: 120 s")
    assert llama.unjudged["nvme-media-errors"].startswith("no NVMe drive to read")
    assert llama.unjudged["paths"] == "no NVMe-oF controller: no multipath path to follow"
    judged = {"coverage", "failed-requests", "canary", "integrity-reads", "kernel-log", "hit-retention"}
    assert not judged & set(llama.unjudged)

    run = preflight_run(tmp_path)
    RunStore.open(run).merge_meta(g4_reach={k: v.model_dump() for k, v in found.items()})
    paths = render(run)
    assert paths.pdf is not None
    said = " ".join(pdftotext(paths.pdf).split())
    checks = sum(r.checks for r in found.values())
    judged = checks - sum(len(r.unjudged) for r in found.values())
    assert f"G4 can judge {judged} of its {checks} checks of 2 deployments on these hosts" in said
    assert "localhost/tiny-llama: memory-growth, throughput-retention, tier-growth, ttft-drift" in said
    # one line for the NIC's four absent loss counters, as G4's own health table says them
    assert (
        "localhost/tiny-llama: nic-cnp, nic-discard, nic-out-of-buffer, nic-pause; localhost/tiny-vllm:"
        in said
    )
