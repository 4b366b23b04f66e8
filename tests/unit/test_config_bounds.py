"""Values no lab has, and patterns no regex engine compiles, are refused on load naming the field.

Before: a regex in ``nvmeof.model``, ``gpus.firmware`` or a profile's ``weights_log`` was never
compiled (G1 or the engine start met it), a temperature of −1000 °C or a count past any machine
loaded, an empty tool name was accepted, a 400-digit integer or an infinite figure reached
``kvgate plan`` (exit 70 or a plan built on it), and a stored facts family that is a string or a
``rejudge --results`` naming a file ended in an internal error (exit 70).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvgate.base.criteria import Verdict
from kvgate.base.errors import ConfigError
from kvgate.cli.command_line import main
from kvgate.configuration.engine_profile import PROFILE_DIR, load_profile
from kvgate.configuration.inventory import load
from kvgate.record.manifest import write_manifest

DATA = Path(__file__).resolve().parents[1] / "data" / "runs" / "local-v2"
HUGE = int("9" * 400)


def inventory(tmp_path: Path, expect: dict[str, Any], **extra: Any) -> Path:
    data = {"site": "s", "hosts": {"h": {"transport": "local", "expect": expect}}} | extra
    (tmp_path / "inv.yaml").write_text(yaml.safe_dump(data))
    return tmp_path / "inv.yaml"


@pytest.mark.parametrize(
    ("expect", "field"),
    [
        ({"nvmeof": {"subsystems": 1, "model": "[unclosed"}}, "hosts.h.expect.nvmeof.model"),
        ({"nvmeof": {"subsystems": 1, "firmware": "(x"}}, "hosts.h.expect.nvmeof.firmware"),
        ({"gpus": {"count": 0, "firmware": "*x"}}, "hosts.h.expect.gpus.firmware"),
        ({"nvme": {"count": 1, "max_temperature_c": -1000}}, "hosts.h.expect.nvme.max_temperature_c"),
        ({"nvme": {"count": 10**9}}, "hosts.h.expect.nvme.count"),
        ({"cpu": {"cores": HUGE}}, "hosts.h.expect.cpu.cores"),
        ({"memory": {"total_gib": 1e300}}, "hosts.h.expect.memory.total_gib"),
        ({"nics": [{"name": "x", "speed_mbps": 10**12}]}, "hosts.h.expect.nics[0].speed_mbps"),
        ({"tools": {"": ">= 1"}}, "hosts.h.expect.tools"),
        ({"tools": {"fio; rm -rf /": ">= 1"}}, "hosts.h.expect.tools"),
    ],
)
def test_an_impossible_expectation_is_refused_naming_its_field(
    tmp_path: Path, expect: dict[str, Any], field: str
) -> None:
    with pytest.raises(ConfigError) as err:
        load(inventory(tmp_path, expect))
    assert err.value.field.startswith(field), err.value


def test_sane_values_still_load(tmp_path: Path) -> None:
    expect = {
        "nvme": {"count": 8, "max_temperature_c": 70},
        "tools": {"fio": ">= 3.28", "/usr/bin/x": ">= 1"},
    }
    assert load(inventory(tmp_path, expect | {"gpus": {"count": 0, "firmware": "^1\\.2"}})).inventory


def test_a_state_size_of_400_digits_is_refused(tmp_path: Path) -> None:
    dep = {"tier_profile": "a", "recompute_profile": "b", "volume": "v", "state_bytes_per_token": HUGE}
    vol = {"v": {"path": "/tmp/v", "kind": "candidate", "scratch": True}}
    with pytest.raises(ConfigError) as err:
        load(inventory(tmp_path, {}, volumes=vol, engines={"e": dep}))
    assert err.value.field == "engines.e.state_bytes_per_token", err.value


@pytest.mark.parametrize("pattern", ["took ([0-9.]+", "no group", "(a) took ([0-9.]+)"])
def test_an_engine_profiles_weights_log_is_compiled_with_one_group(tmp_path: Path, pattern: str) -> None:
    data = yaml.safe_load((PROFILE_DIR / "vllm-recompute.yaml").read_text()) | {"weights_log": pattern}
    (tmp_path / "vllm-recompute.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as err:
        load_profile(tmp_path / "vllm-recompute.yaml")
    assert err.value.field == "weights_log", err.value


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--prefill-tok-per-s", "inf"), ("--prefill-tok-per-s", "nan"), ("--documents", str(HUGE))],
)
def test_plan_refuses_a_figure_no_lab_has(flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["plan", "--inventory", "inventory/local.yaml", "--results", "/nonexistent", flag, value]) == 4
    )
    assert f"{flag} must be" in capsys.readouterr().err


@pytest.mark.parametrize("ceiling", [float("inf"), HUGE], ids=["inf", "400-digits"])
def test_plan_refuses_a_stored_g2_ceiling_that_is_not_finite(
    tmp_path: Path, ceiling: float, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_plan_inputs import G2_MEASURED, INVENTORY, VOLUME, measurement, stored_run

    from kvgate.configuration.inventory import load as load_inventory

    (tmp_path / "inv.yaml").write_text(INVENTORY)
    sha = load_inventory(tmp_path / "inv.yaml").sha256
    measured = G2_MEASURED | {"ceiling.read_bw_bytes_per_s": measurement(ceiling)}
    stored_run(tmp_path / "r", "g2", sha, Verdict.PASS, {f"g2/{VOLUME}/measurements.json": measured})
    assert main(["plan", "--inventory", str(tmp_path / "inv.yaml"), "--results", str(tmp_path / "r")]) == 4
    assert "is not a finite figure to plan on" in capsys.readouterr().err


def stored_g1(tmp_path: Path) -> Path:
    return shutil.copytree(DATA / "g1-20261205T042610Z", tmp_path / "runs" / "local" / "g1-x")


def test_rejudge_names_a_stored_facts_family_that_is_a_string(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = stored_g1(tmp_path)
    facts = json.loads((run / "facts/localhost.json").read_text())
    facts["families"]["cpu"] = "oops"
    (run / "facts/localhost.json").write_text(json.dumps(facts))
    write_manifest(run)  # sealed as a forger would: the family must still not crash kvgate
    argv = ["rejudge", str(run), "--inventory", str(DATA / "inv.yaml"), "--results", str(tmp_path / "o")]
    assert main([*argv, "--no-pdf"]) == 4
    assert "facts/localhost.json: families.cpu: expected an object" in capsys.readouterr().err


def test_rejudge_results_naming_a_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-file").write_text("")
    argv = ["rejudge", str(stored_g1(tmp_path)), "--inventory", str(DATA / "inv.yaml"), "--no-pdf"]
    assert main([*argv, "--results", str(tmp_path / "a-file")]) == 4
    assert "--results" in capsys.readouterr().err


WAIVERS = """
waivers:
  - rule: G1-NVEM-4
    reason: "a typo: the rule is G1-NVME-4, so this waives nothing"
    approver: J. Doe
