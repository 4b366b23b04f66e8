"""The end of a gate run (`finish`: verdict, resume command) and the pytest settings a gate runs under."""

from __future__ import annotations

import io
import shlex
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from kvgate.base.config_file import repo_root
from kvgate.base.criteria import Verdict
from kvgate.cli.command_line import parser
from kvgate.cli.commands import GATE_INI, finish, pytest_args
from kvgate.cli.exit_codes import EXIT_INTERRUPTED
from kvgate.record import JudgementRecord
from kvgate.record.store import RunStore

PLANNED = ["node-a/cpu.cores", "node-a/memory.total", "node-b/cpu.cores"]


def run_with(root: Path, argv: list[str], verdicts: dict[str, Verdict]) -> RunStore:
    """A finished G1 run started by ``argv`` with one record per entry of ``verdicts``."""
    meta = {
        "inventory": {"path": "inventory/site.yaml", "sha256": "ab" * 32},
        "argv": argv,
        "planned": PLANNED,
    }
    store = RunStore.create(root / "lab results", site="lab", gate="g1", meta=meta)  # a space to quote
    for cid, verdict in verdicts.items():
        host, _, check = cid.partition("/")
        store.record(JudgementRecord(id=cid, host=host, check=check, verdict=verdict, condition="x"))
    store.finish("complete")
    return store


def finished(store: RunStore, *, interrupted: bool = False) -> tuple[int, str]:
    out = io.StringIO()
    code = finish(store, Console(file=out, width=80), no_pdf=True, interrupted=interrupted)
    return code, out.getvalue()


def resume_line(text: str) -> list[str]:
    (line,) = [ln for ln in text.splitlines() if ln.startswith("resume with: ")]
    return shlex.split(line.removeprefix("resume with: "))


ARGV = ["/opt/kvgate/.venv/bin/kvgate", "run", "g1", "--inventory", "inventory/site.yaml"]


def test_error_rows_print_the_exact_resume_command(tmp_path: Path) -> None:
    argv = [*ARGV, "--waivers=lab waivers.yaml", "-k", "cpu and not gpu", "--results", str(tmp_path)]
    verdicts = dict.fromkeys(PLANNED, Verdict.PASS) | {"node-b/cpu.cores": Verdict.ERROR}
    store = run_with(tmp_path, argv, verdicts)
    code, text = finished(store)
    assert code == 3
    assert "interrupted" not in text
    assert resume_line(text) == [
        *("kvgate", "run", "g1", "--resume", str(store.path)),
        *("--waivers", "lab waivers.yaml", "-k", "cpu and not gpu"),
    ]


def test_a_failed_run_with_an_error_row_still_offers_resume(tmp_path: Path) -> None:
    verdicts = {PLANNED[0]: Verdict.FAIL, PLANNED[1]: Verdict.ERROR, PLANNED[2]: Verdict.PASS}
    code, text = finished(run_with(tmp_path, ARGV, verdicts))
    assert code == 1
    assert resume_line(text)[:4] == ["kvgate", "run", "g1", "--resume"]


def test_an_interrupted_run_says_so_and_prints_the_resume_command(tmp_path: Path) -> None:
    store = run_with(tmp_path, ARGV, {PLANNED[0]: Verdict.PASS})
    code, text = finished(store, interrupted=True)
    assert code == EXIT_INTERRUPTED
    assert "gate interrupted (Ctrl-C or SIGTERM)" in text
    assert "gate verdict" not in text  # no verdict is claimed for a run that did not finish
    assert resume_line(text) == ["kvgate", "run", "g1", "--resume", str(store.path)]


def test_a_complete_run_offers_no_resume(tmp_path: Path) -> None:
    code, text = finished(run_with(tmp_path, ARGV, dict.fromkeys(PLANNED, Verdict.PASS)))
    assert code == 0
    assert "resume" not in text


def test_a_gate_run_does_not_inherit_the_test_suite_settings(tmp_path: Path) -> None:
    """pyproject's filterwarnings=error made a ResourceWarning at Ctrl-C exit 1; its timeout would end G4."""
    seen: dict[str, Any] = {}

    class Probe:
        def pytest_configure(self, config: pytest.Config) -> None:
            seen.update(inipath=config.inipath, rootpath=config.rootpath)
            seen.update(filterwarnings=config.getini("filterwarnings"), addopts=config.getini("addopts"))
            seen.update(
                timeout=config.getini("timeout"),
                plugin=config.pluginmanager.has_plugin("kvgate.orchestration.pytest_plugin"),
            )
            raise pytest.UsageError("probed")  # stop here (pytest.exit would run the Ctrl-C hook)

    argv = ["run", "g1", "--inventory", str(repo_root() / "inventory/local.yaml"), "--results", str(tmp_path)]
    pytest.main(pytest_args(parser().parse_args(argv)), plugins=[Probe()])
    assert seen["inipath"] == GATE_INI
    assert seen["rootpath"] == repo_root()
    assert (seen["filterwarnings"], seen["addopts"]) == ([], [])
    assert not seen["timeout"]  # pytest-timeout: no per-test limit
    assert seen["plugin"]
