"""`kvgate` command line: run a gate, stop a detached soak, re-render or verify a report, check an inventory.

Exit codes (documented in the README):
    0  gate passed (every check PASS, WAIVED or SKIP)
    1  gate failed (a check is FAIL)
    2  gate invalid (no FAIL, but a number could not be trusted: INVALID); a stored run modified
       after it was sealed (report, --resume, plan, rejudge, G3, gate order: its figures are not
       used); `kvgate compare`: a run whose record does not verify against its manifest
    3  lab error (no FAIL/INVALID, but a check could not be evaluated: ERROR; outside a
       gate run, e.g. `kvgate stop`: a host could not be reached or a command failed)
    4  usage or configuration error (bad command line, inventory, waivers or other user file,
       an inventory that plans no checks, an edited run directory, gate order refused)
    5  run interrupted (Ctrl-C; SIGTERM: a CI job's timeout or cancel; SIGHUP: the terminal went
       away): resume with --resume RUN
    6  regression (--fail-on-regression; always for `kvgate compare`): the gate passed, but a
       figure is worse than in the previous comparable run by more than its repeats' noise
   70  internal error (a bug in kvgate: the traceback is written to a file to report)
"""

from __future__ import annotations

import argparse
import sys
import traceback
from typing import Any, NoReturn

from rich.console import Console
from rich.markup import escape

from kvgate.base.criteria import Verdict
from kvgate.base.errors import Interrupted, KvgateError, LabError, ModifiedRun, UsageError
from kvgate.cli.exit_codes import EXIT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE
from kvgate.cli.signals import signals_as_interrupt
from kvgate.record import GATES

STRICT = "exit 4 when a waiver matches no check of the run (a typo, or expired), even if the gate passed"


class Parser(argparse.ArgumentParser):
    """argparse exits 2 on a bad command line, which is kvgate's "gate invalid": raise exit 4's error."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}\n{self.format_usage().rstrip()}")


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="kvgate", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a gate (g1, g2, g3, g4) against an inventory")
    run.add_argument("gate", choices=GATES)
    run.add_argument("--inventory", help="default: the resumed run's inventory, else inventory/local.yaml")
    run.add_argument("--results", default="results", help="root of run directories")
    run.add_argument("--resume", metavar="RUN", help="finish an earlier, incomplete run directory")
    run.add_argument("--waivers", metavar="FILE")
    run.add_argument("--strict", action="store_true", help=STRICT)
    run.add_argument("--force-gate-order", metavar="REASON", help="run without a passed earlier gate")
    run.add_argument("--no-pdf", action="store_true", help="skip the PDF (HTML and JUnit only)")
    run.add_argument("-k", dest="keyword", help="only checks matching this pytest -k expression")
    run.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 6 when a figure regressed against the previous comparable run (nightly CI)",
    )
    report_arguments(sub)
    rej = sub.add_parser("rejudge", help="judge a stored run again (new references, profiles, waivers)")
    rej.add_argument("run_dir")
    rej.add_argument("--waivers", metavar="FILE", help="default: the waivers the run was judged with")
    rej.add_argument("--results", help="root of run directories (default: the run's own)")
    rej.add_argument("--inventory", help="the run's inventory, if it moved (its sha256 must match the run's)")
    rej.add_argument("--strict", action="store_true", help=STRICT)
    rej.add_argument("--no-pdf", action="store_true")
    stop = sub.add_parser("stop", help="end a detached G4 soak early (then --resume judges what ran)")
    stop.add_argument("run_dir")
    inv = sub.add_parser("inventory", help="validate an inventory, or capture a host's expectations")
    isub = inv.add_subparsers(dest="action", required=True)
    chk = isub.add_parser("check", help="validate an inventory file")
    chk.add_argument("file")
    cap = isub.add_parser("capture", help="write expectations from a known-good host (YAML)")
    cap.add_argument("host")
    cap.add_argument("--inventory", default="inventory/local.yaml")
    cap.add_argument("-o", "--output", help="write to this file instead of stdout")
    pre = sub.add_parser("preflight", help="probe the lab in minutes: is every gate measurable here?")
    pre.add_argument("--inventory", default="inventory/local.yaml")
    pre.add_argument("--results", default="results", help="root of run directories")
    pre.add_argument("--no-pdf", action="store_true", help="skip the PDF (HTML and JUnit only)")
    sub.add_parser("references", help="check gates/references.yaml for internal consistency")
    hist = sub.add_parser("history", help="list the runs indexed under a results root")
    hist.add_argument("--results", default="results", help="root of run directories")
    hist.add_argument("--site")
    hist.add_argument("--gate", choices=GATES)
    hist.add_argument("--rebuild", action="store_true", help="re-make the index from the run directories")
    cmp = sub.add_parser("compare", help="two runs' figures side by side with their change")
    cmp.add_argument("run_a", metavar="RUN_A", help="the earlier run directory")
    cmp.add_argument("run_b", metavar="RUN_B", help="the later run directory")
    plan_arguments(
        sub.add_parser("plan", help="predict G3's numbers and the SSD tier size from G2's figures")
    )
    return p


def report_arguments(sub: Any) -> None:
    """``kvgate report``, ``verify-report`` and ``sign``: what is done with a finished run's report."""
    rep = sub.add_parser("report", help="re-render a stored run's HTML, PDF and JUnit offline")
    rep.add_argument("run_dir")
    rep.add_argument("--no-pdf", action="store_true")
    rep.add_argument("--allowed-signers", metavar="FILE", help="check the signer against this OpenSSH list")
    ver = sub.add_parser("verify-report", help="check a report file against its own hash and report.sha256")
    ver.add_argument("file", help="report.html or report.pdf (or junit.xml) of a run")
    sgn = sub.add_parser("sign", help="sign a finished run's manifest with your SSH key (ssh-keygen -Y sign)")
    sgn.add_argument("run_dir")
    sgn.add_argument("--key", required=True, help="your SSH private key, e.g. ~/.ssh/id_ed25519")
    sgn.add_argument("--identity", required=True, help="who signs, e.g. name@site (shown on the report)")
    sgn.add_argument("--no-pdf", action="store_true")


