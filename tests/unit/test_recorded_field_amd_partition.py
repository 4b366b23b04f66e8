"""amd-smi's renamed partition key (issue 14, h-rec3; tests/data/recorded/PROVENANCE.md).

Current amd-smi writes `amd-smi static --json`'s partition object as
`{"accelerator_partition": …, "memory_partition": …, "partition_id": …}`
(ROCm/rocm-systems `projects/amdsmi/amdsmi_cli/amdsmi_commands.py` at
009cc490d1459f46c7ce35dd3aed89e2a4ca115b); amd-smi up to ROCm 6.3 wrote `compute_partition`
(ROCm/amdsmi at 0ceca28f4139dced5e9b5739a3f393780d7add48). AMD's own rocprofiler-compute reads
`COMPUTE_PARTITION` and falls back to `ACCELERATOR_PARTITION` (ROCm/rocm-systems
`projects/rocprofiler-compute/src/utils/specs.py` at 1b1610fc2b2ab32af71e6e04e4d4a6a4ae597992).
No public recording of a partitioned GPU in the new form was found, so the recorded MI210
(ROCm 6.4+ `gpu_data` form, printed without a partition object) gets the object that source
writes, here in the test code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_facts_accel import host_g1

from kvgate.base.criteria import Verdict
from kvgate.probes.facts.amd import parse_amd_static

MI210 = (
    Path(__file__).parents[1]
    / "data"
    / "recorded"
    / "amd-smi"
    / "dme-static-gpu-data-mi210-inbox-driver.json"
)


def mi210_with(partition: dict[str, Any]) -> str:
    doc = json.loads(MI210.read_text())
    doc["gpu_data"][0]["partition"] = partition
    return json.dumps(doc, indent=4)


def test_accelerator_partition_is_read_as_the_compute_partition() -> None:
    """main read only `compute_partition` and reported None (INVALID) for every current amd-smi."""
    text = mi210_with({"accelerator_partition": "SPX", "memory_partition": "NPS1", "partition_id": 0})
    (gpu,) = parse_amd_static(text)["devices"]
    assert (gpu["compute_partition"], gpu["memory_partition"], gpu["partition_id"]) == ("SPX", "NPS1", 0)


def test_g1_judges_the_accelerator_partition_against_the_bom() -> None:
    """CPX where SPX was ordered is a FAIL, not an INVALID 'not reported'."""
    cpx = {"accelerator_partition": "CPX", "memory_partition": "NPS1", "partition_id": 0}
    answers = {
        "amd-smi static --json": (0, mi210_with(cpx), ""),
        "amd-smi topology --json": (0, "[]", ""),
    }
    bom = {
        "vendor": "amd",
        "count": 1,
        "model": "MI210",
        "compute_partition": "SPX",
        "memory_partition": "NPS1",
    }
    results = host_g1(answers, gpus=bom)
    assert results["gpu.compute_partition"][0] is Verdict.FAIL
    assert results["gpu.memory_partition"][0] is Verdict.PASS


def test_accelerator_partition_not_available_stays_unknown() -> None:
    """amd-smi prints N/A where the GPU cannot be partitioned (an MI210): unknown, never a mode."""
    text = mi210_with({"accelerator_partition": "N/A", "memory_partition": "N/A", "partition_id": 0})
    (gpu,) = parse_amd_static(text)["devices"]
    assert (gpu["compute_partition"], gpu["memory_partition"]) == (None, None)
