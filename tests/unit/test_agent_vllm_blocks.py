"""vLLM's file-tier layout: the names, sizes and config.json a site engineer checks against vLLM's files."""

import json
import re
from pathlib import Path

import pytest

from kvgate.base.errors import ConfigError
from kvgate.configuration.model_profiles import agent_spec, load_profile
from kvgate.probes.agent import kv_restore
from kvgate.probes.agent.kv_layout import VLLMBlockLayout, kv_bytes_per_token
from kvgate.probes.agent.spec import RunDir, SpecError

KIB, MIB = 1 << 10, 1 << 20
QWEN_32B = kv_bytes_per_token(layers=64, kv_heads=8, head_dim=128, dtype_bytes=2)
NAME = re.compile(
    r"^(?P<base>.+_[0-9a-f]{12})_r0/(?P<h3>[0-9a-f]{3})/(?P<h2>[0-9a-f]{2})_g0/(?P<h>[0-9a-f]{64})\.bin$"
)


def layout(**changes: object) -> VLLMBlockLayout:
    fields: dict[str, object] = {"kv_bytes_per_token": 16 * KIB, "tokens_per_block": 16, "blocks_per_file": 1}
    fields.update({"prefix_tokens": 100, "requests": 3})
    fields.update(changes)
    return VLLMBlockLayout(**fields)  # type: ignore[arg-type]


def test_qwen25_32b_default_blocks_are_4_mib_files_of_16_tokens() -> None:
    qwen = layout(kv_bytes_per_token=QWEN_32B, prefix_tokens=10240, requests=16)
    assert qwen.tokens_per_file == 16
    assert qwen.file_bytes == 4 * MIB
    assert qwen.files_per_request == 640
    assert qwen.total_bytes == 16 * 10240 * QWEN_32B
    assert layout(kv_bytes_per_token=QWEN_32B, blocks_per_file=16).file_bytes == 64 * MIB  # 256-token chunks


def test_only_full_chunks_are_stored_and_files_round_up_to_the_page() -> None:
    tail = layout(prefix_tokens=100)  # 6 full 16-token blocks; the 4-token tail is recomputed by vLLM
    assert tail.files_per_request == 6
    assert tail.describe()["stored_tokens_per_request"] == 96
    assert [size for r, _i, size in tail.files() if r == 0] == [256 * KIB] * 6
    odd = layout(kv_bytes_per_token=1000, tokens_per_block=16)  # 16000 bytes of KV in a 16384-byte row
    assert odd.file_bytes == 16 * KIB
    assert sum(c.length for c in odd.cells("/run", 0, 4096)) == odd.request_bytes


def test_names_match_vllm_file_mapper() -> None:
    # Printed by vLLM 0.32's own FileMapper(root_dir="ROOT", model_name="kvgate-emulated",
    # tokens_per_hash=16, blocks_per_file=1, tp/pp/pcp/dcp 1, rank 0, dtype="emulated",
    # kv_cache_groups=[{"tokens_per_block": 16, "layer_names": []}], parallel_agnostic=True)
    # .get_file_name(make_offload_key(sha256(pack("<QQQ", 1, 0, 0)), 0)), ROOT/ stripped.
    assert layout().name(0, 0) == (
        "kvgate-emulated_3c0d2a666044_r0/32e/db_g0/"
        "32edb6022c0921d99aa347e9cda5dc2db413f5574eebaaa8592234308ffebd2b.bin"
    )
    assert list(layout().metadata_files()) == ["kvgate-emulated_3c0d2a666044/config.json"]


def test_every_file_has_its_own_hash_name_in_the_fan_out() -> None:
    many = layout(prefix_tokens=64 * 16, requests=4, blocks_per_file=2, model_name="Qwen/Qwen2.5-32B")
    names = [many.name(r, i) for r, i, _ in many.files()]
    assert len(set(names)) == len(names) == 4 * 32
    for name in names:
        m = NAME.match(name)
        assert m is not None, name
        assert m["base"].startswith("Qwen_Qwen2.5-32B_")  # '/' in a model id does not nest
        assert (m["h3"], m["h2"]) == (m["h"][:3], m["h"][3:5])
    assert layout(seed=2).name(0, 0) != layout().name(0, 0)


def test_config_json_holds_the_hashed_fields() -> None:
    text = layout(blocks_per_file=4).metadata_files()
    (name, body) = next(iter(text.items()))
    fields = json.loads(body)
    assert fields["blocks_per_file"] == 4
    assert fields["tokens_per_hash"] == 16
    assert fields["inference_engine"] == "vllm"
    assert name.split("/")[0] == layout(blocks_per_file=4).describe()["block_dir"].removesuffix("_r0")


