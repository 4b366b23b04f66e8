"""G3 report tables, laid out from the numbers G3 keeps: arms, restore evidence, verdicts with
reference and threshold, engine limits."""

from __future__ import annotations

import json
from typing import Any

from kvgate.configuration.engine_profile import PROFILE_DIR, load_profile
from kvgate.configuration.gate_profiles.g3 import load_g3_profile
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.inventory.schema import Inventory
from kvgate.configuration.references import load_references
from kvgate.orchestration.g3.arms import Outcome, Trial, Window, summarize
from kvgate.orchestration.g3.measure import DeploymentResult
from kvgate.orchestration.g3.plan import plan
from kvgate.orchestration.g3.report_rows import rows
from kvgate.orchestration.g3.verdicts import (
    cold_proof_measurement,
    correctness_measurement,
    reference_measurements,
)
from kvgate.record import EngineLaunch, RunRecord, Section
from kvgate.record.schema import SCHEMA
from kvgate.report.g3_tables import sections as laid_out

MiB = 1 << 20


def result() -> DeploymentResult:
    tier = load_profile(PROFILE_DIR / "llama-cpp-disk.yaml")
    w = Window("vda", 100 * MiB, 96 * MiB, 2047, caches_dropped=True)
    restore = [
        Trial("ssd-restore", i, f"s{i}", Outcome(0.3 + i / 10, 0.5, "t"), 2048, w, 91 * MiB, 92 * MiB, 1.5)
        for i in range(3)
    ]
    recompute = [Trial("recompute", i, f"s{i}", Outcome(7.0 + i, 8.0, "t"), 2048) for i in range(3)]
    r = DeploymentResult("h", "tiny", tier, device="vda")
    r.arms = {
        a: summarize(a, ts, output_tokens=12)
        for a, ts in (("recompute", recompute), ("ssd-restore", restore))
    }
    for c, (dram, ssd) in {4: (4.0, 1.0), 8: (6.0, 2.0), 16: (9.0, 3.0)}.items():  # capacity: ↓75/67/67 %
        dram_only, ssd_tier = f"dram-only@c{c}", f"ssd-tier@c{c}"
        r.arms[dram_only] = r.arms["recompute"].model_copy(update={"arm": dram_only, "ttft_p50_s": dram})
        r.arms[ssd_tier] = r.arms["ssd-restore"].model_copy(update={"arm": ssd_tier, "ttft_p50_s": ssd})
    for c, (base, cand) in {4: (4.0, 2.8), 8: (6.0, 4.2), 16: (9.0, 6.3)}.items():  # volumes: ↓30 % each
        b, v = f"baseline-volume@c{c}", f"candidate-volume@c{c}"
        r.arms[b] = r.arms["ssd-restore"].model_copy(update={"arm": b, "ttft_p50_s": base})
        r.arms[v] = r.arms["ssd-restore"].model_copy(update={"arm": v, "ttft_p50_s": cand})
    profile, refs = load_g3_profile("smoke"), load_references()
    r.measurements = {"cold-proof": cold_proof_measurement(restore, profile.cold)}
    b = profile.verdict("ttft-p50-reduction")
    r.measurements |= reference_measurements(refs.get(b.reference), b, r.arms, max_cv=None)
    record = EngineLaunch(  # what G3 records of each engine it starts
        profile=tier.name,
        kind=tier.kind,
        host="h",
        argv=["python", "-m", "llama_cpp.server"],
        env={},
        workdir="/scratch/w",
        files={},
        version="llama-cpp-python 0.3.36",
        pid=4242,
        log_path="/scratch/w/engine.log",
        started_at="2026-12-05T10:00:00Z",
        ready_s=1.5,
        serves_concurrently=False,
    )
    r.engines = {"ssd-restore": record.model_dump()}
    return r


def inventory() -> Inventory:
    dep = {
        "tier_profile": "llama-cpp-disk",
        "recompute_profile": "llama-cpp-recompute",
        "volume": "v",
        "baseline_volume": "nvme",
    }
    return Inventory.model_validate(
        {
            "site": "s",
            "scale": "smoke",
            "hosts": {"h": {"roles": ["engine"]}},
            "volumes": {
                "v": {"path": "/v", "kind": "candidate", "scratch": True},
                "nvme": {"path": "/nvme", "kind": "baseline", "scratch": True},
            },
            "engines": {"tiny": dep},
        }
    )


def by_title(found: list[Section]) -> dict[str, dict[str, Any]]:
    return {s.title: s.data for s in found}


