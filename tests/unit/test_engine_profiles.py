"""Engine profiles load and render; the Prometheus parser reads real vLLM /metrics text."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
import yaml

from kvgate.base.errors import ConfigError, LabError
from kvgate.configuration.engine_profile import (
    PROFILE_DIR,
    Container,
    engine_profile,
    load_profile,
    load_profiles,
)
from kvgate.probes.engines import EngineService, Placement
from kvgate.probes.engines.metrics import MetricsError, diff, parse
from kvgate.probes.engines.service import kv_cache_said, settled_kv_bytes
from kvgate.probes.engines.tinymodel import build_vocab
from kvgate.transport.local import LocalExecutor

RECORDED = Path(__file__).parents[1] / "data" / "recorded" / "engines"
VALUES = {
    "python": "/v/bin/python",
    "model": "/m/tiny.gguf",
    "port": "8123",
    "host": "127.0.0.1",
    "cache_dir": "/mnt/candidate/kv",
    "run_dir": "/var/tmp/run",
    "api_port": "18123",
}
LAB_PROFILES = {
    "vllm-lmcache",
    "vllm-lmcache-serial-read",
    "vllm-native-tiering",
    "sglang-hicache",
    "sglang-recompute",
}


@pytest.mark.parametrize("path", sorted(PROFILE_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_profile_loads_and_renders_without_holes(path: Path) -> None:
    profile = load_profile(path)
    launch = profile.render(VALUES)
    rendered = " ".join([*launch.argv, *launch.env.values(), launch.workdir, *launch.files.values()])
    assert "{python}" not in rendered
    assert "{cache_dir}" not in rendered
    assert launch.argv[0] == "/v/bin/python"


def test_the_expected_profiles_exist() -> None:
    names = set(load_profiles())
    assert {
        "llama-cpp-disk",
        "llama-cpp-recompute",
        "vllm-cpu-recompute",
        "vllm-cpu-prefix",
    } | LAB_PROFILES <= names


def test_llama_cpp_profiles_say_they_serve_one_request_at_a_time() -> None:
    for profile in load_profiles().values():
        if profile.kind == "llama-cpp":
            assert profile.serves_concurrently is False, profile.name


def test_llama_cpp_disk_cache_lands_on_the_candidate_volume() -> None:
    profile = load_profile(PROFILE_DIR / "llama-cpp-disk.yaml")
    launch = profile.render(VALUES)
    assert launch.workdir == "/mnt/candidate/kv"  # .cache/llama_cache is relative to the working dir
    assert profile.cache is not None
    assert (
        profile.cache.kv_dir.replace("{cache_dir}", VALUES["cache_dir"])
        == "/mnt/candidate/kv/.cache/llama_cache"
    )
    assert launch.argv[launch.argv.index("--cache_type") + 1] == "disk"


def test_lmcache_config_puts_the_disk_tier_on_the_candidate_and_keeps_json_braces() -> None:
    launch = load_profile(PROFILE_DIR / "vllm-lmcache.yaml").render(VALUES)
    config = yaml.safe_load(launch.files["lmcache.yaml"])
    assert config["local_disk"] == "file:///mnt/candidate/kv/lmcache/"
    assert config["extra_config"] == {"use_odirect": True, "disk_io_threads": 8}
    # the restart-free cold path: LMCache's internal API server at {api_port}, a number in the config
    assert (config["internal_api_server_enabled"], config["internal_api_server_port_start"]) == (True, 18123)
    profile = load_profile(PROFILE_DIR / "vllm-lmcache.yaml")
    clear = profile.reset[-1]
    assert (profile.cold_by, clear.method, clear.port_offset, clear.each_rank) == (
        "reset",
        "DELETE",
        10001,
        True,
    )
    assert launch.env["LMCACHE_CONFIG_FILE"] == "/var/tmp/run/lmcache.yaml"
    kv = json.loads(launch.argv[launch.argv.index("--kv-transfer-config") + 1])
    assert kv["kv_connector"] == "LMCacheConnectorV1"


def test_native_tiering_fs_root_is_rendered_inside_the_json() -> None:
    launch = load_profile(PROFILE_DIR / "vllm-native-tiering.yaml").render(VALUES)
    kv = json.loads(launch.argv[launch.argv.index("--kv-transfer-config") + 1])
    tier = kv["kv_connector_extra_config"]["secondary_tiers"][0]
    assert (kv["kv_connector_extra_config"]["spec_name"], tier["type"]) == ("TieringOffloadingSpec", "fs")
    assert tier["root_dir"] == "/mnt/candidate/kv/vllm-fs"


def _write(tmp_path: Path, stem: str, **changes: object) -> Path:
    data = yaml.safe_load((PROFILE_DIR / "llama-cpp-disk.yaml").read_text())
    data["name"] = stem
    data.update(changes)
    path = tmp_path / f"{stem}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_wrong_type_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = _write(tmp_path, "site-engine", serves_concurrently="sometimes")
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert err.value.path == str(path)
    assert err.value.field == "serves_concurrently"


def test_an_unknown_placeholder_names_the_field(tmp_path: Path) -> None:
    path = _write(tmp_path, "site-engine", launch=["{python}", "--gpus", "{gpu_count}"])
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert err.value.field == "launch"
    assert "{gpu_count}" in str(err.value)


def test_a_misspelled_field_is_rejected(tmp_path: Path) -> None:
    path = _write(tmp_path, "site-engine", serve_concurrently=True)
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert (err.value.field, "unknown field") == ("serve_concurrently", err.value.expected[:13])


def test_the_name_must_match_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "site-engine", name="other-engine")
    with pytest.raises(ConfigError, match="must match the file name"):
        load_profile(path)


def test_parser_reads_recorded_vllm_v1_counters_and_created_gauges() -> None:
    snap = parse((RECORDED / "vllm_v1_head.txt").read_text())
    assert snap.kind("vllm:prefix_cache_hits_total") == "counter"
    assert snap.kind("vllm:prefix_cache_hits_created") == "gauge"
    assert snap.value("vllm:prefix_cache_queries_total", engine="0") == 0.0
    assert snap.value("vllm:prompt_tokens_created") == pytest.approx(1.7769301736864982e09)


def test_parser_reads_a_recorded_vllm_cpu_histogram() -> None:
    snap = parse((RECORDED / "vllm_v0_cpu_metrics.txt").read_text())
    ttft = snap.histogram("vllm:time_to_first_token_seconds", model_name="Qwen/Qwen3-0.6B")
    assert ttft.count == 69.0
    assert ttft.buckets[-1] == (float("inf"), 69.0)
    assert ttft.mean == pytest.approx(4941.843970537186 / 69)
    info = next(lab for (name, lab) in snap.samples if name == "vllm:cache_config_info")
    assert dict(info)["cpu_kvcache_space_bytes"] == "4294967296"
    assert snap.value("vllm:request_success_total", finished_reason="length") == 38.0


def test_diff_brackets_a_window_and_keeps_gauges() -> None:
    text = (RECORDED / "vllm_v0_cpu_metrics.txt").read_text()
    before = parse(text)
    line = 'vllm:prompt_tokens_total{model_name="Qwen/Qwen3-0.6B"}'
    after = parse(text.replace(f"{line} 43952.0", f"{line} 45952.0"))
    delta = diff(before, after)
    assert delta.value("vllm:prompt_tokens_total") == 2000.0
    assert delta.value("vllm:generation_tokens_total") == 0.0
    assert delta.histogram("vllm:time_to_first_token_seconds").count == 0.0
    assert delta.value("vllm:lora_requests_info") == pytest.approx(1.755178079975038e09)


def test_a_counter_that_went_back_is_an_error_not_a_negative_delta() -> None:
    before = parse('vllm:prefix_cache_hits_total{engine="0"} 500\n')
    after = parse('vllm:prefix_cache_hits_total{engine="0"} 20\n')
    with pytest.raises(MetricsError, match="went back"):
        diff(before, after)


def test_a_missing_series_raises_instead_of_reading_zero() -> None:
    snap = parse((RECORDED / "vllm_v1_head.txt").read_text())
    with pytest.raises(MetricsError, match="external_prefix_cache_hits_total"):
        snap.value("vllm:external_prefix_cache_hits_total")


def test_garbage_is_rejected_with_its_line_number() -> None:
    with pytest.raises(MetricsError, match="line 2"):
        parse("ok_total 1\nthis is not { prometheus\n")


def test_the_tiny_model_vocabulary_is_a_valid_spm_vocabulary() -> None:
    tokens, scores, types = build_vocab()
    assert len(tokens) == len(set(tokens)) == len(scores) == len(types)
    assert tokens[:3] == ["<unk>", "<s>", "</s>"]
    assert types.count(6) == 256  # byte fallback: any text tokenizes
    assert {"<0x0A>", "\u2581the", "\u2581cache"} <= set(tokens)


def test_an_instance_runs_the_profile_with_its_environment_and_the_site_arguments() -> None:
    profile = load_profile(PROFILE_DIR / "vllm-lmcache.yaml")
    where = Placement(run_dir="/r", model="/m", cache_dir="/c", port=18000, python="/v/bin/python")
    args = ("--tensor-parallel-size", "4")
    eng = EngineService(LocalExecutor(), profile, where, env={"CUDA_VISIBLE_DEVICES": "4,5,6,7"}, args=args)
    assert eng.launch.argv[-2:] == args  # after the profile's own flags: the site's last word
    assert eng.launch.argv[:-2] == profile.render(where.values()).argv
    assert eng.launch.env["CUDA_VISIBLE_DEVICES"] == "4,5,6,7"
    assert eng.launch.env["LMCACHE_CONFIG_FILE"] == "/r/lmcache.yaml"  # the profile's env is kept


def test_r1s_readers_differ_in_their_disk_readers_only() -> None:
    serial = load_profile(PROFILE_DIR / "vllm-lmcache-serial-read.yaml").render(VALUES)
    parallel = load_profile(PROFILE_DIR / "vllm-lmcache-parallel-read.yaml").render(VALUES)
    assert serial.argv == parallel.argv
    assert serial.env == parallel.env
    s_cfg = yaml.safe_load(serial.files["lmcache.yaml"])
    p_cfg = yaml.safe_load(parallel.files["lmcache.yaml"])
    assert s_cfg["extra_config"].pop("disk_io_threads") == 1
    threads = p_cfg["extra_config"].pop("disk_io_threads")
    assert threads > 1
    assert s_cfg == p_cfg  # nothing else differs between R1's two readers
    tier = yaml.safe_load(
        load_profile(PROFILE_DIR / "vllm-lmcache.yaml").render(VALUES).files["lmcache.yaml"]
    )
    assert tier["extra_config"]["disk_io_threads"] == threads
    assert tier["max_local_cpu_size"] < s_cfg["max_local_cpu_size"]  # G3's tier: small CPU tier; R1: one card


def test_hit_counters_are_selectors_and_the_warm_arm_may_count_resident_hits() -> None:
    tiering = load_profile(PROFILE_DIR / "vllm-native-tiering.yaml")
    assert tiering.counter() == ("vllm:prompt_tokens_cached_by_source_total", {"source": "disk"})
    assert tiering.counter(resident=True) == ("vllm:prompt_tokens_cached_total", {})  # HBM hits count too
    cpu = load_profile(PROFILE_DIR / "vllm-cpu-prefix.yaml")
    assert cpu.counter() == cpu.counter(resident=True) == ("vllm:prefix_cache_hits_total", {})
    assert load_profile(PROFILE_DIR / "llama-cpp-disk.yaml").counter() is None  # no /metrics: its log


def test_a_malformed_hit_counter_names_the_file_and_field(tmp_path: Path) -> None:
    data = yaml.safe_load((PROFILE_DIR / "vllm-cpu-prefix.yaml").read_text())
    bad = tmp_path / "vllm-cpu-prefix.yaml"
    bad.write_text(yaml.safe_dump(data | {"hit_counter": "vllm:x{source=disk}"}))
    with pytest.raises(ConfigError) as err:
        load_profile(bad)
    assert err.value.field == "hit_counter"
    assert "not a series selector" in str(err.value)


def test_tier_bytes_settle_once_writes_stop_or_reach_the_prediction(tmp_path: Path) -> None:
    profile = load_profile(PROFILE_DIR / "llama-cpp-disk.yaml")
    where = Placement(run_dir=str(tmp_path / "run"), model="/m", cache_dir=str(tmp_path / "c"), port=18000)
    eng = EngineService(LocalExecutor(), profile, where)  # not started: only its tier directory is read
    kv = tmp_path / "c" / ".cache" / "llama_cache"
    kv.mkdir(parents=True)
    (kv / "a").write_bytes(b"x" * 4096)
    t0 = time.monotonic()
    assert settled_kv_bytes([eng], at_least=4096) >= 4096
    assert time.monotonic() - t0 < 1.0  # the prediction reached: no waiting

    def writer() -> None:  # an asynchronous tier still writing after the response
        for i in range(4):
            time.sleep(0.3)
            (kv / f"b{i}").write_bytes(b"y" * 4096)

    thread = threading.Thread(target=writer)
    thread.start()
    total = settled_kv_bytes([eng], at_least=10**9, quiet_s=1.0, timeout_s=30)
    thread.join()
    assert total == eng.kv_dir_bytes() >= 5 * 4096  # every write counted, nothing after it


@pytest.mark.parametrize(
    "name", ["../escape.yaml", "sub/dir.yaml", ".hidden", "", "engine.pid", "engine-1.log"]
)
def test_a_file_name_must_stay_a_plain_name_in_the_run_directory(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path, "site-engine", files={name: "static text"})
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert err.value.path == str(path)
    assert err.value.field.startswith("files")
    assert "plain file name in the run directory" in str(err.value)


# a volume path with a quote: before, it ended the JSON string and put a second root_dir after it
HOSTILE_DIR = '/mnt/c","root_dir":"/etc'


def test_a_quote_in_a_volume_path_cannot_move_the_native_tier_out_of_the_volume() -> None:
    launch = load_profile(PROFILE_DIR / "vllm-native-tiering.yaml").render(
        VALUES | {"cache_dir": HOSTILE_DIR}
    )
    kv = json.loads(launch.argv[launch.argv.index("--kv-transfer-config") + 1])
    [tier] = kv["kv_connector_extra_config"]["secondary_tiers"]
    assert tier["root_dir"] == f"{HOSTILE_DIR}/vllm-fs"
    assert set(tier) == {"type", "root_dir", "n_read_threads", "n_write_threads"}


def test_the_serialized_json_argument_is_what_vllm_parsed_before() -> None:
    """Byte for byte the old hand-written argument, so vLLM's parser sees what it was checked with."""
    launch = load_profile(PROFILE_DIR / "vllm-native-tiering.yaml").render(VALUES)
    tier = '{"type":"fs","root_dir":"/mnt/candidate/kv/vllm-fs","n_read_threads":16,"n_write_threads":8}'
    assert launch.argv[-1] == (
        '{"kv_connector":"OffloadingConnector","kv_role":"kv_both","kv_connector_extra_config":'
        '{"spec_name":"TieringOffloadingSpec","cpu_bytes_to_use":100000000000,"block_size":64,'
        f'"eviction_policy":"lru","secondary_tiers":[{tier}]}}}}'
    )


