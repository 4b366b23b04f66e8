"""The ``kvgate`` command line: the parser, the subcommands, the live view.

command_line.py  the parser; ``main()`` is the console script (``python -m kvgate.cli``)
args.py          paths and expressions from the command line, checked before anything runs
commands.py      what each subcommand does, composing the stages below
rejudge.py       ``kvgate rejudge RUN``: a stored run judged again
history.py       ``kvgate history`` and ``kvgate compare``: the run history, two runs side by side
live.py          the rich live view of a gate run
signals.py       SIGTERM (a CI job's end) and SIGHUP (a dropped terminal) stop a run as Ctrl-C does
exit_codes.py    a gate's verdict, or why none was reached, as an exit code
__main__.py      ``python -m kvgate.cli`` from a checkout: runs ``main()``
"""

from kvgate.cli.command_line import main

__all__ = ["main"]
