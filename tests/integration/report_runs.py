"""Stored runs of every gate and outcome, written through RunStore as the gates write them.

The report tests render these to HTML and PDF and read them back as a person would
(headless Chromium, pdftotext). Each run carries what made a real report unreadable:
raw byte rates, a reference far above its range, a 12-column table, a note repeated by
two sections, an empty section, engine text with control characters.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kvgate.base.criteria import Verdict
from kvgate.configuration.gate_profiles.g3 import load_g3_profile
from kvgate.configuration.gate_profiles.g4 import load_g4_profile
from kvgate.configuration.model_profiles import model_profile, scale_models
from kvgate.configuration.references import load_references
from kvgate.record import ArmFigures, JudgementRecord
from kvgate.record.store import RunStore

HOST = "localhost"
MEASURED = "no site threshold: measured as the site baseline"
WIDE = [f"column {i} CANARY" if i == 11 else f"column {i}" for i in range(12)]
LONG_NOTE = "How the arms were run. " * 40


def check(check_id: str, verdict: Verdict, **fields: Any) -> JudgementRecord:
    fields.setdefault("condition", f"{fields.get('metric', check_id)}: as recorded")
    return JudgementRecord(id=f"{HOST}/{check_id}", host=HOST, check=check_id, verdict=verdict, **fields)


def g1_checks() -> list[JudgementRecord]:
    return [
        check(
            "cpu.threads",
            Verdict.PASS,
            rule="G1-CPU-4",
            metric="cpu_threads",
            measured=96,
            expected=64,
            comparator=">=",
            source="inventory: hosts.localhost.expect.cpu.threads",
        ),
        check(
            "gpu.count",
            Verdict.SKIP,
            rule="G1-GPU-1",
            condition="not applicable — inventory declares gpus.count: 0",
        ),
    ]


def g2_checks(bw_fail: bool = False) -> list[JudgementRecord]:
    bw = 1.3551e9
    return [
        check(
            "volume[scratch].fio.seqread-1m.bw",
            Verdict.PASS,
            rule="G2-FIO-1",
            metric="seqread-1m.read_bw_bytes_per_s",
            measured=bw,
            expected=0,
            comparator=">",
            unit="B/s",
            source=MEASURED,
            condition=f"seqread-1m.read_bw_bytes_per_s={bw} B/s > 0 B/s",
        ),
        check(
            "volume[scratch].fio.randread-4k.cv",
            Verdict.FAIL if bw_fail else Verdict.PASS,
            rule="G2-FIO-5",
            metric="randread-4k.read_bw_bytes_per_s_cv",
            measured=1.184,
            expected=0.5,
            comparator="<=",
            source="profile smoke.max_cv",
            condition="randread-4k.read_bw_bytes_per_s_cv=1.184 ≤ 0.5",
        ),
    ]


def g3_checks() -> list[JudgementRecord]:
    return [
        check(
            "tiny.cold-proof",
            Verdict.PASS,
            rule="G3-KV-2",
            metric="restore_read_ratio",
            measured=1.02,
            expected=0.9,
            comparator=">=",
            unit="x",
            source="workloads/g3/smoke.yaml cold.min_read_ratio",
        ),
        check(
            "tiny.correctness",
            Verdict.PASS,
            rule="G3-KV-3",
            metric="output_mismatches",
            measured=0,
            expected=0,
            comparator="==",
            unit="requests",
            source="near-tie rule",
        ),
        check(
            "tiny.ttft-p50",
            Verdict.PASS,
            rule="R2-ttft-p50-tp8",
            metric="ttft_p50_reduction_pct",
            measured=95.0,
            expected=25.5,
            comparator=">=",
            unit="%",
            source="R2 (seed)",
        ),
        check(
            "engine[tiny-llama].throughput-gain-whole-machine",
            Verdict.FAIL,
            rule="R3-throughput-tp4x2-whole-machine",
            metric="throughput_gain_pct",
            measured=-28.84,
            expected=34.5,
            comparator=">=",
            unit="%",
            source="R3 (seed)",
            condition="throughput_gain_pct=-28.84 ≥ 34.5 (R3: +35–36%) — below the seed's +35–36%; "
            "llama-cpp-ram vs llama-cpp-disk-keep: 16 shared documents, 87.5% of each turn reused",
        ),
        check(
            "tiny.throughput-c16",
            Verdict.INVALID,
            rule="R2R3-cold-restore-throughput-conc16",
            metric="throughput_gain_pct",
            comparator=">=",
            expected=39.5,
            unit="%",
            source="R2/R3 (seed)",
            condition="throughput_gain_pct: not evaluable — the SSD did not serve the cold restore",
        ),
    ]


def g3_limited_checks(*, judge_reference: bool = True) -> list[JudgementRecord]:
    """A G3 that passed on one deployment judging one reference of the twelve its profile binds:
    every other one SKIP, with the profile's reason (as the 2026-12 demo's G3 on one llama.cpp).
    Without ``judge_reference`` the R2 check is SKIP too: the gate judged none of them."""
    profile = load_g3_profile("smoke")
    judged = g3_checks()[:3]  # cold proof, correctness, R2 TTFT p50 (PASS)
    if not judge_reference:
        judged[2] = check(
            "tiny.ttft-p50",
            Verdict.SKIP,
            rule=judged[2].rule,
            metric=judged[2].metric,
            condition=f"{judged[2].metric}: not applicable — the engine serves one request at a time",
        )
    skipped = [
        check(
            f"engine[tiny].{v.check}",  # the deployment g3_rows draws: its charts mark what was not judged
            Verdict.SKIP,
            rule=v.reference,
            metric=v.statistic,
            condition=f"{v.statistic}: not applicable — {v.reason}",
        )
        for v in profile.verdicts[1:]
    ]
    reason = profile.storage.reason if profile.storage else ""
    storage = [
        check(
            f"volume[scratch].{s.check}",
            Verdict.SKIP,
            rule=s.reference,
            metric=s.statistic,
            condition=f"{s.statistic}: not applicable — {reason}",
        )
        for s in (profile.storage.verdicts if profile.storage else [])
    ]
    return judged + skipped + storage


def bound_references() -> dict[str, Any]:
    """Every reference the smoke G3 profile binds, as G3 records them at plan time."""
    refs = load_references()
    return {i: refs.get(i).model_dump(mode="json") for i in load_g3_profile("smoke").reference_ids()}


def g4_checks() -> list[JudgementRecord]:
    return [
        check(
            "tiny.empty-responses",
            Verdict.FAIL,
            rule="G4-ERR-2",
            metric="empty_responses",
            measured=319,
            expected=0,
            comparator="<=",
            unit="responses",
            source="profile smoke.max_empty_responses",
            condition="empty_responses=319 responses ≤ 0 responses",
        ),
        check(
            "tiny.alive",
            Verdict.PASS,
            rule="G4-ERR-3",
            metric="engines_alive",
            measured=True,
            expected=True,
            comparator="==",
            source="every engine alive after every window",
        ),
    ]


def g4_sections() -> list[dict[str, Any]]:
    cells = ["4.2", "tiny/llama-cpp", "0.0962", "9.31", "localhost/vllm-cpu", "17,697"] * 2
    text = "caf\u00e9 \x1b[31mred\x1b[0m \ufffd ok"  # engine output: control characters, valid UTF-8
    table = {"columns": WIDE, "rows": [cells, [text, *cells[1:]]], "note": LONG_NOTE}
    return [
        {"title": "G4 windows", "template": "table.html", "data": table},
        {
            "title": "G4 engines",
            "template": "table.html",
            "data": {"columns": ["a"], "rows": [], "note": LONG_NOTE},
        },
    ]


def arm(name: str, p50: float, tput: float, bw: float | None = None) -> dict[str, Any]:
    """An arm's summary as G3 records it (ArmFigures); what no chart reads, left unmeasured."""
    summary = ArmFigures(
        arm=name,
        trials=5,
        completed=5,
        ttft_p50_s=p50,
        ttft_p90_s=p50 * 1.3,
        ttft_p99_s=p50 * 1.6,
        ttft_cv=0.1,
        e2e_p50_s=p50 + 0.2,
        output_throughput_tok_per_s=tput,
        prompt_tokens_p50=2048,
        device_read_bytes_p50=None,
        engine_read_bytes_p50=None,
        hit_tokens_p50=None,
        cache_growth_bytes_p50=None,
        predicted_bytes_p50=None,
        restart_to_ready_p50_s=None,
        read_bw_gb_per_s=bw,
    )
    return summary.model_dump()


