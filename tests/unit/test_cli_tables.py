"""The console tables after a run: every host shown, and nothing cut in an 80-column terminal (issue 27)."""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console

from kvgate.base.criteria import Verdict
from kvgate.cli.live import checks_table, summary_table
from kvgate.configuration.references import load_references
from kvgate.record import JudgementRecord
from kvgate.record.store import RunStore


def store_with(tmp_path: Path, planned: list[str], *records: JudgementRecord, gate: str = "g1") -> RunStore:
    meta = {"planned": planned, "inventory": {"path": "i.yaml", "sha256": "ab"}}
    store = RunStore.create(tmp_path, site="s", gate=gate, meta=meta)
    for rec in records:
        store.record(rec)
    return store


def printed(table: object) -> str:
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(table)
    return console.export_text()


def test_an_early_ctrl_c_still_shows_every_host_and_what_was_not_evaluated(tmp_path: Path) -> None:
    """Before: only the header, when Ctrl-C came before any check had a verdict."""
    store = store_with(tmp_path, ["gpu-1/cpu.threads", "gpu-1/memory.total", "gpu-2/cpu.threads"])
    text = printed(summary_table(store))
    rows = {line.split("│")[1].strip(): line for line in text.splitlines() if line.startswith("│")}
    assert set(rows) == {"gpu-1", "gpu-2"}
    assert re.search(r"│\s+2\s│\s*ERROR\s*│$", rows["gpu-1"]), rows["gpu-1"]


def test_a_condition_keeps_its_numbers_whole_at_80_columns(tmp_path: Path) -> None:
    """Before: "command_round_trip_s=0.004 / 184 s" across two lines, beside preflight's long check names."""
    conditions = {
        "ssh": "command_round_trip_s=0.004184 s ≥ 0 s",
        "engine[tiny-llama].tier-cycle": "restore_read_ratio=1.142 x ≥ 0.9 x",
        "engine[tiny-vllm].tokenizer": "tokenizer_ok=True = True",
    }
    records = [
        JudgementRecord(id=f"localhost/{c}", host="localhost", check=c, verdict=Verdict.PASS, condition=cond)
        for c, cond in conditions.items()
    ]
    store = store_with(tmp_path, [r.id for r in records], *records, gate="preflight")
    text = printed(checks_table(store))
    for number in ("command_round_trip_s=0.004184", "restore_read_ratio=1.142"):
        assert number in text, text


def test_a_host_row_says_the_gates_word_not_pass_beside_it(tmp_path: Path) -> None:
    """G2 on the lab printed 'worst PASS' for its host above 'gate verdict: BASELINE RECORDED'."""
    recorded = JudgementRecord(
        id="h/volume[v].fio.seqread-1m.bw",
        host="h",
        check="volume[v].fio.seqread-1m.bw",
        verdict=Verdict.PASS,
        comparator=">",
        expected=0,
        unit="B/s",
        source="no site threshold: measured as the site baseline",
    )
    store = store_with(tmp_path, [recorded.id], recorded, gate="g2")
    (row,) = [line for line in printed(summary_table(store)).splitlines() if line.startswith("│h")]
    assert "BASELINE RECORDED" in row


def test_the_host_stays_whole_beside_the_longest_word_at_80_columns(tmp_path: Path) -> None:
    """make demo's console printed 'localh…' beside 'NO REFERENCE JUDGED'."""
    rec = JudgementRecord(id="localhost/a", host="localhost", check="a", verdict=Verdict.PASS)
    store = store_with(tmp_path, [rec.id], rec, gate="g3")
    r2 = load_references().get("R2-ttft-p50-tp8").model_dump(mode="json")
    RunStore(store.path).update_meta(configuration={"bound_references": {"R2-ttft-p50-tp8": r2}})
    text = printed(summary_table(store))
    assert "│localhost" in text, text
    assert "NO REFERENCE JUDGED" in text, text