@pytest.mark.parametrize("name", ["vllm-lmcache", "vllm-lmcache-serial-read"])
def test_a_quote_in_a_volume_path_cannot_change_lmcaches_config(name: str) -> None:
    cache_dir = '/mnt/c", "local_disk": "file:///etc'
    launch = engine_profile(name).render(VALUES | {"cache_dir": cache_dir})
    config = yaml.safe_load(launch.files["lmcache.yaml"])
    assert config["local_disk"] == f"file://{cache_dir}/lmcache/"
    keys = {
        "chunk_size",
        "local_cpu",
        "max_local_cpu_size",
        "local_disk",
        "max_local_disk_size",
        "internal_api_server_enabled",
        "internal_api_server_port_start",
        "internal_api_server_host",
        "extra_config",
    }
    assert set(config) == keys


def test_a_line_break_in_a_placeholder_value_is_never_filled_in() -> None:
    profile = load_profile(PROFILE_DIR / "vllm-lmcache.yaml")
    with pytest.raises(LabError, match="has a control character"):
        profile.render(VALUES | {"cache_dir": "/mnt/c\nlocal_disk: file:///etc"})


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"launch": ["{python}", '{"root_dir": "{cache_dir}/t"}']}, "launch", "declare it as {json: …}"),
        ({"env": {"CFG": "{root: '{cache_dir}'}"}}, "env", "declare it as {json: …}"),
        ({"files": {"cfg.yaml": "root: {cache_dir}\n"}}, "files", "must be declared as data"),
        (
            {"files": {"cfg.json": {"format": "json", "data": {"{cache_dir}": 1}}}},
            "files",
            "without placeholders",
        ),
        ({"files": {"cfg.json": {"format": "json", "data": {"a": "{gpu}"}}}}, "files", "unknown placeholder"),
    ],
)
def test_a_placeholder_inside_structured_text_is_refused_at_load(
    tmp_path: Path, changes: dict[str, object], field: str, message: str
) -> None:
    path = _write(tmp_path, "site-engine", **changes)
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert err.value.field.startswith(field)
    assert message in str(err.value)