def g3_rows() -> dict[str, Any]:
    """One deployment's raw figures, as G3 records them (numbers of a demo run of 2026-12-05)."""
    arms = [
        arm("recompute", 11.4, 1.03),
        arm("ssd-restore", 0.23, 29.1, 0.21),
        arm("baseline-volume@c8", 9.16, 6.67, 0.1),
        arm("candidate-volume@c8", 6.65, 10.0, 0.5),
        arm("baseline-volume-whole@c8", 5.76, 4.13, 0.1),
        arm("candidate-volume-whole@c8", 1.48, 12.2, 0.4),
    ]
    g2 = {
        "measured": True,
        "read_ceiling_bytes_per_s": 1.36e9,
        "kv_restore_request_bytes_per_s": 4.1e8,
        "best_read_bytes_per_s": 1.41e9,
        "source": "G2 lab-a/g2-20261205T010000Z",
    }
    prediction = {
        "concurrency": 1,
        "prompt_tokens": 2048,
        "restore_ttft_s": [0.12, 0.23],
        "recompute_ttft_s": [None, 11.4],
        "storage_floor_s": 0.11,
        "tier_bytes": 2.3e8,
        "ceiling": g2["source"],
    }
    figures = {"arms": {a["arm"]: a for a in arms}, "predictions": [prediction], "g2": g2}
    facts = {
        "tier": "llama-cpp-disk",
        "kind": "llama-cpp",
        "model": "a Llama generated here (random f16 weights, GGUF): 8 layers × 1024 wide",
        "serves_concurrently": False,
        "external_tier": True,
    }
    facts |= {"tier_notes": "", "near_ties": [], "loadgen_address": None, "capacity_figure": True}
    return {f"{HOST}/tiny": {"deployment": facts, "verdicts": [], "serving": [], "figures": figures}}


