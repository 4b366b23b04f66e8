"""What a soak window counts as an empty response: no token, not no text (issue 11's G4 FAIL)."""

from pathlib import Path

import pytest

from kvgate.configuration.engine_profile import load_profile
from kvgate.orchestration.g4.plan import skip_reason
from kvgate.probes.agent.soak import hit_ratio, load_numbers
from kvgate.probes.agent.soak_sample import engine_memory_kib, sample
from kvgate.probes.evidence import cgroup_pids
from kvgate.probes.loadgen.record import RequestRecord

PROFILES = Path(__file__).parents[2] / "workloads" / "engines"


def answered(i: int, *, tokens: int, text: str) -> RequestRecord:
    return RequestRecord(
        index=i,
        endpoint="u",
        send_ns=0,
        chunk_ns=[1_000_000 * (k + 1) for k in range(max(tokens, 1))],
        status=200,
        success=True,
        prompt_tokens=512,
        completion_tokens=tokens,
        finish_reason="length",
        text=text,
    )


def test_tokens_that_decode_to_no_text_are_not_an_empty_response() -> None:
    # vLLM CPU on the tiny byte-level model: 8 tokens, each a UTF-8 continuation byte, text ''
    # (seen on 16 of 200 prompts with ignore_eos; the demo's G4 counted them as empty and FAILed)
    records = [
        answered(0, tokens=8, text=""),
        answered(1, tokens=8, text=" Sit Sit"),
        answered(2, tokens=0, text=""),
    ]
    numbers = load_numbers(records, [False, False, False], 1.0, "usage")
    assert numbers["empty_responses"] == 1


def test_empty_responses_are_judged_only_where_the_engine_can_be_asked_for_max_tokens() -> None:
    llama = load_profile(PROFILES / "llama-cpp-disk.yaml")
    assert llama.fixed_output == "min_tokens"
    assert skip_reason("empty-responses", llama) is None
    no_way = llama.model_copy(update={"fixed_output": None})
    assert "end of sequence" in (skip_reason("empty-responses", no_way) or "")


def test_a_container_engine_is_sampled_by_its_cgroup_not_the_runtime_clients_group(tmp_path: Path) -> None:
    """`podman run` attached is the engine's process group; the engine runs in the container's cgroup."""
    proc, cgroups = tmp_path / "proc", tmp_path / "cgroup"
    (proc / "4242").mkdir(parents=True)
    (proc / "4242" / "cgroup").write_text("0::/machine.slice/libpod-abc.scope/container\n")
    group = cgroups / "machine.slice/libpod-abc.scope/container"
    group.mkdir(parents=True)
    (group / "cgroup.procs").write_text("4250\n4242\n")
    assert cgroup_pids(4242, proc_root=str(proc), cgroup_root=str(cgroups)) == [4242, 4250]
    gone = engine_memory_kib({"container_pid": 99999999}, [])  # stopped: nothing of it left in memory
    assert gone == {"rss_kib": 0, "rss_anon_kib": 0, "processes": 0}


def test_an_engine_without_a_hit_counter_has_its_tier_hits_counted_from_its_log(tmp_path: Path) -> None:
    # a reader found G4's hit trend judged only on the tier-less vLLM: llama.cpp's server exports no
    # counter, but its log names every state it restored from the tier (the demo's: 73 in 2 minutes)
    log = tmp_path / "engine.log"
    hit = "Llama._create_completion: cache hit\n"
    log.write_text(f"{hit}Llama.generate: 405 prefix-match hit, remaining 127 prompt tokens to eval\n")
    engine = {"pgid": 999_999_999, "hit_log": str(log)}
    assert sample([engine], None)["hit_counter"] == 405
    with log.open("a") as f:  # a resident reuse is not a tier hit; a line still being written waits
        f.write("Llama.generate: 9 prefix-match hit, remaining 1 prompt tokens to eval\n")
        f.write(f"{hit}Llama.generate: 404 prefix-match hit, rem")
    assert sample([engine], None)["hit_counter"] == 405
    with log.open("a") as f:
        f.write("aining 135 prompt tokens to eval\n")
    counted = sample([engine], None)
    assert (counted["hit_counter"], counted["logged_prompt_tokens"]) == (809, 532 + 10 + 539)
    # llama.cpp's server streams no usage: the window's prompt tokens are those its log counted
    window = {"summary": {"total_input_tokens": None}, "canary": [], "hit_tokens": 809 - 405}
    assert hit_ratio(window | {"logged_prompt_tokens": 10 + 539}) == pytest.approx(404 / 549)
    assert hit_ratio(window) is None
    log.write_text("")  # the log began again (an engine restarted over it): the counter went back
    assert sample([engine], None)["hit_counter"] is None
    llama = load_profile(PROFILES / "llama-cpp-disk-keep.yaml")
    assert skip_reason("hit-retention", llama) is None  # judged, from the log
