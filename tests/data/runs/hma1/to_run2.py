"""How tests/data/runs/hma1's run (written by kvgate.run/1, 2026-12-05) was put in today's schema.

Run once from the repository root (``python tests/data/runs/hma1/to_run2.py``), then the run was
resealed. run.json: ``kvgate.run/2``, its G3 profile under ``configuration`` (it reads as today's
G3Profile), its rows kept as the sections it rendered (``g3_rows`` held cells, which no model reads).
checks.jsonl: a line with a trusted value (PASS or FAIL, or a waived FAIL) keeps it as the input
it was judged on; the others keep none (rejudge carries their verdict). Nothing measured changes.
Since 2026-12-07 its G3 profile has no ``tokenize`` map (each engine profile names its own tokenizer):
removed by hand from run.json, and the run resealed (kvgate.record.manifest.write_manifest).
"""

import json
from pathlib import Path
from typing import Any

from kvgate.base.criteria import Verdict
from kvgate.configuration.gateconfig import load_config
from kvgate.orchestration.gate_plans import plans
from kvgate.record.manifest import write_manifest

HERE = Path(__file__).parent
RUN = HERE / "g3-20261205T023051Z"


def run_json(meta: dict[str, Any]) -> dict[str, Any]:
    meta = dict(meta) | {"schema": "kvgate.run/2"}
    meta["configuration"] = {"gate_profile": meta.pop("g3_profile")}
    del meta["g3_rows"]
    return meta


def trusted(line: dict[str, Any]) -> bool:
    verdict = (line.get("waiver") or {}).get("was") or line["verdict"]
    return verdict in (Verdict.PASS.value, Verdict.FAIL.value) and line.get("measured") is not None


def with_inputs(line: dict[str, Any], keys: dict[str, tuple[str, str]]) -> dict[str, Any]:
    key, metric = keys.get(line["id"], ("", ""))
    if not (key and metric == line["metric"] and trusted(line)):
        return line
    m = {k: line[k] for k in ("metric", "unit", "evidence")} | {"value": line["measured"]}
    return line | {"inputs": {"measured": {key: m}, "detail": "", "said": [], "blocked": ""}}


def main() -> None:
    config = load_config(HERE / "inv.yaml")
    keys = {c.id: (c.key, c.criterion.metric) for plan in plans("g3") for c in plan(config)}
    meta = json.loads((RUN / "run.json").read_text())
    (RUN / "run.json").write_text(json.dumps(run_json(meta), indent=2, sort_keys=True) + "\n")
    lines = [json.loads(x) for x in (RUN / "checks.jsonl").read_text().splitlines() if x.strip()]
    text = "".join(json.dumps(with_inputs(x, keys), sort_keys=True) + "\n" for x in lines)
    (RUN / "checks.jsonl").write_text(text)
    write_manifest(RUN)


if __name__ == "__main__":
    main()
