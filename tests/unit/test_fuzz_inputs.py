"""Fuzz the files people write and the run directories kvgate reads back.

The contract, exactly: a generated file either loads, or raises ConfigError naming the
file (a run directory: StoreError naming its file); never another exception, never a
hang. Examples start from the shipped files and mutate them two ways: in the data
(a value replaced by a hostile one, a key dropped or added) and in the bytes
(truncated, bytes inserted, a line repeated, an alias bomb, deep nesting). Derandomized,
so CI sees the same examples every run.
"""

from __future__ import annotations

import copy
import io
import json
import math
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from kvgate.base.config_file import repo_root
from kvgate.base.criteria import Criterion, Measurement, Verdict, judge
from kvgate.base.errors import ConfigError, StoreError
from kvgate.cli.live import summary_table
from kvgate.cli.rejudge import stored_facts
from kvgate.configuration.engine_profile import load_profile as load_engine_profile
from kvgate.configuration.fio_matrix import load_profile as load_fio_matrix
from kvgate.configuration.gate_profiles.g3 import read_g3_profile
from kvgate.configuration.gate_profiles.g4 import read_g4_profile
from kvgate.configuration.inventory import load
from kvgate.configuration.model_profiles import load_profile as load_model_profile
from kvgate.configuration.references import load_references
from kvgate.configuration.waivers import load_waivers
from kvgate.record import JudgementRecord
from kvgate.record.store import RunStore, outcome
from kvgate.report.html import render_html
from kvgate.report.junit import render_junit
from kvgate.report.model import load_run

REPO = repo_root()
SECONDS_PER_EXAMPLE = 10  # a few ms each unloaded; a hang is what this bounds


# KVGATE_FUZZ_SCALE=20 hunts longer, with fresh random examples each run; CI keeps 1 (derandomized)
SCALE = float(os.environ.get("KVGATE_FUZZ_SCALE", "1"))


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=int(examples * SCALE),
        derandomize=SCALE == 1,
        database=None,
        deadline=None,  # timed below instead: a loaded CI machine must not make it flaky
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# ---- hostile values ----------------------------------------------------------------------------

SPECIAL_TEXT = [
    "",
    " ",
    "-u",
    "--help",
    "/",
    "/etc",
    "/etc/passwd",
    "/dev/sda",
    "/mnt/../etc",
    "/mnt//x",
    "/mnt/./x",
    "relative",
    "(",
    "[",
    "*",
    "a{2,1}",
    "inf",
    "-inf",
    "nan",
    "1e999",
    "2027-02-30",
    "0000-00-00",
    "\x00",
    "\n",
    "\r\nx=1",
    "[/x]",
    "[bold]",
    "user@host:99999",
    "u@",
    "host:0",
    "$(id)",
    "`id`",
    "${HOME}",
    "{x}",
    "..",
    ".",
    "//",
    "~",
    "é",
    "\u202e",
    "\ud7ff",
    "x" * 300,
    "h" * 101,
    "A=B",
    "-oX=y",
    # issue 23, second round: injection through environment names, bidi text, regexes that do not compile
    "X;touch /tmp/kvgate-fuzz-marker;Y",
    "--split-string=touch /tmp/kvgate-fuzz-marker",
    "\u2066x\u2069",
    "\x85",
    "(a)(b)",
    "9" * 400,
]
SPECIAL_BYTES = [
    b"\x00",
    b"\xff",
    b"\xc3",
    b"\t",
    b": ",
    b"- ",
    b"&a ",
    b"*a ",
    b"*nope ",
    b"{{",
    b"]]",
    b"!!python/object/apply:os.system ['id'] ",
    b"!!timestamp 2027-02-30 ",
    b"<<: ",
    b"? ",
    b"\n  - ",
    b"--- \n",
    b"%YAML 9.9\n",
    b"\xef\xbb\xbf",
    b"'",
    b'"',
    b"\\",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([10**400, -(10**400), 2**63, -1000]),  # past any float, any machine, absolute zero
    st.floats(),  # NaN and ±inf included
    st.text(max_size=20),
    st.sampled_from(SPECIAL_TEXT),
    st.dates(min_value=date(1, 1, 1)),
)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([10**400, -(10**400)]),
    st.floats(),
    st.text(max_size=20),
    st.sampled_from(SPECIAL_TEXT),
)


