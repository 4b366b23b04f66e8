"""Every command kvgate prints is one kvgate accepts: each is run through the real argument parser.

Before, a preflight with an ERROR row printed ``kvgate run preflight --resume RUN``, which the
parser refuses (preflight is not a gate of ``run``), and a run of a gate kvgate does not know
printed the same kind of command; a run.json naming gate ``g9`` was re-judged as a preflight.
"""

from __future__ import annotations

import ast
import io
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from kvgate.base.criteria import Verdict
from kvgate.base.errors import UsageError
from kvgate.cli.command_line import main, parser
from kvgate.cli.commands import finish
from kvgate.record import GATES, PREFLIGHT, JudgementRecord
from kvgate.record.manifest import write_manifest
from kvgate.record.store import RunStore

PACKAGE = Path(__file__).resolve().parents[2] / "kvgate"
RUNS = Path(__file__).resolve().parents[1] / "data" / "runs" / "hma1"
# a command as a message shows it: in backticks, or after "with:" / "then:" up to the line's end
PRINTED = re.compile(r"`(kvgate [^`]+)`|(?:with|then): (kvgate [^\n`]+)")


def strings_printed_by(tree: ast.Module) -> list[str]:
    """The string literals of a module but its docstrings; an f-string is one, its holes read ``RUN``."""
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef) and n.body
        if isinstance(n.body[0], ast.Expr)
    }
    docstrings |= {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) else "RUN" for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            out.append(node.value)
    return out


def printed_commands() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for text in strings_printed_by(ast.parse(path.read_text())):
            found += [a or b for a, b in PRINTED.findall(text)]
    return found


def accepted(command: str) -> bool:
    words = shlex.split(command)
    assert words[0] == "kvgate", command
    try:
        parser().parse_args(words[1:])
    except UsageError:
        return False
    return True


def test_the_source_has_hints_to_check() -> None:
    assert "kvgate run g4 --resume RUN" in printed_commands()


@pytest.mark.parametrize("command", sorted(set(printed_commands())))
def test_every_command_written_in_a_message_is_accepted(command: str) -> None:
    assert accepted(command), command


def a_run_with_an_error(root: Path, gate: str) -> RunStore:
    meta = {"inventory": {"path": "inventory/site.yaml", "sha256": "ab" * 32}, "argv": ["kvgate"]}
    store = RunStore.create(root, site="lab", gate=gate, meta=meta | {"planned": ["h/x"]})
    store.record(JudgementRecord(id="h/x", host="h", check="x", verdict=Verdict.ERROR, condition="x"))
    store.finish("complete")
    return store


def hints_after(store: RunStore) -> list[str]:
    out = io.StringIO()
    finish(store, Console(file=out, width=400), no_pdf=True)
    return [line.partition(": ")[2] for line in out.getvalue().splitlines() if " with: kvgate " in line]


@pytest.mark.parametrize("gate", [*GATES, PREFLIGHT])
def test_the_command_printed_after_an_error_row_is_accepted(tmp_path: Path, gate: str) -> None:
    (hint,) = hints_after(a_run_with_an_error(tmp_path / "results", gate))
    assert accepted(hint), hint
    assert hint.startswith("kvgate preflight --inventory" if gate == PREFLIGHT else f"kvgate run {gate}")


def test_a_run_of_a_gate_kvgate_does_not_know_gets_no_command(tmp_path: Path) -> None:
    assert hints_after(a_run_with_an_error(tmp_path / "results", "g9")) == []


def test_a_run_of_gate_g9_is_not_rejudged_as_a_preflight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = shutil.copytree(RUNS / "g3-20261205T023051Z", tmp_path / "runs" / "hma1" / "g3-x")
    record = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps(record | {"gate": "g9"}))
    write_manifest(run)  # sealed as the forger would
    argv = ["rejudge", str(run), "--inventory", str(RUNS / "inv.yaml"), "--results", str(tmp_path / "o")]
    assert main([*argv, "--no-pdf"]) == 4
    assert f"{run}/run.json: gate 'g9' is not one kvgate knows" in capsys.readouterr().err.replace("\n", "")
