"""The kvgate CLI, counting the SSH executor's select() calls and commands (the scale benchmark).

``python counted_cli.py run g1 …`` runs ``kvgate.cli`` unchanged; at exit it writes
``{"selects": …, "commands": …}`` to the file named by ``KVGATE_COUNTS``. Only
kvgate.transport.ssh's own select and command start are counted: the busy wait issue 27
measured (614–1,247 select() calls per command) was theirs.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import sys
import types
from typing import Any

from kvgate.cli.command_line import main
from kvgate.transport import ssh

counts = {"selects": 0, "commands": 0}


def counted_select(*args: Any) -> Any:
    counts["selects"] += 1
    return select.select(*args)


def counted(execute: Any) -> Any:
    def run(*args: Any, **kwargs: Any) -> Any:
        counts["commands"] += 1
        return execute(*args, **kwargs)

    return run


def write_counts() -> None:
    with open(os.environ["KVGATE_COUNTS"], "w") as out:
        json.dump(counts, out)


if __name__ == "__main__":
    ssh.select = types.SimpleNamespace(select=counted_select)  # type: ignore[assignment]
    ssh.SSHExecutor._execute = counted(ssh.SSHExecutor._execute)  # type: ignore[method-assign]
    atexit.register(write_counts)
    sys.exit(main(sys.argv[1:]))
