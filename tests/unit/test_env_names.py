"""An environment name cannot inject a command or an option, wherever it is declared.

Before, names were checked in ``engines.*.instances`` only: the same name in a G3 placement, an R9
model load or an engine profile reached ``sh -c`` unquoted (``X;touch M;Y``) or became an option to
``env`` (``--split-string=touch M``). Now every declared environment is one validated type at load,
and the sinks (the transport's ``env``, an engine's launch) quote each pair after ``env --`` anyway.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kvgate.base.errors import ConfigError
from kvgate.configuration.engine_profile import EngineProfile, load_profile
from kvgate.configuration.inventory import load
from kvgate.probes.engines import EngineService, Placement
from kvgate.probes.engines.errors import EngineCrashed
from kvgate.transport.local import LocalExecutor

PAYLOADS = ["X;touch {m};Y", "--split-string=touch {m}", "-u", "A=B", "A B", "$(touch {m})", ""]


def inventory(tmp_path: Path, name: str, where: str) -> Path:
    """An inventory whose environment at ``where`` declares ``name``."""
    env = {name: "1"}
    dep: dict[str, Any] = {"tier_profile": "llama-cpp-disk", "recompute_profile": "llama-cpp-recompute"}
    dep |= {"volume": "v", "capacity": {"env": env} if where == "capacity" else None}
    if where == "cold_read":
        dep["cold_read"] = {"serial": "a", "parallel": "b", "placement": {"env": env}}
    data: dict[str, Any] = {
        "site": "s",
        "hosts": {"h": {"transport": "local", "roles": ["engine"]}},
        "volumes": {
            "v": {"path": "/tmp/v", "kind": "candidate", "scratch": True},
            "n": {"path": "/tmp/n", "kind": "baseline", "scratch": True},
        },
        "engines": {"e": dep},
    }
    if where == "model_loads":
        copies = {"v": "/tmp/v/m", "n": "/tmp/n/m"}
        data["model_loads"] = {"m": {"hosts": ["h"], "profile": "vllm-ascend", "copies": copies, "env": env}}
    (tmp_path / "inv.yaml").write_text(yaml.safe_dump(data))
    return tmp_path / "inv.yaml"


FIELDS = {"capacity": "engines.e.capacity.env", "cold_read": "engines.e.cold_read.placement.env"}
FIELDS |= {"model_loads": "model_loads.m.env"}


@pytest.mark.parametrize("where", FIELDS)
@pytest.mark.parametrize("payload", PAYLOADS)
def test_an_environment_name_in_the_inventory_is_checked_wherever_it_is_declared(
    tmp_path: Path, where: str, payload: str
) -> None:
    with pytest.raises(ConfigError) as err:
        load(inventory(tmp_path, payload.format(m=tmp_path / "M"), where))
    assert err.value.field.startswith(FIELDS[where]), err.value
    assert "[A-Za-z_][A-Za-z0-9_]*" in err.value.expected, err.value


def test_a_valid_name_still_loads_in_every_place(tmp_path: Path) -> None:
    for where in FIELDS:
        assert load(inventory(tmp_path, "HIP_VISIBLE_DEVICES", where)).inventory.site == "s"


def profile_data(env: dict[str, str]) -> dict[str, Any]:
    """An engine that exits at once (no such script): its launch is all the test needs."""
    launch = ["{python}", "{run_dir}/no-such-engine.py"]
    return {
        "name": "quick", "kind": "vllm", "package": "json", "tokenize": {"path": "/tokenize"},
        "description": "d", "launch": launch, "env": env,
    }  # fmt: skip


@pytest.mark.parametrize("payload", PAYLOADS)
def test_an_environment_name_in_an_engine_profile_is_checked_on_load(tmp_path: Path, payload: str) -> None:
    data = profile_data({payload.format(m=tmp_path / "M"): "1"}) | {"ready": {"path": "/"}}
    (tmp_path / "quick.yaml").write_text(yaml.safe_dump(data | {"serves_concurrently": False}))
    with pytest.raises(ConfigError) as err:
        load_profile(tmp_path / "quick.yaml")
    assert err.value.field.startswith("env"), err.value


@pytest.mark.parametrize("payload", ["X;touch {m};Y", "$(touch {m})", "--split-string=touch {m}"])
def test_the_transport_quotes_an_environment_name_that_got_past_the_loader(
    tmp_path: Path, payload: str
) -> None:
    marker = tmp_path / "M"
    ex = LocalExecutor()
    ex.run("true", env={payload.format(m=marker): "1"}, timeout_s=30)
    ex.close()
    assert not marker.exists(), "the injected command ran"


def test_an_engine_launch_passes_its_environment_after_env_s_options_end(tmp_path: Path) -> None:
    marker = tmp_path / "M"
    data = profile_data({}) | {"ready": {"path": "/"}, "serves_concurrently": False, "ready_timeout_s": 20}
    profile = EngineProfile.model_validate(data)
    where = Placement(run_dir=str(tmp_path / "run"), model="/m", cache_dir=str(tmp_path / "c"))
    where = Placement(**{**where.__dict__, "python": sys.executable, "port": 27001})
    ex = LocalExecutor()  # the option form: env -S would run `touch M python -c …`
    eng = EngineService(ex, profile, where, env={f"--split-string=touch {marker} ": "x"})
    with pytest.raises(EngineCrashed):
        eng.start()
    ex.close()
    assert not marker.exists(), "the injected option ran a command"


def declared_env(path: Path) -> dict[str, str] | ConfigError:
    """The environment the inventory at ``path`` declares, or the error that refused it."""
    try:
        loaded = load(path).inventory
    except ConfigError as err:
        return err
    dep = loaded.engines["e"]
    if dep.capacity is not None:
        return dep.capacity.env
    return dep.cold_read.placement.env if dep.cold_read else loaded.model_loads["m"].env


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(name=st.text(max_size=12), where=st.sampled_from(sorted(FIELDS)))
def test_any_name_loads_only_as_a_variable_name(
    tmp_path_factory: pytest.TempPathFactory, name: str, where: str
) -> None:
    found = declared_env(inventory(tmp_path_factory.mktemp("inv"), name, where))
    if isinstance(found, ConfigError):
        assert found.field.startswith(FIELDS[where]), found
    else:
        assert [re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) is not None for k in found] == [True]