def test_text_files_and_json_data_files_render(tmp_path: Path) -> None:
    files = {
        "words.txt": "port {port}\n",
        "cfg.json": {"format": "json", "data": {"dir": "{run_dir}/x", "n": 2}},
    }
    launch = load_profile(_write(tmp_path, "site-engine", files=files)).render(VALUES)
    assert launch.files["words.txt"] == "port 8123\n"
    assert json.loads(launch.files["cfg.json"]) == {"dir": "/var/tmp/run/x", "n": 2}


def test_a_containerized_profile_runs_its_image_with_the_tier_mounted_and_its_env_inside() -> None:
    """Issue 12: AMD and Ascend labs run the engine from a container (no runtime runs here: the command
    line kvgate hands the runtime is what is checked; the lifecycle around it is the host engine's)."""
    base = load_profile(PROFILE_DIR / "vllm-cpu-prefix.yaml")
    rocm = Container(
        image="rocm/vllm:latest", options=["--device=/dev/kfd", "--device=/dev/dri", "--ipc=host"]
    )
    profile = base.model_copy(
        update={"container": rocm, "launch": ["vllm", "serve", "{model}", "--port", "{port}"]}
    )
    where = Placement(run_dir="/scratch/run", model="/models/m", cache_dir="/scratch/cache", port=18000)
    service = EngineService(LocalExecutor(), profile, where, env={"HIP_VISIBLE_DEVICES": "0,1"})
    assert service.launch.container == (
        "docker",
        "run",
        "--rm",
        "--network",
        "host",
        "-v",
        "/models/m:/models/m:ro",
        "-v",
        "/scratch/run:/scratch/run",
        "-v",
        "/scratch/cache:/scratch/cache",
        "--device=/dev/kfd",
        "--device=/dev/dri",
        "--ipc=host",
    )
    env = [f"{k}={v}" for k, v in service.launch.env.items()]
    argv = service._in_container(list(service.launch.argv), env)
    image = argv.index("rocm/vllm:latest")
    assert argv[image + 1 :] == ["vllm", "serve", "/models/m", "--port", "18000"]
    assert "HIP_VISIBLE_DEVICES=0,1" in argv[:image]  # passed into the container with -e
    assert argv[argv.index("--name") + 1] == service.container_name
    assert argv[argv.index("-w") + 1] == service.launch.workdir


