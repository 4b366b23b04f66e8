"""Inventory validation: good files load; each malformed file gives a clear, located error."""

import sys
from pathlib import Path

import pytest

from kvgate.base.errors import ConfigError
from kvgate.configuration.gateconfig import load_config
from kvgate.configuration.inventory import load

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["local.yaml", "example-lab.yaml"])
def test_shipped_inventories_are_valid(name: str) -> None:
    loaded = load(REPO / "inventory" / name)
    assert loaded.inventory.hosts
    assert len(loaded.sha256) == 64


def test_group_expectations_merge_with_host_overrides() -> None:
    inv = load(REPO / "inventory" / "example-lab.yaml").inventory
    gpu2 = inv.expectations("gpu-2")
    assert gpu2.memory is not None
    assert gpu2.memory.total_gib == 1024
    assert gpu2.cpu is not None
    assert gpu2.cpu.cores == 192
    assert set(inv.volumes_of("gpu-1")) == {"fx100", "local-nvme", "nfs"}
    assert set(inv.volumes_of("npu-1")) == {"fx100", "nfs"}  # the local NVMe is the GPU hosts' own
    assert inv.volumes_of("control") == {}  # not a storage client


GOOD_HOST = "hosts:\n  h1:\n    address: 10.0.0.1\n"

MALFORMED = [
    ("no_site", GOOD_HOST, "site", "required field is missing"),
    ("bad_port", "site: s\nhosts:\n  h1:\n    port: 70000\n", "hosts.h1.port", "less than or equal to 65535"),
    ("typo_key", "site: s\nhosts:\n  h1:\n    adress: x\n", "hosts.h1.adress", "unknown field"),
    ("bad_role", "site: s\nhosts:\n  h1:\n    roles: [gpu]\n", "hosts.h1.roles[0]", "gpu-node"),
    (
        "bad_tool_constraint",
        "site: s\nhosts:\n  h1:\n    expect:\n      tools: {fio: '3.28'}\n",
        "hosts.h1.expect.tools",
        "'>= 3.28'",
    ),
    (
        "gpu_without_vendor",
        "site: s\nhosts:\n  h1:\n    expect:\n      gpus: {count: 8}\n",
        "hosts.h1.expect.gpus",
        "vendor is required",
    ),
    ("undefined_group", "site: s\nhosts:\n  h1:\n    groups: [gpus]\n", "(top level)", "group 'gpus'"),
    (
        "relative_volume",
        GOOD_HOST.replace("hosts", "site: s\nhosts")
        + "volumes:\n  v:\n    path: data\n    kind: candidate\n",
        "volumes.v.path",
        "not an absolute path",
    ),
    ("no_hosts", "site: s\nhosts: {}\n", "hosts", "at least 1 item"),
    ("yaml_syntax", "site: s\nhosts:\n  h1: [unclosed\n", "line", "not valid YAML"),
    ("not_a_mapping", "- just\n- a list\n", "", "expected a mapping at the top level"),
]


