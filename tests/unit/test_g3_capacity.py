"""G3's capacity arms (R2/R3 against dram-only): the sessions, the evidence of a round, the plan."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from nullserver import NullConfig, NullServer
from pydantic import ValidationError

from kvgate.configuration.engine_profile import engine_profile, load_profiles
from kvgate.configuration.gate_profiles.g3 import Capacity, G3Profile, VerdictBinding, load_g3_profile
from kvgate.configuration.inventory.schema import Inventory
from kvgate.orchestration.g3 import client
from kvgate.orchestration.g3.evidence import capacity_reason, dram_held_reason
from kvgate.orchestration.g3.plan import capacity_profiles
from kvgate.probes.agent.sessions import Sessions
from kvgate.probes.engines.tinymodel import TinyLlamaSpec
from kvgate.probes.evidence.window import Counts

CAP = Capacity(documents=8, reuse=0.75, concurrency=(4, 8))
MB = 1_000_000


def reason(arm: str, reused: int | None, counts: Counts | None = None, dropped: bool = True) -> str | None:
    return capacity_reason(
        arm,
        CAP,
        reused=reused,
        reusable=1000,
        counts=counts,
        state_bytes_per_token=MB,
        min_hit_ratio=0.9,
        caches_dropped=dropped,
    )


def test_a_dram_only_level_that_kept_the_documents_does_not_compare_capacity() -> None:
    assert reason("dram-only", 700) is None  # one round alone says nothing about the set
    assert reason("dram-only", None) is not None  # nothing shows what served it: never trusted
    assert dram_held_reason(CAP, reused=1008, reusable=3000) is None  # one sticky document in three rounds
    why = dram_held_reason(CAP, reused=1704, reusable=3000)
    assert why is not None
    assert "reused 1704 of the documents' 3000 tokens over the level's rounds (57% ≥ 50%)" in why
    assert "its DRAM tier held the set (raise capacity.documents)" in why


def test_an_ssd_tier_round_must_reuse_the_documents_and_read_them_from_the_ssd() -> None:
    cold = Counts(
        device_read_bytes=900 * MB, device_written_bytes=0, engine_read_bytes=880 * MB, counted_on="vda"
    )
    assert reason("ssd-tier", 990, cold) is None
    lost = reason("ssd-tier", 400, cold)
    assert lost is not None
    assert "reused 400 of the documents' 1000 tokens (40% < 90%): the set did not fit its SSD tier" in lost
    page_cache = Counts(
        device_read_bytes=10 * MB, device_written_bytes=0, engine_read_bytes=10 * MB, counted_on="vda"
    )
    served_from_ram = reason("ssd-tier", 990, page_cache)
    assert served_from_ram is not None
    assert "vda read 10000000 B of the 990000000 B the reused prefixes needed (1% < 50%)" in served_from_ram
    undropped = reason("ssd-tier", 990, cold, dropped=False)
    assert undropped is not None
    assert "page cache not dropped" in undropped


def test_sessions_visit_the_documents_round_robin_each_the_same_words_in_every_turn() -> None:
    s = Sessions("run/1", documents=3, prompt_tokens=64, reuse=0.75, document_ratios=(1.0, 2.0, 1.0))
    assert [s.document(j) for j in range(7)] == [0, 1, 2, 0, 1, 2, 0]
    assert len(s.document_text(0).split()) == 48  # its share of the prompt at its own ratio ...
    assert len(s.document_text(1).split()) == 24  # ... two tokens per word: half the words
    turns = [s.prompt(j) for j in (0, 3, 6)]
    assert all(t.startswith(s.document_text(0) + " ") for t in turns)
    assert len(set(turns)) == 3  # every turn asks its own question
    with pytest.raises(ValueError, match="2 document ratios for 3 documents"):
        Sessions("r", documents=3, prompt_tokens=64, reuse=0.75, document_ratios=(1.0, 1.0))


def run_sessions(urls: list[str], out: Path, *extra: str) -> dict[str, Any]:
    """The sessions driver as G3 ships it: the loadgen zipapp's ``sessions`` command."""
    app = out.parent / "loadgen.pyz"
    app.write_bytes(client.zipapp_bytes())
    argv = [
        sys.executable,
        str(app),
        "sessions",
        *(a for u in urls for a in ("--url", u)),
        "--model",
        "m",
        "--concurrency",
        "2",
        "--documents",
        "4",
        "--prompt-tokens",
        "40",
        "--reuse",
        "0.75",
        "--max-tokens",
        "3",
        "--salt",
        "s",
        "--out",
        str(out),
        *extra,
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def test_the_shipped_driver_sends_each_document_to_the_engine_that_holds_it(tmp_path: Path) -> None:
    a, b = NullServer(NullConfig()), NullServer(NullConfig())
    with a.in_thread() as url_a, b.in_thread() as url_b:
        doc = run_sessions([url_a, url_b], tmp_path / "one.json", "--first-turn", "3", "--turns", "1")
        assert (a.requests_seen, b.requests_seen) == (0, 1)  # turn 3: document 3, engine 3 mod 2
        assert b.last_request["max_tokens"] == 3
        run_sessions([url_a, url_b], tmp_path / "six.json", "--first-turn", "4", "--turns", "6")
    assert (a.requests_seen, b.requests_seen) == (3, 4)
    assert doc["sessions"]["documents_of"] == [3]
    words = len(Sessions("s", 4, 40, 0.75).prompt(3).split())  # the null server counts words as tokens
    assert doc["records"][0]["prompt_tokens"] == words
    assert doc["summary"]["completed"] == 1
    assert doc["workload_invalid_reason"] is None  # 40 one-word tokens, as the null server counts them


def test_documents_must_split_evenly_over_the_engines(tmp_path: Path) -> None:
    app = tmp_path / "loadgen.pyz"
    app.write_bytes(client.zipapp_bytes())
    argv = [
        sys.executable,
        str(app),
        "sessions",
        "--url",
        "http://a",
        "--url",
        "http://b",
        "--url",
        "http://c",
        "--model",
        "m",
        "--concurrency",
        "1",
        "--first-turn",
        "0",
        "--turns",
        "1",
        "--documents",
        "4",
        "--prompt-tokens",
        "8",
        "--reuse",
        "0.5",
        "--max-tokens",
        "1",
        "--salt",
        "s",
        "--out",
        str(tmp_path / "o.json"),
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert "4 documents do not split evenly over 3 engines" in proc.stderr


def test_the_capacity_section_and_its_bindings_are_validated() -> None:
    with pytest.raises(ValidationError, match=r"documents \(3\) must be at least the largest level \(8\)"):
        Capacity(documents=3, reuse=0.75, concurrency=(4, 8))
    base = {"check": "x", "reference": "R2-ttft-p50-tp8", "statistic": "ttft_p50_s"}
    with pytest.raises(ValidationError, match="baseline dram-only with candidate ssd-tier"):
        VerdictBinding.model_validate(base | {"baseline_arm": "recompute", "candidate_arm": "ssd-tier"})
    with pytest.raises(ValidationError, match="the capacity arms run at load levels"):
        VerdictBinding.model_validate(base | {"baseline_arm": "dram-only", "candidate_arm": "ssd-tier"})
    with pytest.raises(
        ValidationError, match="a list of concurrency levels is judged on the capacity or volume"
    ):
        VerdictBinding.model_validate(
            base | {"baseline_arm": "recompute", "candidate_arm": "ssd-restore", "concurrency": [8, 16]}
        )
    smoke = load_g3_profile("smoke").model_dump()
    smoke["volumes"]["concurrency"] = [4, 8]
    with pytest.raises(
        ValidationError, match=r"ttft-p50-reduction: level\(s\) \[16\] are not in volumes\.conc"
    ):
        G3Profile.model_validate(smoke)


def inventory(scale: str = "smoke", **engine: Any) -> Inventory:
    dep = {
        "tier_profile": "llama-cpp-disk",
        "recompute_profile": "llama-cpp-recompute",
        "volume": "v",
    } | engine
    return Inventory.model_validate(
        {
            "site": "s",
            "scale": scale,
            "hosts": {"h": {"roles": ["engine"]}},
            "volumes": {"v": {"path": "/v", "kind": "candidate", "scratch": True}},
            "engines": {"tiny": dep},
        }
    )


def test_the_capacity_arms_are_kvgates_own_figure_bound_to_no_reference() -> None:
    # R2/R3 compared the array with local NVMe (SEED-SOURCES.md), not an engine without its SSD tier
    for scale in ("smoke", "full"):
        profile = load_g3_profile(scale)
        assert profile.capacity is not None  # still measured and shown
        assert not [v.check for v in profile.verdicts if v.capacity], scale


def test_every_tier_profile_names_a_dram_only_arm_of_its_own_engine_without_the_tier() -> None:
    for profile in load_profiles().values():
        if profile.capacity_arms is None:
            continue
        arms = capacity_profiles(profile, profiles=engine_profile)
        dram = arms["dram-only"]
        assert dram.kind == profile.kind, profile.name
        assert dram.cache is None, f"{dram.name}: a dram-only arm has no external tier"
        assert dram.capacity_arms is None
        if profile.cache is not None:
            assert arms["ssd-tier"].cache is not None, profile.name
    declared = {p.name for p in load_profiles().values() if p.capacity_arms is not None}
    assert declared >= {
        "llama-cpp-disk",
        "vllm-lmcache",
        "vllm-native-tiering",
        "sglang-hicache",
        "vllm-cpu-prefix",
    }


def flag(profile: str, name: str) -> str:
    argv = engine_profile(profile).launch
    return str(argv[argv.index(name) + 1])


def test_the_smoke_document_set_is_past_each_local_dram_tier_and_inside_the_ssd_tier() -> None:
    cap = load_g3_profile("smoke").capacity
    assert cap is not None
    turn = (cap.prompt_tokens or 0) + load_g3_profile("smoke").max_tokens
    llama_set = cap.documents * turn * TinyLlamaSpec().llama_cpp_state_bytes_per_token  # a state per turn
    assert int(flag("llama-cpp-ram", "--cache_size")) < llama_set / 4  # holds under a quarter of the set
    assert llama_set * 2 < int(flag("llama-cpp-disk-keep", "--cache_size"))  # the set and its turns
    vllm_set_tokens = cap.documents * round((cap.prompt_tokens or 0) * cap.reuse)
    kv_tokens = int(flag("vllm-cpu-dram", "--kv-cache-memory-bytes")) // 4096  # tiny HF: 4096 B/token
    assert kv_tokens < vllm_set_tokens
    assert kv_tokens >= int(flag("vllm-cpu-dram", "--max-model-len"))  # vLLM refuses less
