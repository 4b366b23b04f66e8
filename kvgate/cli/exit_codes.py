"""kvgate's exit codes: a gate's verdict, or why none was reached (for command_line.py, commands.py)."""

from __future__ import annotations

from kvgate.base.criteria import Verdict

EXIT = {
    Verdict.PASS: 0,
    Verdict.WAIVED: 0,
    Verdict.SKIP: 0,
    Verdict.FAIL: 1,
    Verdict.INVALID: 2,
    Verdict.ERROR: 3,
}
EXIT_USAGE, EXIT_INTERRUPTED, EXIT_REGRESSION, EXIT_INTERNAL = 4, 5, 6, 70
