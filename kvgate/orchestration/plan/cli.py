"""``kvgate plan``: the options checked, the plans printed (a table per deployment, then its inputs)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kvgate.base.errors import UsageError
from kvgate.configuration.gateconfig import GateConfig
from kvgate.orchestration.plan.deployments import Options, plan_inventory
from kvgate.orchestration.plan.render import CAPTION, COLUMNS, inputs, row, title, why_empty

MAX_PREFILL_TOK_PER_S = 1e9  # beyond any engine: a typo, and inf or nan is no rate
MAX_DOCUMENTS = 10**12  # distinct prefixes: beyond any tier


def options(args: argparse.Namespace) -> Options:
    """The declared options, each checked with the flag it came from."""
    rate = args.prefill_tok_per_s
    if rate is not None and not 0 < rate <= MAX_PREFILL_TOK_PER_S:
        raise UsageError(
            f"--prefill-tok-per-s must be > 0 and ≤ {MAX_PREFILL_TOK_PER_S:g} tokens/s, got {rate}"
        )
    for flag, value in (("--reuse", args.reuse), ("--dram-hit", args.dram_hit)):
        if not 0 <= value <= 1:
            raise UsageError(f"{flag} must be a share within [0, 1], got {value}")
    if args.documents is not None and not 1 <= args.documents <= MAX_DOCUMENTS:
        digits = str(args.documents)
        shown = digits if len(digits) <= 20 else f"{digits[:12]}… ({len(digits)} digits)"
        raise UsageError(f"--documents must be within [1, {MAX_DOCUMENTS:.0e}], got {shown}")
    return Options(args.prefill_tok_per_s, args.reuse, args.documents, args.dram_hit)


def show(console: Console, config: GateConfig, results: Path, opts: Options) -> None:
    """One table per deployment and engine host, its inputs and assumptions under it."""
    plans = plan_inventory(config, results, opts)
    if not plans:
        raise UsageError(
            f"{config.inventory.path}: the inventory declares no engine deployment (engines:) to plan"
        )
    for plan in plans:
        table = Table(*COLUMNS, title=escape(title(plan)), title_justify="left", caption=CAPTION)
        for p in plan.predictions:
            table.add_row(*row(p))
        console.print(table)
        if why := why_empty(plan):
            console.print(f"  [yellow]{escape(why)}[/]")
        for line in inputs(plan):
            console.print(f"  {escape(line)}", highlight=False)
