"""What each `kvgate` subcommand does; argument parsing lives in cli.py."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from rich.console import Console
from rich.markup import escape

from kvgate.cli import EXIT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE
from kvgate.cli_args import check_keyword, check_output_file, check_writable_dir, write_output_file
from kvgate.crash import InternalErrors, tell
from kvgate.gates import gate_dir, require_previous
from kvgate.inventory import load
from kvgate.live import LiveView, summary_table
from kvgate.store import RunStore, outcome
from kvgate.waivers import load_waivers


def dispatch(args: argparse.Namespace, console: Console) -> int:
    handlers = {
        "run": run_gate, "report": report, "stop": stop, "inventory": inventory, "references": references
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
    check_run_args(args)
    args.inventory = args.inventory or default_inventory(args.resume)
    loaded = load(args.inventory)  # a bad inventory stops here with its clear error
    if not (args.resume or args.force_gate_order):
        require_previous(Path(args.results), site=loaded.site, gate=args.gate, inventory_sha256=loaded.sha256)
    console.print(f"kvgate {args.gate} on site [bold]{loaded.site}[/] ({len(loaded.inventory.hosts)} hosts)")
    live, crashes = LiveView(console), InternalErrors()
    code = pytest.main(pytest_args(args), plugins=[live, crashes])
    if crashes.report is not None:
        tell(console, crashes.summary, crashes.report)
        return EXIT_INTERNAL
    store = live.session.store if live.session else None
    if store is None:
        console.print("[red]the gate did not start (see the errors above)")
        return EXIT_USAGE if code == pytest.ExitCode.USAGE_ERROR else EXIT_INTERNAL
    return finish(store, console, no_pdf=args.no_pdf, interrupted=code == pytest.ExitCode.INTERRUPTED)


def check_run_args(args: argparse.Namespace) -> None:
    """Everything `kvgate run` was given that can be checked before the gate starts (exit 4 if wrong)."""
    check_keyword(args.keyword)
    check_writable_dir("--results", Path(args.results))
    load_waivers(args.waivers)
    if args.resume:
        store = RunStore.open(Path(args.resume))
        store.check_files()
        store.inventory_path()  # the resume compares the inventory with the run's
        check_writable_dir("--resume", store.path)


def default_inventory(resume: str | None) -> str:
    """The inventory a resumed run was started with (as recorded in its run.json), else local.yaml."""
    if resume is None:
        return "inventory/local.yaml"
    return RunStore.open(Path(resume)).inventory_path()


def finish(store: RunStore, console: Console, *, no_pdf: bool, interrupted: bool = False) -> int:
    from kvgate.report import render

    paths = render(store.path, pdf=not no_pdf)
    console.print(summary_table(store))
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
    store = RunStore.open(Path(args.run_dir))
    store.check_files()  # an edited or truncated file is named here, not as a crash mid-render
    return finish(store, console, no_pdf=args.no_pdf)


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
        counts = f"{len(inv.hosts)} hosts, {len(inv.volumes)} volumes"
        console.print(f"{escape(args.file)}: valid — site {inv.site}, {counts}")
        return 0
    from kvgate.capture import capture

    if args.output:
        check_output_file("-o", Path(args.output))  # before reaching the host
    text = capture(load(args.inventory), args.host)
    if args.output:
        write_output_file("-o", Path(args.output), text)
        console.print(f"expectations of {escape(args.host)} written to {escape(args.output)}")
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
