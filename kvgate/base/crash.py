"""A bug in kvgate: a short message on the screen, the traceback in a file to attach to a report.

An internal error has its own exit code (70), distinct from a gate's verdicts and
from a usage error, so CI never reads a crash as "gate failed".
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape


def write_traceback(text: str) -> Path:
    """Write a traceback to a new file of its own in the temporary directory (created O_EXCL)."""
    fd, name = tempfile.mkstemp(prefix="kvgate-internal-error-", suffix=".txt")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return Path(name)


def tell(console: Console, summary: str, report: Path) -> None:
    """The message a user sees instead of a traceback."""
    console.print(
        f"[bold red]internal error in kvgate:[/] {escape(summary)}\n"
        f"This is a bug in kvgate, not in the lab or the inventory. Please report it with the "
        f"traceback in {escape(str(report))}",
        highlight=False,
        soft_wrap=True,  # a path is copied from the screen: never broken across lines
    )


class InternalErrors:
    """A pytest plugin for gate runs: an INTERNALERROR's traceback goes to a file, not the screen."""

    def __init__(self) -> None:
        self.report: Path | None = None
        self.summary = ""

    def pytest_internalerror(self, excrepr: Any, excinfo: Any) -> bool:
        self.report = write_traceback(str(excrepr))
        self.summary = f"{excinfo.typename}: {excinfo.value}"
        return True  # handled: pytest prints nothing
