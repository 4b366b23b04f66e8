"""The rich live view of a gate run: one progress bar per host, then a summary table."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kvgate.base.criteria import SEVERITY
from kvgate.orchestration.session import GateSession
from kvgate.record import RunStore, host_outcomes

STYLE = {"PASS": "green", "FAIL": "bold red", "INVALID": "dark_orange", "ERROR": "bold magenta"}


class LiveView:
    """A pytest plugin object the CLI registers in place of pytest's terminal output."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress = Progress(
            TextColumn("[bold]{task.fields[host]:<16}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=console,
        )
        self.tasks: dict[str, Any] = {}
        self.session: GateSession | None = None
        self.errors: list[str] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # imported here: pytest must import its plugin first to rewrite its asserts
        from kvgate.orchestration.pytest_plugin import SESSION, check_id

        self.session = session.config.stash[SESSION]
        self.session.listener = self.on_event
        per_host = Counter(check_id(i).partition("/")[0] for i in session.items if check_id(i))
        for host, n in sorted(per_host.items()):
            self.tasks[host] = self.progress.add_task("waiting", total=n, host=host)
        self.progress.start()

    def on_event(self, host: str, event: str) -> None:
        if host in self.tasks:
            self.progress.update(self.tasks[host], description=event)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        host = report.nodeid.partition("[")[2].partition("/")[0]
        if report.when == "teardown" and host in self.tasks:  # every test has exactly one teardown
            self.progress.advance(self.tasks[host])

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.errors.append(f"collection of {report.nodeid} failed:\n{report.longreprtext}")

    def pytest_sessionfinish(self) -> None:
        self.progress.stop()
        for err in self.errors:
            self.console.print(f"[red]{err}")


def title(store: RunStore) -> str:
    record = store.run_record()
    return f"{record.gate} — {record.site}"


def summary_table(store: RunStore) -> Table:
    """Per host: counts per verdict and the host's verdict in the gate's words (the gate line follows)."""
    table = Table(title=title(store), pad_edge=False, collapse_padding=True)
    table.add_column("host", no_wrap=True)  # whole at 80 columns beside "NO REFERENCE JUDGED"
    for v in SEVERITY:
        table.add_column(str(v), justify="right")
    table.add_column("not eval.", justify="right")
    table.add_column("verdict", no_wrap=True)
    record, checks = store.run_record(), store.checks()
    missing = [c for c in record.planned if c not in checks]  # an early Ctrl-C: most have no verdict
    for host, said in sorted(host_outcomes(record, checks.values(), missing).items()):
        verdicts = [c.verdict for c in checks.values() if c.host == host]
        counts = Counter(verdicts + [None] * sum(m.split("/", 1)[0] == host for m in missing))
        cells = [str(counts[v] or "") for v in (*SEVERITY, None)]
        table.add_row(host, *cells, f"[{STYLE.get(said.verdict, 'white')}]{said.label}")
    return table


def checks_table(store: RunStore) -> Table:
    """Every check with its verdict and condition, worst first: what can be measured, and why not."""
    table = Table(title=f"{title(store)}: what can be measured", expand=True)
    table.add_column("host", no_wrap=True)
    table.add_column("check", overflow="fold", ratio=2)
    table.add_column("verdict", no_wrap=True)
    table.add_column("why", overflow="fold", ratio=3)  # wide enough that a number is not cut at 80 columns
    checks = sorted(store.checks().values(), key=lambda c: (SEVERITY.index(c.verdict), c.id))
    for c in checks:
        table.add_row(*(escape(str(v)) for v in (c.host, c.check, c.verdict, c.condition)))
    return table
