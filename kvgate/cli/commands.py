"""What each `kvgate` subcommand does; argument parsing lives in command_line.py."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import pytest
from rich.console import Console
from rich.markup import escape

from kvgate.base.config_file import repo_root
from kvgate.base.crash import InternalErrors, tell
from kvgate.base.criteria import Verdict
from kvgate.cli.args import (
    check_input_file,
    check_keyword,
    check_output_file,
    check_results_root,
    check_writable_dir,
    write_output_file,
)
from kvgate.cli.exit_codes import EXIT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_REGRESSION, EXIT_USAGE
from kvgate.cli.history import compare, history
from kvgate.cli.live import LiveView, checks_table, summary_table
from kvgate.configuration.gateconfig import load_config
from kvgate.configuration.waivers import Waivers, load_waivers
from kvgate.record import (
    GATES,
    PREFLIGHT,
    RunStore,
    check_seal,
    gate_dir,
    outcome,
    require_previous,
    sign_manifest,
    verify_manifest,
)

GATE_INI = Path(__file__).parents[1] / "orchestration" / "gate_pytest.ini"


def dispatch(args: argparse.Namespace, console: Console) -> int:
    handlers = {
        "plan": plan,
        "run": run_gate,
        "report": report,
        "verify-report": verify_report,
        "stop": stop,
        "inventory": inventory,
        "references": references,
        "preflight": preflight,
        "sign": sign,
        "history": history,
        "compare": compare,
        "rejudge": rejudge,
    }
    return handlers[args.command](args, console)


def pytest_args(args: argparse.Namespace) -> list[str]:
    """The gate suite under the gate-run settings (GATE_INI), never kvgate's own test-suite settings."""
    argv = [str(gate_dir(args.gate)), "-c", str(GATE_INI), "--rootdir", str(repo_root())]
    argv += ["-p", "kvgate.orchestration.pytest_plugin", "-p", "no:terminal", "-p", "no:cacheprovider"]
    argv += ["--inventory", args.inventory, "--run-dir", args.results]
    for opt in ("resume", "waivers", "force_gate_order"):
        if value := getattr(args, opt):
            argv += [f"--{opt.replace('_', '-')}", value]
    return argv + (["-k", args.keyword] if args.keyword else [])


def run_gate(args: argparse.Namespace, console: Console) -> int:
    """Validate the inventory, run the gate suite with a live view, render, summarize."""
    check_run_args(args)
    args.inventory = args.inventory or default_inventory(args.resume)
    loaded = load_config(args.inventory).inventory  # a bad configuration stops here with its clear error
    if not (args.resume or args.force_gate_order):
        require_previous(Path(args.results), site=loaded.site, gate=args.gate, inventory_sha256=loaded.sha256)
    if args.gate == "g3":  # G3 bounds its restores by the latest usable G2 run: a modified one stops it here
        from kvgate.orchestration.plan import latest_passed

        root = Path(args.resume).parent.parent if args.resume else Path(args.results)
        latest_passed(root, loaded.site, "g2", loaded.sha256)
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
    interrupted, regressed = code == pytest.ExitCode.INTERRUPTED, list[str]()
    status = finish(store, console, no_pdf=args.no_pdf, interrupted=interrupted, regressions=regressed)
    if unused_waivers(store, console) and args.strict and not interrupted:
        return status or EXIT_USAGE
    if status == 0 and getattr(args, "fail_on_regression", False) and regressed:
        console.print(
            f"[bold red]{len(regressed)} figure(s) regressed[/] against the previous comparable run"
        )
        return EXIT_REGRESSION
    return status


def preflight(args: argparse.Namespace, console: Console) -> int:
    """The preflight as a gate run of its own; then what will and will not be measurable, and why."""
    for unused in ("resume", "waivers", "force_gate_order", "keyword"):
        setattr(args, unused, None)
    args.strict = False
    args.gate = PREFLIGHT
    return run_gate(args, console)


def check_run_args(args: argparse.Namespace) -> None:
    """Everything `kvgate run` was given that can be checked before the gate starts (exit 4 if wrong)."""
    check_keyword(args.keyword)
    check_writable_dir("--results", Path(args.results))
    load_waivers(args.waivers)
    if args.resume:
        store = RunStore.open(Path(args.resume))
        store.check_files()  # exit 4 naming a file that does not read, line and field
        check_seal(store.path, "--resume")  # exit 2: resuming would seal an edit anew
        store.inventory_path()  # the resume compares the inventory with the run's
        check_writable_dir("--resume", store.path)