def test_a_launch_records_where_its_kv_cache_lived_and_how_large() -> None:
    """What G3's arms note says of each capacity arm's cache (kvgate.report.g3_notes.caches_note)."""
    shipped = load_profiles()
    assert kv_cache_said(shipped["llama-cpp-ram"]).startswith("no tier on the storage: ")
    assert "(LRU, 100 MB)" in kv_cache_said(shipped["llama-cpp-ram"])  # its RAM bound, as its profile says
    assert kv_cache_said(shipped["llama-cpp-disk-keep"]).startswith("a tier on the storage, 4.29 GB: ")


def test_a_profile_says_what_kvgate_needs_of_its_engine_or_is_refused_naming_the_field(
    tmp_path: Path,
) -> None:
    # issue 24: the package, tokenizer and tiny model were code keyed by an engine kind; now the profile's
    shipped = yaml.safe_load((PROFILE_DIR / "vllm-cpu-prefix.yaml").read_text())
    for field, said in (
        ("tokenize", "tokenize: required field is missing"),
        ("package", "(top level): package: the Python package the host imports, unless the engine runs in a "
         "container"),
    ):  # fmt: skip
        path = tmp_path / f"no-{field}.yaml"
        path.write_text(yaml.safe_dump({k: v for k, v in shipped.items() if k != field}))
        with pytest.raises(ConfigError) as err:
            load_profile(path)
        assert str(err.value) == f"{path}: {said}"
