"""configuration.gateconfig: the inventory and the files it selects, loaded once and cross-validated."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kvgate.base.config_file import repo_root
from kvgate.base.errors import ConfigError
from kvgate.configuration.engine_profile import engine_profile
from kvgate.configuration.fio_matrix import fio_matrix, fio_matrix_path, load_profile
from kvgate.configuration.gate_profiles import profile_path
from kvgate.configuration.gate_profiles.g3 import load_g3_profile
from kvgate.configuration.gateconfig import check_bindings, check_g2_jobs, load_config, model_profiles
from kvgate.configuration.model_profiles import model_profile
from kvgate.configuration.references import load_references
from kvgate.orchestration.g2.plan import plan
from kvgate.record import RunRecord

LAB = repo_root() / "inventory" / "example-lab.yaml"
LOCAL = repo_root() / "inventory" / "local.yaml"


def test_the_shipped_inventories_load_with_every_file_they_select() -> None:
    lab = load_config(LAB)
    assert {"vllm-lmcache", "vllm-recompute", "vllm-ascend"} <= set(lab.engines)
    assert lab.fio.name == "baseline"
    assert lab.g3.name == lab.g4.name == "full"
    assert {"qwen2.5-32b", "deepseek-r1-distill-qwen-32b"} <= set(lab.models)


def test_references_and_profiles_are_read_once_per_process() -> None:
    assert load_references() is load_references()  # ten call sites, one load
    assert engine_profile("vllm-lmcache") is engine_profile("vllm-lmcache")
    assert load_g3_profile("smoke") is load_g3_profile("smoke")
    assert fio_matrix("smoke") is fio_matrix("smoke")
    assert model_profile("smoke") is model_profile("smoke")
    assert load_config(LOCAL).references is load_references()


def renamed_job(tmp_path: Path, old: str, new: str) -> Path:
    data = yaml.safe_load(fio_matrix_path("smoke").read_text())
    data["jobs"][new] = data["jobs"].pop(old)
    path = tmp_path / "smoke.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_fio_job_g2_judges_that_was_renamed_is_refused_naming_file_and_job(tmp_path: Path) -> None:
    path = renamed_job(tmp_path, "seqread-1m", "seq-read-1m")
    with pytest.raises(ConfigError) as err:
        check_g2_jobs(load_profile(path), path)
    assert (err.value.path, err.value.field) == (str(path), "jobs.seqread-1m")
    assert "rw: read" in err.value.expected
    assert "no such job" in err.value.expected


def test_a_fio_job_g2_judges_must_do_the_io_its_criterion_reads(tmp_path: Path) -> None:
    data = yaml.safe_load(fio_matrix_path("smoke").read_text())
    data["jobs"]["randread-4k"]["rw"] = "randwrite"
    path = tmp_path / "smoke.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"rw: randread.*rw: randwrite"):
        check_g2_jobs(load_profile(path), path)


def test_the_shipped_matrices_hold_every_job_g2_plans() -> None:
    checks = plan(load_config(LOCAL))
    assert {"seqread-1m", "seqwrite-1m", "randread-4k"} <= {c.key.split(".")[0] for c in checks}


def test_a_g3_verdict_bound_to_a_missing_reference_is_refused_at_load() -> None:
    g3 = load_g3_profile("smoke")
    broken = g3.model_copy(update={"verdicts": (g3.verdicts[0].model_copy(update={"reference": "R2-typo"}),)})
    path = profile_path("g3", "smoke")
    with pytest.raises(ConfigError) as err:
        check_bindings(broken, load_references(), path)
    assert (err.value.path, err.value.field) == (str(path), "verdicts[0].reference")
    assert "R2-ttft-p50-tp8" in err.value.expected  # the ids there are, to pick from


def test_a_g3_storage_model_that_does_not_exist_is_refused_naming_the_g3_profile() -> None:
    g3 = load_g3_profile("full")
    assert g3.storage is not None
    broken = g3.model_copy(update={"storage": g3.storage.model_copy(update={"checkpoint": "qwen2.5-23b"})})
    with pytest.raises(ConfigError) as err:
        model_profiles("full", broken)
    assert (err.value.path, err.value.field) == (str(profile_path("g3", "full")), "storage.checkpoint")
    assert "qwen2.5-32b" in err.value.expected


def test_a_model_load_naming_a_missing_engine_profile_is_refused(tmp_path: Path) -> None:
    data = yaml.safe_load(LAB.read_text())
    name = next(iter(data["model_loads"]))
    data["model_loads"][name]["profile"] = "vllm-ascnd"
    path = tmp_path / "lab.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert (err.value.path, err.value.field) == (str(path), f"model_loads.{name}.profile")
    assert "vllm-ascend" in err.value.expected


def test_an_inventory_picks_its_g4_profile_by_name_and_a_missing_one_is_refused(tmp_path: Path) -> None:
    data = yaml.safe_load(LOCAL.read_text())
    path = tmp_path / "local.yaml"
    path.write_text(yaml.safe_dump(data | {"g4_profile": "lab"}))
    lab = load_config(path)
    assert (lab.g3.name, lab.g4.name) == ("smoke", "lab")  # only G4's: the other gates keep the scale's
    assert lab.files()["g4"] == profile_path("g4", "lab")
    path.write_text(yaml.safe_dump(data | {"g4_profile": "labb"}))
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert (err.value.path, err.value.field) == (str(path), "g4_profile")
    assert "no G4 profile 'labb'" in err.value.expected
    assert "lab, smoke" in err.value.expected


def test_the_run_record_keeps_every_configuration_file_by_hash() -> None:
    recorded = load_config(LOCAL).recorded()
    files = recorded["files"]
    assert {"inventory", "references", "fio", "g3", "g4", "engines/llama-cpp-disk"} <= set(files)
    assert all(len(f["sha256"]) == 64 for f in files.values())
    record = RunRecord.model_validate(
        {"schema": "kvgate.run/2", "gate": "g1", "site": "s", "status": "running", "configuration": recorded}
    )
    assert record.configuration.files["fio"].path.endswith("workloads/fio/smoke.yaml")
