"""A headline row names what produced its figure: the deployment, its engines and model, the load,
its spread and a link to its caveats; a threshold that differs from the reference says why."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from test_g3_tables import inventory as g3_inventory
from test_g3_tables import result as g3_result

from kvgate.base.criteria import Verdict
from kvgate.configuration.gate_profiles.g3 import load_g3_profile
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.references import load_references
from kvgate.orchestration.g3.plan import plan as g3_plan
from kvgate.orchestration.g3.report_rows import rows as g3_rows
from kvgate.record import JudgementRecord, RunStore
from kvgate.report import render
from kvgate.report.model import load_run
from kvgate.report.summary import summarize

RULE = "R2-ttft-p50-tp8"


def launches(template: dict[str, Any]) -> dict[str, Any]:
    """R2's volume arms' engines as G3 records them: llama.cpp's disk tier on the baseline volume and on
    the candidate."""
    model = ["--model", "/var/tmp/kvgate-models/tiny-llama.gguf"]
    disk = template | {"profile": "llama-cpp-disk-keep", "argv": ["python", "-m", "x", *model]}
    return {"baseline-volume": disk, "candidate-volume": disk}


def g3_run(root: Path) -> Path:
    r = g3_result()
    profile = load_g3_profile("smoke").model_dump(mode="json")
    bound = {RULE: load_references().get(RULE).model_dump(mode="json")}
    meta = {"planned": [], "configuration": {"gate_profile": profile, "bound_references": bound}}
    store = RunStore.create(root, site="lab-a", gate="g3", meta=meta)
    store.merge_meta(engines={"h/tiny": launches(r.engines["ssd-restore"])})
    store.merge_meta(g3_rows={"h/tiny": g3_rows(r, g3_plan(in_memory(g3_inventory())))})
    check = "engine[tiny].ttft-p50-reduction"
    fields = {"metric": "ttft_p50_reduction_pct", "measured": 66.67, "expected": 25.5, "comparator": ">="}
    store.record(
        JudgementRecord(id=f"h/{check}", host="h", check=check, verdict=Verdict.PASS, rule=RULE, **fields)
    )
    store.finish("complete")
    return store.path


def test_the_row_names_the_deployment_engines_model_load_and_spread(tmp_path: Path) -> None:
    (row,) = summarize(load_run(g3_run(tmp_path))).headline
    assert row.what == "R2 TTFT p50 reduction"  # not the seed's "480B TP8" setup
    assert row.made is not None
    assert row.made.produced == (
        "tiny on h: llama-cpp-disk-keep (baseline-volume) vs llama-cpp-disk-keep (candidate-volume), "
        "model tiny-llama.gguf; load at c4/c8/c16"
        " — queued: the engine serves one request at a time, so the load measures queueing"
    )
    assert re.match(r"TTFT CV \d+(\.\d+)? % · ", row.made.spread)  # a CV in %, as everywhere
    assert row.made.spread.endswith(" at c4 · c8 · c16 over 3 loads each (candidate-volume)")  # n beside it
    assert row.note.startswith("R2 (480B TP8 TTFT p50 at three concurrency levels) was measured with 480B")
    assert row.threshold == "↓26% read as the seed writes it: met from ↓25.5%"


def test_page_1_links_the_row_to_its_caveats(tmp_path: Path) -> None:
    paths = render(g3_run(tmp_path))
    html = paths.html.read_text()
    assert '<a href="#g3-arms-recompute-vs-ssd-restore-vs-warm">Caveats' in html
    assert 'id="g3-arms-recompute-vs-ssd-restore-vs-warm"' in html
    assert paths.pdf is not None
    pdftotext = ["pdftotext", "-raw", "-l", "1", str(paths.pdf), "-"]
    page1 = " ".join(subprocess.run(pdftotext, capture_output=True, text=True, check=True).stdout.split())
    assert "Measured by tiny on h: llama-cpp-disk-keep (baseline-volume) vs llama-cpp-disk-keep" in page1
