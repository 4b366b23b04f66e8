"""What each `kvgate` subcommand does; argument parsing lives in cli.py."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from rich.console import Console
from rich.markup import escape

from kvgate.cli import EXIT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE
from kvgate.gates import PREFLIGHT, gate_dir, require_previous
from kvgate.inventory import load
from kvgate.live import LiveView, checks_table, summary_table
from kvgate.store import RunStore, outcome


def dispatch(args: argparse.Namespace, console: Console) -> int:
    handlers = {
        "plan": plan,
        "run": run_gate, "report": report, "stop": stop, "inventory": inventory, "references": references,
        "preflight": preflight,
    }  # fmt: skip
    return handlers[args.command](args, console)


def pytest_args(args: argparse.Namespace) -> list[str]:
    argv = [str(gate_dir(args.gate)), "-o", "addopts=", "-p", "no:terminal", "-p", "no:cacheprovider"]
    argv += ["--inventory", args.inventory, "--run-dir", args.results]
    for opt in ("resume", "waivers", "force_gate_order"):
        if value := getattr(args, opt):
            argv += [f"--{opt.replace('_', '-')}", value]
    return argv + (["-k", args.keyword] if args.keyword else [])


def run_gate(args: argparse.Namespace, console: Console) -> int:
    """Validate the inventory, run the gate suite with a live view, render, summarize."""
    args.inventory = args.inventory or default_inventory(args.resume)
    loaded = load(args.inventory)  # a bad inventory stops here with its clear error
    if not (args.resume or args.force_gate_order):
        require_previous(Path(args.results), site=loaded.site, gate=args.gate, inventory_sha256=loaded.sha256)
    console.print(f"kvgate {args.gate} on site [bold]{loaded.site}[/] ({len(loaded.inventory.hosts)} hosts)")
    live = LiveView(console)
    code = pytest.main(pytest_args(args), plugins=[live])
    store = live.session.store if live.session else None
    if store is None:
        console.print("[red]the gate did not start (see the errors above)")
        return EXIT_USAGE if code == pytest.ExitCode.USAGE_ERROR else EXIT_INTERNAL
    return finish(store, console, no_pdf=args.no_pdf, interrupted=code == pytest.ExitCode.INTERRUPTED)


def preflight(args: argparse.Namespace, console: Console) -> int:
    """The preflight as a gate run of its own; then what will and will not be measurable, and why."""
    args.gate, args.resume, args.waivers, args.force_gate_order, args.keyword = (
        PREFLIGHT,
        None,
        None,
        None,
        None,
    )
    return run_gate(args, console)


def default_inventory(resume: str | None) -> str:
    """The inventory a resumed run was started with (as recorded in its run.json), else local.yaml."""
    if resume is None:
        return "inventory/local.yaml"
    return RunStore.open(Path(resume)).inventory_path()


def finish(store: RunStore, console: Console, *, no_pdf: bool, interrupted: bool = False) -> int:
    from kvgate.report import render

    paths = render(store.path, pdf=not no_pdf)
    console.print(checks_table(store) if store.meta()["gate"] == PREFLIGHT else summary_table(store))
    verdict, missing = outcome(store)
    console.print(
        f"gate verdict: [bold]{verdict}[/]" + (f" ({len(missing)} checks not evaluated)" if missing else "")
    )
    for label, path in (("HTML", paths.html), ("PDF", paths.pdf), ("JUnit", paths.junit)):
        if path is not None:
            console.print(f"{label:6} {path}")
    if missing:
        console.print(f"resume with: kvgate run {store.meta()['gate']} --resume {store.path}")
    return EXIT_INTERRUPTED if interrupted else EXIT[verdict]


def report(args: argparse.Namespace, console: Console) -> int:
    return finish(RunStore.open(Path(args.run_dir)), console, no_pdf=args.no_pdf)


def stop(args: argparse.Namespace, console: Console) -> int:
    from kvgate.g4.stop import stop_soak

    for key, what in stop_soak(Path(args.run_dir)).items():
        console.print(f"{key}: soak {what}")
    console.print(
        f"judge what ran (and remove the soak's work directories on the hosts) with: "
        f"kvgate run g4 --resume {args.run_dir}"
    )
    return 0


def inventory(args: argparse.Namespace, console: Console) -> int:
    if args.action == "check":
        loaded = load(args.file)
        inv = loaded.inventory
        console.print(
            f"{args.file}: valid — site {inv.site}, {len(inv.hosts)} hosts, {len(inv.volumes)} volumes"
        )
        return 0
    from kvgate.capture import capture

    text = capture(load(args.inventory), args.host)
    if args.output:
        Path(args.output).write_text(text)
        console.print(f"expectations of {args.host} written to {args.output}")
    else:
        print(text, end="")
    return 0


def references(_args: argparse.Namespace, console: Console) -> int:
    from kvgate.references import check_consistency, load_references

    refs = load_references()
    problems = check_consistency(refs)
    for p in problems:
        console.print(f"[yellow]disagreement:[/] {escape(str(p))}")
    console.print(f"{len(refs.entries)} references loaded; {len(problems)} disagreements")
    return 0


def plan(args: argparse.Namespace, _console: Console) -> int:
    """Print the tiering plan of every engine deployment (kvgate.plan); bad options are usage errors."""
    from kvgate.plan.cli import options, show

    loaded = load(args.inventory)
    show(Console(soft_wrap=True), loaded, Path(args.results), options(args))  # the plan is the output: stdout
    return 0
