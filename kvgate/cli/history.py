"""``kvgate history`` and ``kvgate compare``: the run history under a results root, and two runs side by side.

Both print their table on stdout (it is the output) and what they did or refused on stderr.
``compare`` reads a run's figures only after its seal verified (kvgate.report.indexing), refuses
two runs of another gate, site or inventory, and exits 6 when a figure regressed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kvgate.base.criteria import Verdict
from kvgate.base.errors import UsageError
from kvgate.cli.exit_codes import EXIT, EXIT_REGRESSION


def history(args: argparse.Namespace, console: Console) -> int:
    """List the runs indexed under a results root, oldest first, after bringing the index in step."""
    from kvgate.report import History, rebuild, runs_table, sync

    store = History(Path(args.results))
    for note in rebuild(store) if args.rebuild else sync(store):
        console.print(escape(note), highlight=False, soft_wrap=True)
    Console(width=200).print(runs_table(store.runs(site=args.site, gate=args.gate)))
    return 0


def compare(args: argparse.Namespace, console: Console) -> int:
    """Every figure of two sealed runs of one series side by side; exit 6 when one regressed."""
    from kvgate.report import (
        UnverifiedRun,
        compare_figures,
        compare_table,
        frame,
        not_comparable,
        regressions,
        sealed_entry,
    )

    try:
        a, b = (sealed_entry(Path(p)) for p in (args.run_a, args.run_b))
    except UnverifiedRun as exc:
        console.print(f"[bold red]refused:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return EXIT[Verdict.INVALID]
    if why := not_comparable(a, b):
        raise UsageError(f"{why}: compare two runs of one gate on one site with one inventory")
    diff = compare_figures(frame(a), frame(b))
    Console(width=200).print(compare_table(diff, a.run_id, b.run_id))
    if regressed := len(regressions(diff)):
        console.print(
            f"[bold red]{regressed} figure(s) regressed[/] from {escape(a.run_id)} to {escape(b.run_id)}",
            highlight=False,
            soft_wrap=True,
        )
        return EXIT_REGRESSION
    return 0