def spec(tmp_path: Path, **extra: object) -> dict[str, object]:
    base = {"target_dir": str(tmp_path), "kv_bytes_per_token": 16 * KIB, "prefix_tokens": 64, "requests": 2}
    return {**base, **extra}


def test_the_spec_picks_the_layout_and_refuses_the_other_layouts_keys(tmp_path: Path) -> None:
    _, chunks, _ = kv_restore.parse(spec(tmp_path))
    assert chunks.describe()["layout"] == "lmcache-chunks"
    _, blocks, _ = kv_restore.parse(spec(tmp_path, layout="vllm-blocks", blocks_per_file=2))
    assert isinstance(blocks, VLLMBlockLayout)
    assert blocks.describe()["tokens_per_file"] == 32


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"layout": "vllm"}, r"layout: expected one of \['lmcache-chunks', 'vllm-blocks'\], got 'vllm'"),
        (
            {"layout": "vllm-blocks", "tokens_per_chunk": 256},
            "tokens_per_chunk: does not apply to layout vllm",
        ),
        ({"tokens_per_block": 16}, "tokens_per_block: does not apply to layout lmcache-chunks"),
        ({"layout": "vllm-blocks", "blocks_per_file": 0}, "blocks_per_file: expected an integer >= 1"),
        (
            {"layout": "vllm-blocks", "tokens_per_block": 128},
            "prefix_tokens: expected at least tokens_per_block x blocks_per_file = 128",
        ),
        ({"layout": "vllm-blocks", "model_name": "a b"}, "model_name: expected 1-100 letters"),
    ],
)
def test_bad_layout_settings_are_refused_naming_the_key(
    tmp_path: Path, extra: dict[str, object], message: str
) -> None:
    with pytest.raises(SpecError, match=message):
        kv_restore.parse(spec(tmp_path, **extra))


def test_nested_run_files_and_their_directories_are_cleaned_up(tmp_path: Path) -> None:
    run = RunDir.create(str(tmp_path), "kv-restore", "n1")
    for name in ("a/b/one.bin", "a/b/two.bin", "a/c/three.bin"):
        Path(run.file(name)).write_bytes(b"1")
    Path(run.path, "a", "c", "foreign.bin").write_bytes(b"2")  # not ours: it and its directories stay
    report = run.cleanup()
    assert report["removed_files"] == 3
    assert not report["run_dir_removed"]
    assert sorted(p.name for p in Path(run.path).rglob("*")) == ["a", "c", "foreign.bin"]
    with pytest.raises(ValueError, match="plain relative path"):
        run.file("../escape.bin")


PROFILE = """name: site-model
scale: smoke
kv: {layers: 2, kv_heads: 2, head_dim: 128, dtype_bytes: 2}
kv_restore:
  layout: %s
  prefix_tokens: 256
  requests: 2
"""


def test_a_profile_passes_the_layout_through_to_a_spec_the_agent_accepts(tmp_path: Path) -> None:
    path = tmp_path / "site.yaml"
    path.write_text(PROFILE % "vllm-blocks\n  blocks_per_file: 4")
    got = agent_spec(load_profile(path), "kv-restore", target_dir=str(tmp_path))
    assert (got["layout"], got["blocks_per_file"], got["model_name"]) == ("vllm-blocks", 4, "site-model")
    assert "tokens_per_chunk" not in got
    _, parsed, _ = kv_restore.parse(got)
    assert isinstance(parsed, VLLMBlockLayout)
    assert parsed.base_dir.startswith("site-model_")


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            "vllm-blocks\n  tokens_per_chunk: 256",
            "kv_restore: tokens_per_chunk does not apply to layout vllm",
        ),
        (
            "lmcache-chunks\n  blocks_per_file: 2",
            "kv_restore: blocks_per_file does not apply to layout lmcache",
        ),
        (
            "vllm-blocks\n  tokens_per_block: 512",
            "kv_restore: prefix_tokens 256 is shorter than one vllm-blocks",
        ),
        ("vllm", "kv_restore.layout: Input should be 'lmcache-chunks' or 'vllm-blocks'"),
    ],
)
def test_profile_layout_errors_name_file_and_field(tmp_path: Path, lines: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(PROFILE % lines)
    with pytest.raises(ConfigError, match=f"bad.yaml: {message}"):
        load_profile(path)