def sections(stored: dict[str, Any], engines: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The G3 sections of rows as run.json keeps them (JSON), with the engines G3 recorded."""
    as_stored = json.loads(json.dumps({"g3_rows": stored, "engines": engines or {}}, sort_keys=True))
    record = RunRecord.model_validate(
        as_stored | {"schema": SCHEMA, "gate": "g3", "site": "s", "status": "complete"}
    )
    return laid_out(
        record.g3_rows, record.engines
    )  # as run.json keeps them (keys sorted) and reads them back


def test_the_sections_show_arms_evidence_verdicts_and_what_the_engine_cannot_do() -> None:
    r = result()
    found = by_title(sections({"h/tiny": rows(r, plan(in_memory(inventory())))}, {"h/tiny": r.engines}))
    arms = found["G3 arms: recompute vs SSD restore vs warm"]
    assert [r[1] for r in arms["rows"]] == [
        "recompute",
        "ssd-restore",
        "dram-only@c4",
        "ssd-tier@c4",
        "dram-only@c8",
        "ssd-tier@c8",
        "dram-only@c16",
        "ssd-tier@c16",
        "baseline-volume@c4",
        "candidate-volume@c4",
        "baseline-volume@c8",
        "candidate-volume@c8",
        "baseline-volume@c16",
        "candidate-volume@c16",
    ]
    assert arms["rows"][1][4] == "0.4"  # TTFT p50 s: the median of 0.3, 0.4, 0.5; recompute's is 8
    assert (
        "Rows dram-only@… / ssd-tier@… (kvgate's own capacity figure, bound to no reference)" in arms["note"]
    )
    assert "serves one request at a time" in arms["note"]
    assert "keeps one prompt's state at a time" in arms["note"]
    evidence = found["G3 restore evidence (medians over trials)"]["rows"][1]
    # restore GB/s: the engine's own 96 MiB over the median TTFT of 0.3, 0.4, 0.5 s (the device read 100)
    # in decimal MB, as page 1 and the GB/s beside them: 100 MiB = 105 MB
    assert evidence[2:8] == ["105", "101", f"{96 * MiB / 0.4 / 1e9:.3g}", "2047", "96.5 (95.4)", "1.5"]
    assert evidence[8] == "yes"
    verdicts = {r[1]: r for r in found["G3 verdicts against the references"]["rows"]}
    reduction = verdicts["engine[tiny].ttft-p50-reduction"]
    assert reduction[2:5] == ["30 %", "R2-ttft-p50-tp8: ↓26–32%", ">= ↓25.5%"]  # the least of three levels
    assert reduction[5] == "not compared"  # SKIP: not placed against the seed's range
    assert "Rows baseline-volume@c<N> / candidate-volume@c<N> (R2/R3" in arms["note"]
    assert reduction[7] == "SKIP"  # inside the range, but a smoke profile's arms are never the seed's
    assert verdicts["engine[tiny].recompute-throughput-speedup"][7] == "SKIP"
    assert verdicts["engine[tiny].throughput-gain-conc16"][7] == "SKIP"  # llama.cpp: not batched serving
    write_through = verdicts["engine[tiny].ssd-restore.write-through"]
    assert (write_through[5], write_through[7]) == (
        "—",
        "INVALID",
    )  # a site rule: no seed range; not measured
    assert found["Appendix: G3 engines"]["rows"] == [
        ["h/tiny", "ssd-restore", "llama-cpp-disk", "llama-cpp-python 0.3.36", "1.50", "not logged",
         "1 request at a time"]
    ]  # fmt: skip
    assert found["Appendix: G3 engine command lines"]["rows"] == [
        ["h/tiny", "ssd-restore", "python -m llama_cpp.server", "not read"]  # the record keeps no ports
    ]
    assert all(len(r) == len(found[t]["columns"]) for t in found for r in found[t]["rows"])


def test_the_cold_read_rows_follow_the_other_arms_with_their_restore_bandwidth() -> None:
    r = result()
    r.arms |= {
        f"{a}@c4": r.arms["ssd-restore"].model_copy(update={"arm": f"{a}@c4", "read_bw_gb_per_s": bw})
        for a, bw in (("serial-read", 0.98), ("parallel-read", 5.23))
    }
    found = by_title(sections({"h/tiny": rows(r, plan(in_memory(inventory())))}))
    arms = found["G3 arms: recompute vs SSD restore vs warm"]
    assert [x[1] for x in arms["rows"]][-2:] == [
        "serial-read@c4",
        "parallel-read@c4",
    ]  # after every other arm
    assert "Rows serial-read@c<C> / parallel-read@c<C> (R1)" in arms["note"]
    evidence = found["G3 restore evidence (medians over trials)"]["rows"]
    assert [x[4] for x in evidence[-2:]] == ["0.98", "5.23"]


def test_a_tolerated_near_tie_is_said_beside_the_correctness_verdict() -> None:
    """The demo printed 'correctness 0 requests PASS' while p.8 said one output differed at a near-tie."""
    r = result()
    r.near_ties = ["request 3: near-tie at token 8: recompute ' Machine' (-6.1493)"]
    r.compared = (4, 40)
    r.measurements["correctness"] = correctness_measurement([], 44)
    said = r.inputs("correctness").said
    assert said == (
        # '0 requests' says of how many (a reader could not tell)
        "of 44 outputs compared: 4 restored or warm against recompute's, 40 under load against their "
        "reference arm's",
        "1 output(s) differed only at a near-tied token, tolerated: " + r.near_ties[0],
    )
    assert r.inputs("cold-proof").said == ()


def test_the_arms_note_says_each_capacity_arms_kv_cache_as_launched() -> None:
    """A reader found dram-only's 100 MB RAM bound and ssd-tier's 4 GB only inside two command lines,
    pages after the capacity figures that rest on them."""
    r = result()
    launch = r.engines["ssd-restore"]
    ram = "no tier on the storage: a RAM prompt cache (LRU, 100 MB)"
    disk = "a tier on the storage, 4.29 GB: one diskcache entry per prompt state"
    r.engines |= {
        "dram-only": launch | {"profile": "llama-cpp-ram", "kv_cache": ram},
        "ssd-tier": launch | {"profile": "llama-cpp-disk-keep", "kv_cache": disk},
        "ssd-restore": launch | {"kv_cache": disk},  # not a capacity arm: said under its own rows
    }
    found = by_title(sections({"h/tiny": rows(r, plan(in_memory(inventory())))}, {"h/tiny": r.engines}))
    note = found["G3 arms: recompute vs SSD restore vs warm"]["note"]
    assert (
        f"KV caches as launched: dram-only (llama-cpp-ram): {ram}; ssd-tier (llama-cpp-disk-keep): {disk}."
        in note
    )


def test_the_planner_table_names_the_g2_run_its_figures_came_from() -> None:
    # a reader found G3 citing "the latest passed G2 run": one that recorded a baseline, by another kvgate
    r = result()
    row = rows(r, plan(in_memory(inventory())))
    source = (
        "G2 run g2-20261207T022429Z (BASELINE RECORDED, kvgate a9ef7aa27d4e; this is kvgate 6d2bfe10c1f3)"
    )
    row["figures"]["g2"] = {
        "measured": True,
        "read_ceiling_bytes_per_s": 1.88e9,
        "kv_restore_request_bytes_per_s": None,
        "best_read_bytes_per_s": 1.9e9,
        "source": f"{source}: read ceiling (bs 1m, 2 jobs × QD 1)",
    }
    note = by_title(sections({"h/tiny": row}, {"h/tiny": r.engines}))[
        "G3 predicted (tiering planner) vs measured"
    ]
    assert note["note"].endswith(f" G2's figures: h/tiny from {source}.")


def test_the_verdict_table_names_the_planned_checks_it_holds_no_row_for() -> None:
    # a reader counted 23 rows against 27 checks: the storage checks ruled at plan time stored no row
    r = result()
    stored = json.loads(json.dumps({"h/tiny": rows(r, plan(in_memory(inventory())))}))
    record = RunRecord.model_validate(
        {"g3_rows": stored, "schema": SCHEMA, "gate": "g3", "site": "s", "status": "complete"}
    )
    held = [f"h/{v.check}" for v in record.g3_rows["h/tiny"].verdicts]
    unheld = ["h/storage[scratch].service-load-32b", "h/storage[scratch].checkpoint-save-speedup"]
    found = by_title(laid_out(record.g3_rows, {}, [*held, *unheld]))
    note = found["G3 verdicts against the references"]["note"]
    assert note.endswith(
        "Not in this table: 2 planned checks that measured nothing, each judged at plan time (Findings says "
        "why): h/storage[scratch].service-load-32b, h/storage[scratch].checkpoint-save-speedup."
    )
    alone = by_title(laid_out(record.g3_rows, {}, held))["G3 verdicts against the references"]["note"]
    assert "Not in this table" not in alone