@pytest.mark.parametrize(("case", "text", "field", "expected"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_inventory_names_file_field_and_expectation(
    tmp_path: Path, case: str, text: str, field: str, expected: str
) -> None:
    path = tmp_path / f"{case}.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load(path)
    message = str(err.value)
    assert message.startswith(str(path)), message
    assert field in message, message
    assert expected in message, message
    assert "Traceback" not in message


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the file"):
        load(tmp_path / "nope.yaml")


def test_a_relative_engine_python_is_relative_to_the_inventory_and_keeps_the_venv_symlink(
    tmp_path: Path,
) -> None:
    venv_bin = tmp_path / ".venv-x" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(sys.executable)  # as `python -m venv` makes it
    (tmp_path / "inv").mkdir()
    inv = tmp_path / "inv" / "site.yaml"
    inv.write_text(
        "site: s\nhosts: {h: {transport: local, roles: [engine]}}\n"
        "volumes: {v: {path: /tmp/v, kind: candidate, scratch: true}}\n"
        "engines: {e: {tier_profile: vllm-cpu-prefix, recompute_profile: vllm-cpu-recompute, volume: v,"
        " python: ../.venv-x/bin/python}}\n"
    )
    assert load(inv).inventory.engines["e"].python == str(venv_bin / "python")


@pytest.mark.parametrize(
    ("engine", "field"),
    [
        ("tier_profile: vllm-lmcach, recompute_profile: vllm-recompute", "engines.e.tier_profile"),
        (
            "tier_profile: vllm-lmcache, recompute_profile: vllm-recompute,"
            " cold_read: {serial: vllm-lmcache-serial, parallel: vllm-lmcache}",
            "engines.e.cold_read.serial",
        ),
    ],
)
def test_an_engine_profile_that_does_not_exist_is_named_with_the_ones_that_do(
    tmp_path: Path, engine: str, field: str
) -> None:
    inv = tmp_path / "site.yaml"
    inv.write_text(
        "site: s\nhosts: {h: {roles: [engine]}}\n"
        "volumes: {v: {path: /tmp/v, kind: candidate, scratch: true}}\n"
        f"engines: {{e: {{{engine}, volume: v, model: /m, state_bytes_per_token: 1}}}}\n"
    )
    with pytest.raises(ConfigError) as err:
        load_config(inv)  # the inventory alone is valid: the names are checked against the profiles
    assert err.value.field == field
    assert "vllm-lmcache-serial-read" in err.value.expected  # the profiles there are, to pick from


def loadgen_inventory(path: Path, host: str, loadgen: str) -> Path:
    """One llama.cpp deployment on host ``h`` (a YAML flow mapping) with its load generator placed."""
    path.write_text(
        f"site: s\nhosts: {{h: {host}}}\nvolumes: {{v: {{path: /tmp/v, kind: candidate, scratch: true}}}}\n"
        "engines: {e: {tier_profile: llama-cpp-disk, recompute_profile: llama-cpp-recompute, volume: v,"
        f" loadgen: {loadgen}}}}}\n"
    )
    return path


@pytest.mark.parametrize(
    ("host", "loadgen", "expected"),
    [
        ("{address: 10.0.0.5, roles: [engine]}", "controller", "10.0.0.5"),
        ("{transport: local, roles: [engine]}", "controller", "127.0.0.1"),
        ("{address: 10.0.0.5, roles: [engine]}", "host", None),
    ],
)
def test_the_load_generator_runs_on_the_host_or_reaches_it_from_the_controller(
    tmp_path: Path, host: str, loadgen: str, expected: str | None
) -> None:
    inv = loadgen_inventory(tmp_path / "site.yaml", host, loadgen)
    assert load(inv).inventory.loadgen_address("e", "h") == expected


@pytest.mark.parametrize(
    ("host", "loadgen", "expected"),
    [
        ("{address: 10.0.0.5, proxy_jump: 'u@bastion:22', roles: [engine]}", "controller", "proxy_jump"),
        ("{address: 10.0.0.5, roles: [engine]}", "client", "'host' or 'controller'"),
    ],
)
def test_a_load_generator_the_controller_cannot_place_is_refused(
    tmp_path: Path, host: str, loadgen: str, expected: str
) -> None:
    inv = loadgen_inventory(tmp_path / "site.yaml", host, loadgen)
    with pytest.raises(ConfigError) as err:
        load(inv)
    assert "engines.e.loadgen" in str(err.value) or "engines" in err.value.field, str(err.value)
    assert expected in str(err.value)


def volume_inventory(path: Path, volume: str) -> Path:
    path.write_text(f"site: s\nhosts: {{h: {{roles: [storage-client]}}}}\nvolumes: {{v: {volume}}}\n")
    return path


@pytest.mark.parametrize(
    ("volume_path", "why"),
    [
        ("/", "a whole system directory"),
        ("/etc", "under /etc"),
        ("/etc/kvgate", "under /etc"),
        ("/boot", "under /boot"),
        ("/proc/1", "under /proc"),
        ("/sys", "under /sys"),
        ("/dev/nvme0n1", "name a raw device under `device:`"),
        ("/usr/local/scratch", "under /usr"),
        ("/bin", "under /bin"),
        ("/lib64", "under /lib64"),
        ("/var", "a whole system directory"),
        ("/root", "a whole system directory"),
        ("/home", "a whole system directory"),
        ("/home/", "a whole system directory"),
        ("/mnt/fx100/../../etc", "'..' component"),
        ("/mnt/./fx100", "'.' or '..' component"),
        ("/mnt//fx100", "'//'"),
        ("relative/dir", "not an absolute path"),
    ],
)
def test_a_scratch_volume_where_writes_would_do_harm_is_refused_at_check(
    tmp_path: Path, volume_path: str, why: str
) -> None:
    inv = volume_inventory(
        tmp_path / "inv.yaml", f"{{path: {volume_path!r}, kind: candidate, scratch: true}}"
    )
    with pytest.raises(ConfigError) as err:
        load(inv)
    assert err.value.field == "volumes.v.path", err.value
    assert why in err.value.expected, err.value


@pytest.mark.parametrize(
    ("volume_path", "scratch", "loaded"),
    [
        ("/mnt/fx100/kvgate/", True, "/mnt/fx100/kvgate"),  # a trailing slash is normalised
        ("/var/tmp/kvgate-scratch", True, "/var/tmp/kvgate-scratch"),
        ("/home/qa/scratch", True, "/home/qa/scratch"),
        ("/dev/shm/kvgate", True, "/dev/shm/kvgate"),
        ("/", False, "/"),  # measured, never written
    ],
)
def test_a_scratch_volume_of_its_own_loads(
    tmp_path: Path, volume_path: str, scratch: bool, loaded: str
) -> None:
    kind = "candidate" if scratch else "baseline"
    inv = volume_inventory(
        tmp_path / "inv.yaml", f"{{path: {volume_path!r}, kind: {kind}, scratch: {scratch}}}"
    )
    assert load(inv).inventory.volumes["v"].path == loaded


@pytest.mark.parametrize("name", ["-u", "--unset=PATH", "A B", "A=B", "1GPU", "HIP;rm", ""])
def test_an_engine_environment_name_that_is_not_a_variable_name_is_refused(tmp_path: Path, name: str) -> None:
    inv = loadgen_inventory(tmp_path / "site.yaml", "{address: 10.0.0.5, roles: [engine]}", "host")
    inv.write_text(inv.read_text().replace("loadgen: host", f"loadgen: host, instances: [{{{name!r}: x}}]"))
    with pytest.raises(ConfigError) as err:
        load(inv)
    assert err.value.field.startswith("engines.e.instances[0]"), err.value
    assert "[A-Za-z_][A-Za-z0-9_]*" in err.value.expected, err.value


def test_an_engine_environment_value_may_hold_anything_a_shell_would_need_quoted(tmp_path: Path) -> None:
    inv = loadgen_inventory(tmp_path / "site.yaml", "{address: 10.0.0.5, roles: [engine]}", "host")
    inv.write_text(
        inv.read_text().replace(
            "loadgen: host", "loadgen: host, instances: [{HIP_VISIBLE_DEVICES: '0,1; -x'}]"
        )
    )
    assert load(inv).inventory.engines["e"].instances == ({"HIP_VISIBLE_DEVICES": "0,1; -x"},)
