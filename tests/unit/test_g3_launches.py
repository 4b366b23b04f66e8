"""Which engines G3 starts for a deployment (preflight starts the same), and what turns one off."""

from __future__ import annotations

from pathlib import Path

import yaml

from kvgate.configuration.gateconfig import load_config
from kvgate.orchestration.g3.launches import launches


def config(tmp_path: Path, **deployment: object) -> Path:
    inv = tmp_path / "inv.yaml"
    scratch, base = tmp_path / "scratch", tmp_path / "base"
    data = {
        "site": "launches",
        "scale": "smoke",
        "hosts": {"here": {"transport": "local", "roles": ["engine", "storage-client"]}},
        "volumes": {
            "scratch": {"path": str(scratch), "kind": "candidate", "scratch": True},
            "base": {"path": str(base), "kind": "baseline", "scratch": True},
        },
        "engines": {
            "tiny": {
                "tier_profile": "llama-cpp-disk",
                "recompute_profile": "llama-cpp-recompute",
                "volume": "scratch",
                "baseline_volume": "base",
                "instances": 2,
            }
            | deployment
        },
    }
    inv.write_text(yaml.safe_dump(data))
    return inv


def arms(inv: Path) -> list[str]:
    return [launch.arm for launch in launches(load_config(inv), "tiny")]


def test_the_capacity_figure_starts_its_arms_unless_the_inventory_turns_it_off(tmp_path: Path) -> None:
    # the volume arms' engine is the capacity arms' ssd-tier engine: started once
    assert arms(config(tmp_path)) == [
        "probe",
        "recompute",
        "dram-only",
        "dram-only#1",
        "ssd-tier",
        "ssd-tier#1",
    ]
    # R2's volume arms still run the ssd-tier profile (llama-cpp-disk-keep), the capacity arms do not
    assert arms(config(tmp_path, capacity_figure=False)) == ["probe", "recompute", "candidate-volume"]
