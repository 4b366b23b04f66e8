"""Specs are refused early with the key named; profiles validate once and yield specs the agent accepts."""

from pathlib import Path

import pytest

from kvgate.base.errors import ConfigError
from kvgate.configuration.model_profiles import agent_spec, load_profile, load_profiles
from kvgate.probes.agent import checkpoint, kv_restore, model_load
from kvgate.probes.agent.spec import RunDir, Spec, SpecError, require_space

PARSERS = {"kv-restore": kv_restore.parse, "model-load": model_load.parse, "checkpoint": checkpoint.parse}


def kv(tmp_path: Path, **extra: object) -> dict[str, object]:
    spec = {"target_dir": str(tmp_path), "kv_bytes_per_token": 16384, "prefix_tokens": 512, "requests": 2}
    return {**spec, **extra}


def test_a_valid_spec_parses_with_defaults(tmp_path: Path) -> None:
    common, layout, readers = kv_restore.parse(kv(tmp_path))
    assert readers == [1, 8]
    assert layout.tokens_per_chunk == 256
    assert common["direct"] is True
    assert common["checksum"] == "crc32"
    assert common["io_bytes"] == 8 << 20


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"requests": 0}, "requests: expected an integer >= 1"),
        ({"requests": True}, "requests: expected an integer"),
        ({"io_bytes": 5000}, "io_bytes: expected a multiple of 4096"),
        ({"direct": "yes"}, "direct: expected true or false"),
        ({"readers_per_request": []}, "readers_per_request: expected a non-empty list"),
        ({"checksum": "md4"}, "checksum: expected one of"),
        ({"prefix_tokns": 5}, "unknown keys \\['prefix_tokns'\\]"),
    ],
)
def test_bad_values_are_refused_naming_the_key(
    tmp_path: Path, extra: dict[str, object], message: str
) -> None:
    with pytest.raises(SpecError, match=message):
        kv_restore.parse(kv(tmp_path, **extra))


def test_target_must_be_an_existing_absolute_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for target, message in [
        ("relative/dir", "an absolute path"),
        (str(tmp_path / "missing"), "an existing directory"),
        (str(tmp_path / "file"), "an existing directory"),
    ]:
        with pytest.raises(SpecError, match=message):
            Spec({"target_dir": target}, "checkpoint").target_dir()
    assert not (tmp_path / "missing").exists()  # never created


def test_run_dir_is_new_and_cleanup_removes_only_what_the_run_wrote(tmp_path: Path) -> None:
    run = RunDir.create(str(tmp_path), "checkpoint", "r1")
    with pytest.raises(SpecError, match="already exists"):
        RunDir.create(str(tmp_path), "checkpoint", "r1")
    Path(run.file("mine.bin")).write_bytes(b"1")
    Path(run.path, "foreign.bin").write_bytes(b"2")  # not ours: must survive
    report = run.cleanup()
    assert report["removed_files"] == 1
    assert not report["run_dir_removed"]
    assert Path(run.path, "foreign.bin").exists()
    for bad in ("../escape", 5, "a/b"):
        with pytest.raises(SpecError, match="run_id"):
            RunDir.create(str(tmp_path), "checkpoint", bad)


def test_checkpoint_size_must_split_evenly_over_ranks(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="snapshot_bytes: expected a multiple of 3"):
        checkpoint.parse({"target_dir": str(tmp_path), "snapshot_bytes": 100, "ranks": 3})


def test_every_shipped_profile_yields_specs_the_agent_accepts(tmp_path: Path) -> None:
    profiles = load_profiles()
    assert {"smoke", "qwen2.5-32b", "deepseek-r1-distill-qwen-32b", "deepseek-r1-distill-llama-70b"} <= set(
        profiles
    )
    checked = 0
    for profile in profiles.values():
        for workload, parse in PARSERS.items():
            if getattr(profile, workload.replace("-", "_")) is not None:
                parse(agent_spec(profile, workload, target_dir=str(tmp_path)))
                checked += 1
    assert checked >= 6
    assert profiles["qwen2.5-32b"].checkpoint is not None
    assert profiles["qwen2.5-32b"].checkpoint.snapshot_bytes == 65_600_000_000  # seed R1


def test_profile_errors_name_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: x\nscale: smoke\nkv:\n  layers: 0\n  kv_heads: 1\n  head_dim: 1\n  dtype_bytes: 2\n"
    )
    with pytest.raises(ConfigError, match=r"bad.yaml: kv.layers: Input should be greater than 0"):
        load_profile(bad)
    bad.write_text("name: x\nscale: smoke\nkv_restore:\n  prefix_tokens: 256\n  requests: 1\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: kv: required when kv_restore is given"):
        load_profile(bad)
    bad.write_text("name: x\nscale: huge\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: scale"):
        load_profile(bad)


def test_a_profile_without_the_workload_section_is_an_error() -> None:
    with pytest.raises(ConfigError, match="no checkpoint section"):
        agent_spec(load_profiles()["deepseek-r1-distill-llama-70b"], "checkpoint", target_dir="/x")


def test_a_run_that_cannot_fit_is_refused_before_writing(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="bytes free; the workload writes"):
        require_space(str(tmp_path), 1 << 62, "checkpoint")
    require_space(str(tmp_path), 1, "checkpoint")