def values(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keys = st.one_of(st.text(max_size=8), st.sampled_from(["name", "path", "hosts", "roles", "id", "0"]))
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
        max_leaves=8,
    )


# ---- mutations -----------------------------------------------------------------------------------


def node_paths(data: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a data tree a value sits (keys of mappings, indexes of lists)."""
    yield prefix
    children = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, child in children:
        yield from node_paths(child, (*prefix, key))


@st.composite
def mutated_data(draw: st.DrawFn, base: Any, leaves: st.SearchStrategy[Any]) -> Any:
    """``base`` with one to three values replaced, dropped or added."""
    data = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(node_paths(data))))
        if not path:
            continue
        *parent_path, last = path
        parent = data
        for key in parent_path:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "replace", "drop", "add"]))
        if action == "replace":  # mostly a scalar, so the file gets past the structure to the fields
            parent[last] = draw(st.one_of(leaves, leaves, values(leaves)))
        elif action == "drop":
            del parent[last]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(SPECIAL_TEXT[:12]))] = draw(values(leaves))
    return data


def alias_bomb(text: bytes) -> bytes:
    """Anchors expanding 10^9-fold, and the last line's value replaced by the bomb."""
    lines = [b"a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]".encode() for i in range(1, 9)]
    body = text.rstrip(b"\n").rsplit(b"\n", 1)
    head = body[0] + b"\n" if len(body) == 2 else b""
    last = body[-1].partition(b":")[0] + b": *a8"
    return b"\n".join(lines) + b"\n" + head + last + b"\n"


@st.composite
def mutated_bytes(draw: st.DrawFn, text: bytes) -> bytes:
    """``text`` truncated, with bytes inserted, a line repeated, an alias bomb or deep nesting."""
    kind = draw(st.sampled_from(["truncate", "insert", "insert", "repeat-line", "alias-bomb", "nest"]))
    at = draw(st.integers(0, len(text)))
    if kind == "truncate":
        return text[:at]
    if kind == "insert":
        piece = draw(st.one_of(st.sampled_from(SPECIAL_BYTES), st.binary(min_size=1, max_size=6)))
        return text[:at] + piece + text[at:]
    if kind == "repeat-line":
        lines = text.split(b"\n")
        i = draw(st.integers(0, len(lines) - 1))
        return b"\n".join([*lines[: i + 1], lines[i], *lines[i + 1 :]])
    if kind == "alias-bomb":
        return alias_bomb(text)
    depth = draw(st.integers(30, 3000))
    return text[:at] + b"[" * depth + b"]" * depth + text[at:]


def yaml_files(base_path: Path) -> st.SearchStrategy[bytes]:
    """Mutations of one shipped YAML file, at the data level, the byte level, or both."""
    text = base_path.read_bytes()
    base = yaml.safe_load(text)
    dumped = mutated_data(base, scalars).map(lambda d: yaml.safe_dump(d, allow_unicode=True).encode())
    return st.one_of(dumped, mutated_bytes(text), dumped.flatmap(mutated_bytes))


# ---- the contract ----------------------------------------------------------------------------------


def loads_or_refuses(loader: Callable[[Path], Any], name: str, content: bytes) -> Any:
    """Write ``content`` as ``name`` in a fresh directory and load it: the result, or None if refused."""
    with tempfile.TemporaryDirectory(prefix="kvgate-fuzz-") as tmp:
        path = Path(tmp) / name
        path.write_bytes(content)
        result, refusal, started = None, None, time.monotonic()
        try:
            result = loader(path)
        except ConfigError as exc:  # anything else fails the test, as it is
            refusal = exc
        assert time.monotonic() - started < SECONDS_PER_EXAMPLE
        assert refusal is None or str(refusal).startswith(str(path)), refusal
        return result


def all_finite(data: Any) -> bool:
    if isinstance(data, float):
        return math.isfinite(data)
    if isinstance(data, dict):
        return all(all_finite(v) for v in data.values())
    return all(all_finite(v) for v in data) if isinstance(data, list | tuple) else True


@pytest.fixture(scope="module")
def waivers_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("base") / "waivers.yaml"
    waiver = {
        "rule": "G1-NVME-4",
        "hosts": ["gpu-*"],
        "reason": "firmware update scheduled",
        "approver": "J. Doe <jdoe@example.com>",
        "expires": date(2027, 1, 31),
    }
    path.write_text(yaml.safe_dump({"waivers": [waiver, {"check": "gpu-1/cpu.model", **waiver}]}))
    return path


ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def environments(data: Any) -> Iterator[dict[str, Any]]:
    """Every mapping found under an ``env`` or ``instances`` key of loaded data."""
    children = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, child in children:
        if key == "env" and isinstance(child, dict):
            yield child
        elif key == "instances" and isinstance(child, list | tuple):
            yield from (c for c in child if isinstance(c, dict))
        yield from environments(child)


def safe_to_run(data: Any) -> bool:
    """What loaded may reach a shell: every environment name a variable name, no number past a float."""
    names_ok = all(ENV_NAME.fullmatch(name) for env in environments(data) for name in env)
    return names_ok and all_finite(data)


@fuzz(160)
@given(content=yaml_files(REPO / "inventory" / "example-lab.yaml"))
def test_fuzzed_inventories_load_or_name_the_file(content: bytes) -> None:
    loaded = loads_or_refuses(load, "site.yaml", content)
    if loaded is not None:
        assert safe_to_run(loaded.inventory.model_dump())


@fuzz(60)
@given(content=yaml_files(REPO / "inventory" / "local.yaml"))
def test_fuzzed_local_inventories_load_or_name_the_file(content: bytes) -> None:
    loaded = loads_or_refuses(load, "local.yaml", content)  # its engines: instances, placements, env
    if loaded is not None:
        assert safe_to_run(loaded.inventory.model_dump())


@fuzz(80)
@given(data=st.data())
def test_fuzzed_waivers_load_or_name_the_file(waivers_base: Path, data: st.DataObject) -> None:
    loads_or_refuses(load_waivers, "waivers.yaml", data.draw(yaml_files(waivers_base)))


@fuzz(30)
@given(content=yaml_files(REPO / "gates" / "references.yaml"))
def test_fuzzed_references_load_or_name_the_file(content: bytes) -> None:
    loads_or_refuses(load_references, "references.yaml", content)


WORKLOADS: list[tuple[Callable[[Path], Any], str]] = [
    (load_model_profile, "workloads/models/qwen2.5-32b.yaml"),
    (read_g3_profile, "workloads/g3/smoke.yaml"),
    (read_g4_profile, "workloads/g4/full.yaml"),
    (load_fio_matrix, "workloads/fio/baseline.yaml"),
    (load_engine_profile, "workloads/engines/vllm-lmcache.yaml"),
]


@pytest.mark.parametrize(("loader", "shipped"), WORKLOADS, ids=[Path(w[1]).parent.name for w in WORKLOADS])
def test_fuzzed_workload_files_load_or_name_the_file(loader: Callable[[Path], Any], shipped: str) -> None:
    @fuzz(40)
    @given(content=yaml_files(REPO / shipped))
    def check(content: bytes) -> None:
        loaded = loads_or_refuses(loader, Path(shipped).name, content)  # the file name: profiles check theirs
        if loaded is not None and hasattr(loaded, "model_dump"):
            assert safe_to_run(loaded.model_dump())

    check()


# ---- run directories -------------------------------------------------------------------------------

RUN_FILES = ("run.json", "checks.jsonl", "facts/here.json", "artifacts/index.jsonl")


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished G2-like run written by kvgate's own store: checks, facts, artifacts, sections."""
    meta = {
        "inventory": {"path": "inv.yaml", "sha256": "ab"},
        "planned": ["here/a", "here/b", "here/c"],
        "hosts": {"here": {"roles": ["storage-client"]}},
        "forced": [{"gate": "g2", "reason": "r"}],
    }
    store = RunStore.create(tmp_path_factory.mktemp("runs"), site="s", gate="g2", meta=meta)
    j = judge(
        Criterion("G2-FIO-1", "read_bw_gb_per_s", ">=", 5.0, unit="GB/s", tolerance=0.05),
        Measurement("read_bw_gb_per_s", 6.2, "GB/s", ("artifacts/here/fio.json",)),
    )
    store.record(JudgementRecord.from_judgement("here", "a", j))
    store.record(
        JudgementRecord(id="here/b", host="here", check="b", verdict=Verdict.ERROR, condition="down")
    )
    store.artifact("here", "fio.json", '{"jobs": []}', command="fio")
    family = {"facts": {"model": "EPYC"}, "missing_tools": [], "errors": {}}
    store.save_facts("here", {"host": "here", "families": {"cpu": family, "memory": family}})
    table = {"columns": ["host", "GB/s"], "rows": [["here", 6.2]], "note": "n"}
    chart = {"svg": '<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>'}
    store.update_meta(
        sections=[
            {"title": "t", "template": "table.html", "data": table},
            {"title": "c", "template": "chart.html", "data": chart},
        ]
    )
    store.finish("incomplete")
    return store.path


def json_text(data: Any, lines: bool) -> bytes:
    if lines:
        return b"".join(json.dumps(rec).encode() + b"\n" for rec in data)
    return json.dumps(data).encode()


@st.composite
def mutated_run_file(draw: st.DrawFn, run: Path) -> tuple[str, bytes]:
    name = draw(st.sampled_from(RUN_FILES))
    text = (run / name).read_bytes()
    if draw(st.booleans()):
        return name, draw(mutated_bytes(text))
    lines = name.endswith(".jsonl")
    base = [json.loads(x) for x in text.splitlines()] if lines else json.loads(text)
    return name, json_text(draw(mutated_data(base, json_scalars)), lines)


def read_back(run: Path) -> None:
    """What `kvgate report` and `--resume` read and print, in their order."""
    store = RunStore.open(run)
    store.check_files()
    store.inventory_path()
    outcome(store)
    store.finished_ids()
    stored_facts(store)  # what rejudge judges G1 on
    view = load_run(run)
    render_html(view, rendered_at="now")
    render_junit(view)
    Console(file=io.StringIO()).print(summary_table(store))  # rich markup in a name must not break it


@fuzz(120)
@given(data=st.data())
def test_fuzzed_run_directories_read_back_or_name_the_file(base_run: Path, data: st.DataObject) -> None:
    edits = data.draw(st.lists(mutated_run_file(base_run), min_size=1, max_size=2))
    with tempfile.TemporaryDirectory(prefix="kvgate-fuzz-run-") as tmp:
        run = Path(tmp) / base_run.name
        shutil.copytree(base_run, run)
        for name, content in edits:
            (run / name).write_bytes(content)
        refusal, started = None, time.monotonic()
        try:
            read_back(run)
        except StoreError as exc:  # anything else fails the test, as it is
            refusal = exc
        assert time.monotonic() - started < SECONDS_PER_EXAMPLE
        assert refusal is None or str(refusal).startswith(str(run)), refusal


# ---- what kvgate plan reads from a stored G2 run -----------------------------------------------------

G2_FIGURES = {
    f"ceiling.{k}": {"value": v, "unit": "", "invalid_reason": None, "evidence": []}
    for k, v in {"read_bw_bytes_per_s": 9e9, "best_read_bw_bytes_per_s": 9.6e9, "bs_bytes": 4 << 20}.items()
} | {
    f"ceiling.{k}": {"value": v, "unit": "", "invalid_reason": None, "evidence": []}
    for k, v in {"numjobs": 8, "iodepth": 16}.items()
}


@fuzz(60)
@given(data=st.data())
def test_fuzzed_g2_figures_plan_or_name_the_run(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    from kvgate.orchestration.plan.inputs import g2_storage

    hit = data.draw(st.lists(st.sampled_from(sorted(G2_FIGURES)), min_size=1, max_size=2, unique=True))
    measured = copy.deepcopy(G2_FIGURES)
    for name in hit:  # a figure's value, where a hand edit or a forger puts what it likes
        measured[name]["value"] = data.draw(json_scalars)
    measured = data.draw(st.sampled_from([measured, data.draw(mutated_data(measured, json_scalars))]))
    store = RunStore.create(tmp_path_factory.mktemp("g2"), site="s", gate="g2", meta={"planned": []})
    store.artifact("h", "g2/v/measurements.json", json.dumps(measured))
    figures, refusal = None, None
    try:
        figures = g2_storage(store, "h", "v")
    except StoreError as exc:  # anything else fails the test, as it is
        refusal = exc
    assert refusal is None or str(refusal).startswith(f"G2 {store.path}"), refusal
    assert figures is None or all_finite([figures.ceiling.value or 0.0, figures.best.value or 0.0])