def g4_windows(store: RunStore) -> None:
    """Six 20-second windows of the soak, as the agent writes them (windows.jsonl)."""
    lines = []
    for i in range(6):
        summary = {
            "p50_ttft_ms": 100.0 + 5 * i,
            "p99_ttft_ms": 300.0,
            "output_throughput_tok_per_s": 160.0 - i,
            "total_input_tokens": 1000,
        }
        w = {"index": i, "start_unix_s": 1.7e9 + 20 * i, "end_unix_s": 1.7e9 + 20 * (i + 1)}
        w |= {"summary": summary, "rss_kib": 900 * 1024, "cache_dir_bytes": i << 20, "hit_tokens": None}
        lines.append(json.dumps(w | {"canary": []}) + "\n")
    store.artifact(HOST, "g4/tiny/windows.jsonl", "".join(lines))


def manifest() -> dict[str, Any]:
    """What G1 collects from a host (a demo run's), with the lists and mappings the appendix shows."""
    return {
        HOST: {
            "cpu_model": "AMD EPYC",
            "gpu_drivers": {},
            "gpus": [],
            "kernel": "6.18.44",
            "missing_tools": ["amd-smi", "nvidia-smi"],
            "nics": ["eth0 up speed n/a mtu 1400 virtio_net"],
            "array_write_cache": ["nvme2n1 write back, FUA (nqn.2024-01.com.example:fx100)"],
            "tools": {"fio": "3.33", "python3": "3.11.7"},
        }
    }


CHECKS = {"g1": g1_checks, "g2": g2_checks, "g3": g3_checks, "g4": g4_checks}
PROFILE = {"g3": load_g3_profile, "g4": load_g4_profile}  # as G3 and G4 record them


def build(root: Path, gate: str, *, outcome: str = "complete") -> Path:
    """One stored run of ``gate``; outcome: complete | error | interrupted | resumed | limited (G3: one
    reference of twelve judged, the rest SKIP) | unjudged (G3: none of the twelve judged)."""
    limited = outcome in ("limited", "unjudged")
    checks = g3_limited_checks(judge_reference=outcome == "limited") if limited else CHECKS[gate]()
    planned = [c.id for c in checks] + ([f"{HOST}/late.check"] if outcome == "interrupted" else [])
    meta: dict[str, Any] = {
        "inventory": {"path": "inventory/lab-a.yaml", "sha256": "ab" * 32},
        "argv": ["kvgate", "run", gate],
        "planned": planned,
        "hosts": {
            HOST: {
                "address": "10.0.0.1",
                "transport": "ssh",
                "roles": ["gpu-node", "storage-client", "engine", "control"],
            }
        },
        "kvgate_version": "0.1.0",
        "tool_versions": {HOST: {"fio": "3.36"}},
        "manifest": manifest(),
    }
    if gate in PROFILE:
        meta["configuration"] = {"gate_profile": PROFILE[gate]("smoke").model_dump(mode="json")}
    if gate == "g2":  # what its storage workloads read (kvgate.orchestration.g2.fixtures)
        smoke = model_profile("smoke").model_dump(mode="json", exclude_unset=True)
        meta["configuration"] = {"workload_models": dict.fromkeys(scale_models("smoke"), smoke)}
    if gate == "g3":  # limited: every reference the profile binds; else the ones its checks judged
        meta["g3_rows"] = g3_rows()
        judged = {c.rule for c in checks if c.verdict in (Verdict.PASS, Verdict.FAIL)}
        bound = bound_references().items()
        meta["configuration"]["bound_references"] = {i: r for i, r in bound if limited or i in judged}
    store = RunStore.create(root, site="lab-a", gate=gate, meta=meta)
    for rec in checks:
        store.record(rec)
    if outcome == "error":
        store.record(check("ib.link", Verdict.ERROR, condition="ssh: host unreachable"))
    if gate == "g4":
        store.update_meta(sections=g4_sections())
        g4_windows(store)
    if outcome == "resumed":
        store.update_meta(resumes=["2026-01-01T01:00:00Z"])
    if outcome != "interrupted":
        store.finish("complete")
    return store.path