def default_inventory(resume: str | None) -> str:
    """The inventory a resumed run was started with (as recorded in its run.json), else local.yaml."""
    if resume is None:
        return "inventory/local.yaml"
    return RunStore.open(Path(resume)).inventory_path()


def finish(
    store: RunStore,
    console: Console,
    *,
    no_pdf: bool,
    interrupted: bool = False,
    allowed_signers: Path | None = None,
    regressions: list[str] | None = None,
) -> int:
    from kvgate.report import render

    try:  # an interrupted run gets its HTML and JUnit now, its PDF from `kvgate report` (issue 27: 9 s)
        paths = render(store.path, pdf=not (no_pdf or interrupted), allowed_signers=allowed_signers)
    except KeyboardInterrupt:
        if not interrupted:
            raise
        console.print(f"report not rendered (interrupted again): kvgate report {escape(str(store.path))}")
        console.print(f"resume with: {escape(resume_command(store))}", highlight=False, soft_wrap=True)
        return EXIT_INTERRUPTED
    if regressions is not None:
        regressions[:] = paths.regressions
    record = verify_manifest(store.path, allowed_signers=allowed_signers)
    console.print(checks_table(store) if store.run_record().gate == PREFLIGHT else summary_table(store))
    verdict, missing = outcome(store)
    not_evaluated = f" ({len(missing)} checks not evaluated)" if missing else ""
    if interrupted:
        console.print(f"gate [bold yellow]interrupted[/] (Ctrl-C or SIGTERM){not_evaluated}")
    else:
        console.print(f"gate verdict: [bold]{escape(verdict.text)}[/]{not_evaluated}")
    for label, path in (("HTML", paths.html), ("PDF", paths.pdf), ("JUnit", paths.junit)):
        if path is not None:
            console.print(f"{label:6} {path}")
    for note in paths.history_notes:  # history rows dropped or runs not indexed (kvgate.report.indexing)
        console.print(f"history: {escape(note)}", highlight=False, soft_wrap=True)
    errors = [c for c, rec in store.checks().items() if rec.verdict == Verdict.ERROR]
    if (interrupted or missing or errors) and (then := next_command(store)) is not None:
        console.print(f"{then[0]}: {escape(then[1])}", highlight=False, soft_wrap=True)
    console.print(f"run record: {escape(record.summary())}", style=None if record.intact else "bold red")
    if interrupted:
        return EXIT_INTERRUPTED
    if record.status == "modified after the run" or record.signature_problem:
        return max(EXIT[verdict.verdict], EXIT[Verdict.INVALID])  # an edited record proves nothing it says
    return EXIT[verdict.verdict]


def next_command(store: RunStore) -> tuple[str, str] | None:
    """What to run for the checks this run did not finish: (how it is said, the command); None: nothing.

    A gate run is resumed; a preflight (minutes, no resume) is run again; a run of a gate kvgate
    does not know gets no command, as kvgate would refuse any.
    """
    gate = store.run_record().gate
    if gate == PREFLIGHT:
        inventory, results = store.inventory_path(), str(store.path.parent.parent)
        return "run it again with", shlex.join(
            ["kvgate", "preflight", "--inventory", inventory, "--results", results]
        )
    return ("resume with", resume_command(store)) if gate in GATES else None


def resume_command(store: RunStore) -> str:
    """The exact command that re-runs this run's checks without a final verdict, from the same cwd.

    The inventory is the run's own (`RunStore.inventory_path`); waivers and a -k selection
    are not stored as paths, so they are repeated from the run's recorded argv.
    """
    record = store.run_record()
    words = ["kvgate", "run", record.gate, "--resume", str(store.path)]
    argv = record.argv if isinstance(record.argv, list) else []  # one string: no flag found in it
    for flag in ("--waivers", "-k"):
        if (value := _recorded_option(argv, flag)) is not None:
            words += [flag, value]
    return shlex.join(words)


def _recorded_option(argv: list[str], flag: str) -> str | None:
    """The value of ``flag`` in a recorded command line (``--flag value`` or ``--flag=value``)."""
    for i, word in enumerate(argv):
        if word == flag and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith(f"{flag}="):
            return word.partition("=")[2]
    return None


def report(args: argparse.Namespace, console: Console) -> int:
    signers = Path(args.allowed_signers) if args.allowed_signers else None
    if signers is not None:  # a list that is not there would leave the signer unchecked
        check_input_file("--allowed-signers", signers, "an OpenSSH allowed_signers list")
    store = RunStore.open(Path(args.run_dir))
    store.check_files()  # an edited or truncated file is named here, not as a crash mid-render
    return finish(store, console, no_pdf=args.no_pdf, allowed_signers=signers)


