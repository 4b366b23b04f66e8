"""A gate's rows in run.json are typed (kvgate.record.gate_rows): an edited row names its field.

Before, ``g2_rows``, ``g3_rows``, ``g4_rows``, ``engines``, ``g4_jobs``, ``manifest``,
``tool_versions`` and ``waivers`` were ``dict[str, Any]``: an unknown or mistyped field loaded,
and the report left it out or showed it as it was. Each case here loaded on main without an error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_g3_tables import inventory as g3_inventory
from test_g3_tables import result as g3_result
from test_report_tables import soak_window, soaked, volume

from kvgate.base.errors import StoreError
from kvgate.configuration.gateconfig import in_memory
from kvgate.orchestration.g2.report_rows import row
from kvgate.orchestration.g3.plan import plan as g3_plan
from kvgate.orchestration.g3.report_rows import rows as g3_rows
from kvgate.orchestration.g4.report_rows import rows as g4_rows
from kvgate.record.store import RunStore
from kvgate.report.model import load_run

JOB = {"host": "gpu-1", "workload": "soak", "run_id": "r1", "state_dir": "/s", "agent": "/a.pyz", "pid": 7}
G4_JOB = {"job": JOB | {"start_ticks": 1}, "work_dir": "/w", "started_at": "t", "engines": [], "spec": {}}


def run_with_rows(root: Path) -> Path:
    """A run holding every kind of row, written as the gates write them."""
    r = g3_result()
    soak, checks = soaked([soak_window(i) for i in range(4)])
    waiver = {
        "rule": "G3-R2",
        "check": None,
        "hosts": ["*"],
        "reason": "a slow lab",
        "approver": "qa",
        "expires": None,
    }
    environment = {"manifest": {"h": {"host": "h", "cpu_cores": 64}}, "tool_versions": {"h": {"fio": "3.36"}}}
    store = RunStore.create(
        root, site="lab-a", gate="g3", meta={"planned": [], "waivers": [waiver]} | environment
    )
    store.merge_meta(g2_rows={"gpu-1/scratch": row(volume())})
    store.merge_meta(g3_rows={"h/tiny": g3_rows(r, g3_plan(in_memory(g3_inventory())))})
    store.merge_meta(engines={"h/tiny": r.engines}, g4_jobs={"gpu-1/tiny": G4_JOB})
    store.merge_meta(g4_rows={"gpu-1/tiny": g4_rows(soak, checks)})
    store.finish("complete")
    return store.path


def _set(doc: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


EDITS = [  # (field path, value written by hand, what the error says)
    (("g2_rows", "gpu-1/scratch", "knee", "parallelism"), "8", "Input should be a valid integer"),
    (("g2_rows", "gpu-1/scratch", "sweeps"), [], "unknown field"),
    (("g3_rows", "h/tiny", "figures", "arms", "recompute", "ttft_p50"), 1.0, "unknown field"),
    (("g3_rows", "h/tiny", "deployment", "serves_concurrently"), "yes", "Input should be a valid boolean"),
    (("g3_rows", "h/tiny", "verdicts", 0, "reference"), "R2", "Input should be a valid dictionary"),
    (("g4_rows", "gpu-1/tiny", "soak", "ended"), 3, "Input should be a valid string"),
    (("engines", "h/tiny", "ssd-restore", "ready_s"), "fast", "Input should be a valid number"),
    (("g4_jobs", "gpu-1/tiny", "job", "pid"), "7", "Input should be a valid integer"),
    (("manifest", "h", "cpu_cores"), "64", "Input should be a valid integer"),
    (("tool_versions", "h", "fio"), 3.36, "Input should be a valid string"),
    (("waivers", 0, "aprover"), "qa", "unknown field"),
]


@pytest.mark.parametrize(("path", "value", "why"), EDITS, ids=[".".join(map(str, e[0])) for e in EDITS])
def test_an_edited_row_field_is_refused_naming_the_file_and_the_field(
    tmp_path: Path, path: tuple[Any, ...], value: Any, why: str
) -> None:
    run = run_with_rows(tmp_path)
    load_run(run)  # as written, it loads
    meta = json.loads((run / "run.json").read_text())
    _set(meta, path, value)
    (run / "run.json").write_text(json.dumps(meta))
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    with pytest.raises(StoreError, match=re.escape(f"{run / 'run.json'}: {field}: {why}")):
        RunStore.open(run)