def plan_arguments(pl: argparse.ArgumentParser) -> None:
    """``kvgate plan``'s options: what G3 should measure here, and how big the SSD tier must be."""
    pl.add_argument("--inventory", default="inventory/local.yaml")
    pl.add_argument("--results", default="results", help="root of run directories (G2 and G3 runs are read)")
    pl.add_argument(
        "--prefill-tok-per-s",
        type=float,
        metavar="N",
        help="prefill rate where no G3 run measured the recompute arm",
    )
    pl.add_argument("--reuse", type=float, default=1.0, help="share of each prompt the tier restores (0-1)")
    pl.add_argument("--documents", type=int, metavar="N", help="distinct reusable prefixes the tier holds")
    pl.add_argument("--dram-hit", type=float, default=0.0, help="share of reused prefixes DRAM holds (0-1)")


def main(argv: list[str] | None = None) -> int:
    with signals_as_interrupt():
        return _run(argv, Console(stderr=True))


def _run(argv: list[str] | None, console: Console) -> int:
    try:
        args = parser().parse_args(argv)
        from kvgate.cli import commands

        return commands.dispatch(args, console)
    except (Interrupted, KeyboardInterrupt):
        console.print("[yellow]interrupted[/]")
        return EXIT_INTERRUPTED
    except LabError as exc:  # outside a gate run (e.g. `kvgate stop` with a host down)
        console.print(f"[bold red]lab error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return EXIT[Verdict.ERROR]
    except ModifiedRun as exc:  # a stored run edited after its end: invalid, as its report says
        console.print(f"[bold red]modified run:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return EXIT[Verdict.INVALID]
    except KvgateError as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return EXIT_USAGE
    except Exception as exc:  # a bug: its own exit code and a traceback file, never "gate failed"
        from kvgate.base.crash import tell, write_traceback

        tell(console, f"{type(exc).__name__}: {exc}", write_traceback(traceback.format_exc()))
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