def verify_report(args: argparse.Namespace, console: Console) -> int:
    """0 when the report file is as kvgate wrote it, 2 when it was modified (as a modified run)."""
    from kvgate.report import verify_report as checks_of

    found = checks_of(Path(args.file))
    for c in found:
        console.print(f"{escape(args.file)}: {escape(c.detail)}", highlight=False, soft_wrap=True)
    return 0 if all(c.ok for c in found) else EXIT[Verdict.INVALID]


def rejudge(args: argparse.Namespace, console: Console) -> int:
    """Judge a stored run again into a new run directory, nothing measured; its report says what changed."""
    from kvgate.cli.rejudge import rejudge as judge_again

    results = Path(args.results) if args.results else None
    if results is not None:
        check_writable_dir("--results", results)  # a file or an unwritable place: exit 4 before judging
    waivers = Path(args.waivers) if args.waivers else None
    moved = Path(args.inventory) if args.inventory else None
    store = judge_again(Path(args.run_dir), waivers=waivers, results=results, inventory=moved)
    done = store.run_record().rejudged
    assert done is not None, "rejudge records what it re-judged"
    console.print(f"re-judged {escape(done.run)}: {len(done.changes)} change(s), {len(done.carried)} carried")
    for change in done.changes:
        console.print(f"  {escape(change)}", highlight=False, soft_wrap=True)
    status = finish(store, console, no_pdf=args.no_pdf)
    return (status or EXIT_USAGE) if unused_waivers(store, console) and args.strict else status


def unused_waivers(store: RunStore, console: Console) -> bool:
    """Name each waiver in force that matched no check of the run; True when there is one."""
    record = store.run_record()
    in_force = Waivers.model_validate({"waivers": [w.model_dump() for w in record.waivers]})
    unused = in_force.unmatched((r.host, r.check, r.rule) for r in store.checks().values())
    for w in unused:
        console.print(
            f"[yellow]waiver {escape(w.label())} matches no check of this run[/] (a typo, or expired)",
            highlight=False,
            soft_wrap=True,
        )
    return bool(unused)


def sign(args: argparse.Namespace, console: Console) -> int:
    """Sign a finished run's manifest with the engineer's SSH key, then re-render its report."""
    record = sign_manifest(Path(args.run_dir), key=Path(args.key).expanduser(), identity=args.identity)
    console.print(f"{args.run_dir}: {escape(record.summary())}", highlight=False)
    store = RunStore.open(Path(args.run_dir))
    unused_waivers(store, console)  # the signer sees a waiver that excused nothing before handing it on
    return finish(store, console, no_pdf=args.no_pdf)


def stop(args: argparse.Namespace, console: Console) -> int:
    from kvgate.orchestration.g4 import stop_soak

    for key, what in stop_soak(Path(args.run_dir)).items():
        console.print(f"{key}: soak {what}")
    console.print(
        f"judge what ran (and remove the soak's work directories on the hosts) with: "
        f"kvgate run g4 --resume {args.run_dir}"
    )
    return 0


def inventory(args: argparse.Namespace, console: Console) -> int:
    if args.action == "check":
        loaded = load_config(args.file).inventory
        inv = loaded.inventory
        counts = f"{len(inv.hosts)} hosts, {len(inv.volumes)} volumes"
        console.print(f"{escape(args.file)}: valid — site {inv.site}, {counts}")
        return 0
    from kvgate.orchestration.capture import capture

    if args.output:
        check_output_file("-o", Path(args.output))  # before reaching the host
    text = capture(load_config(args.inventory).inventory, args.host)
    if args.output:
        write_output_file("-o", Path(args.output), text)
        console.print(f"expectations of {escape(args.host)} written to {escape(args.output)}")
    else:
        print(text, end="")
    return 0


def references(_args: argparse.Namespace, console: Console) -> int:
    from kvgate.configuration.references import check_consistency, load_references

    refs = load_references()
    problems = check_consistency(refs)
    for p in problems:
        console.print(f"[yellow]disagreement:[/] {escape(str(p))}")
    console.print(f"{len(refs.entries)} references loaded; {len(problems)} disagreements")
    return 0


def plan(args: argparse.Namespace, _console: Console) -> int:
    """Print the tiering plan of every engine deployment (orchestration.plan); bad options: usage errors."""
    from kvgate.orchestration.plan import options, show

    check_results_root("--results", Path(args.results))
    config = load_config(args.inventory)
    show(Console(soft_wrap=True), config, Path(args.results), options(args))  # the plan is the output: stdout
    return 0
