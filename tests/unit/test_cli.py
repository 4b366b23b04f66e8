"""The CLI's own exit codes: a bug in kvgate is exit 70 with its traceback in a file, never on the screen."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from rich.console import Console

from kvgate.base.crash import InternalErrors
from kvgate.cli import command_line as cli
from kvgate.cli import commands


def test_an_unexpected_exception_is_exit_70_with_the_traceback_in_a_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def dispatch(args: argparse.Namespace, console: Console) -> int:
        raise RuntimeError("boom: a bug in a subcommand")

    monkeypatch.setattr(commands, "dispatch", dispatch)  # a bug, where a real one would be
    assert cli.main(["references"]) == cli.EXIT_INTERNAL
    said = " ".join(capsys.readouterr().err.split())
    assert "internal error in kvgate: RuntimeError: boom: a bug in a subcommand" in said
    assert "Traceback" not in said
    found = re.search(r"traceback in (\S+\.txt)", said)
    assert found, said
    written = Path(found[1]).read_text()
    assert "Traceback (most recent call last)" in written
    assert "RuntimeError: boom" in written
    Path(found[1]).unlink()


class _Broken:
    """A plugin with a bug in a collection hook: pytest reports it as an INTERNALERROR."""

    def pytest_collection_modifyitems(self) -> None:
        raise RuntimeError("bug in a hook")


def test_a_pytest_internal_error_in_a_gate_run_goes_to_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    crashes = InternalErrors()
    argv = ["-c", str(tmp_path / "pytest.ini"), "-p", "no:cacheprovider", "-q", str(tmp_path)]
    assert pytest.main(argv, plugins=[crashes, _Broken()]) == pytest.ExitCode.INTERNAL_ERROR
    assert "INTERNALERROR" not in capsys.readouterr().err
    assert crashes.report is not None
    assert "RuntimeError: bug in a hook" in crashes.report.read_text()
    assert crashes.summary == "RuntimeError: bug in a hook"
    crashes.report.unlink()