"""


@pytest.mark.parametrize(("strict", "code"), [([], 0), (["--strict"], 4)])
def test_a_waiver_that_matches_no_check_is_named_and_fails_under_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], strict: list[str], code: int
) -> None:
    (tmp_path / "waivers.yaml").write_text(WAIVERS)
    argv = ["rejudge", str(stored_g1(tmp_path)), "--inventory", str(DATA / "inv.yaml"), "--no-pdf"]
    argv += ["--results", str(tmp_path / "o")]
    assert main([*argv, "--waivers", str(tmp_path / "waivers.yaml"), *strict]) == code
    assert "waiver rule G1-NVEM-4 matches no check of this run" in capsys.readouterr().err
    (report,) = (tmp_path / "o").glob("*/*/report.html")  # and the report the customer signs says so
    assert "no check of this run (a typo, or expired)" in report.read_text()


def test_bidi_and_c1_controls_reach_no_report_raw(tmp_path: Path) -> None:
    from kvgate.record import JudgementRecord
    from kvgate.record.store import RunStore
    from kvgate.report import render

    meta = {"inventory": {"path": "inv.yaml", "sha256": "ab" * 32}, "argv": ["kvgate"], "planned": ["h/x"]}
    store = RunStore.create(tmp_path, site="s", gate="g1", meta=meta)
    shown = "fio \u202egnp.exe\u202c ok \u2066x\u2069 \x85"
    store.record(JudgementRecord(id="h/x", host="h", check="x", verdict=Verdict.FAIL, condition=shown))
    store.finish("complete")
    render(store.path, pdf=False)
    for name in ("report.html", "junit.xml"):
        text = (store.path / name).read_text()
        assert not any(c in text for c in "\u202e\u202c\u2066\u2069\x85"), name
        assert "fio ⟨U+202E⟩gnp." in text, name


def edited(source: Path, tmp_path: Path, dotted: str, value: Any) -> Path:
    """A copy of a shipped profile with one field (``a.b.c``, ``a.0.b`` for a list) set to ``value``."""
    data = yaml.safe_load(source.read_text())
    *parents, leaf = dotted.split(".")
    node = data
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[int(leaf) if isinstance(node, list) else leaf] = value
    path = tmp_path / source.name
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    return path


WORKLOADS = Path(__file__).resolve().parents[2] / "workloads"


@pytest.mark.parametrize(
    ("gate", "dotted", "value"),
    [
        ("g3", "trials", 10**9),
        ("g3", "prompt_tokens", HUGE),
        ("g3", "request_timeout_s", 1e300),
        ("g3", "max_cv", 1e9),
        ("g3", "concurrency", [4, 0]),  # a level of no request in flight
        ("g3", "volumes.engine.vllm.env", {"X;touch /tmp/m;Y": "1"}),  # an environment name, as everywhere
        ("g3", "verdicts.0.threshold_fraction", 1e12),
        ("g4", "duration_s", 10**12),
        ("g4", "health.max_temperature_c", -1000),
        ("g4", "health.max_percentage_used_increase", 10**6),
        ("g4", "integrity.fio_bytes", HUGE),
        ("g4", "limits.max_failed_requests", 10**18),
        ("g4", "canary.logprobs", 10**6),
    ],
)
def test_an_impossible_gate_profile_value_is_refused_naming_file_and_field(
    tmp_path: Path, gate: str, dotted: str, value: Any
) -> None:
    from kvgate.configuration.gate_profiles import G3Profile, G4Profile
    from kvgate.configuration.gate_profiles.loader import read_gate_profile

    model = {"g3": G3Profile, "g4": G4Profile}[gate]
    path = edited(WORKLOADS / gate / "full.yaml", tmp_path, dotted, value)
    with pytest.raises(ConfigError) as err:
        read_gate_profile(path, model)
    assert err.value.path == str(path), err.value
    assert err.value.field.startswith(re.sub(r"\.(\d+)", r"[\1]", dotted)), err.value  # verdicts[0]…


@pytest.mark.parametrize(
    ("dotted", "value"),
    [("kv.layers", 10**9), ("kv_restore.requests", 10**9), ("checkpoint.snapshot_bytes", HUGE)],
)
def test_an_impossible_model_profile_value_is_refused(tmp_path: Path, dotted: str, value: Any) -> None:
    from kvgate.configuration.model_profiles import load_profile as load_model_profile

    path = edited(WORKLOADS / "models" / "smoke.yaml", tmp_path, dotted, value)
    with pytest.raises(ConfigError) as err:
        load_model_profile(path)
    assert err.value.field.startswith(dotted), err.value


@pytest.mark.parametrize(("dotted", "value"), [("repeats", 10**9), ("defaults.runtime_s", HUGE)])
def test_an_impossible_fio_profile_value_is_refused(tmp_path: Path, dotted: str, value: Any) -> None:
    from kvgate.configuration.fio_matrix import load_profile as load_fio_profile

    path = edited(WORKLOADS / "fio" / "smoke.yaml", tmp_path, dotted, value)
    with pytest.raises(ConfigError) as err:
        load_fio_profile(path)
    assert err.value.field.startswith(dotted), err.value


def test_the_shipped_profiles_are_within_the_bounds() -> None:
    from kvgate.configuration.fio_matrix import load_profile as load_fio_profile
    from kvgate.configuration.gate_profiles import G3Profile, G4Profile
    from kvgate.configuration.gate_profiles.loader import read_gate_profile
    from kvgate.configuration.model_profiles import load_profiles

    for gate, model in (("g3", G3Profile), ("g4", G4Profile)):
        for path in sorted((WORKLOADS / gate).glob("*.yaml")):
            read_gate_profile(path, model)
    assert load_profiles()
    for path in sorted((WORKLOADS / "fio").glob("*.yaml")):
        load_fio_profile(path)
