"""Every exception kvgate raises, in one tree.

    KvgateError                      base: carries a message a user can act on
    ├── ConfigError                  a file the user wrote is wrong (inventory, waivers, references, profile)
    ├── UsageError                   the command line or a gate-order rule was violated
    ├── LabError                     the lab did not let us evaluate a check (pytest ERROR, verdict ERROR)
    │   ├── TransportError           cannot reach or stay connected to a host
    │   │   └── HostKeyError         host key unknown or changed: refused
    │   ├── CommandFailed            a command exited non-zero when it had to succeed
    │   ├── CommandTimeout           a command overran its timeout and was killed
    │   ├── ToolMissing              a required tool is not installed on the host
    │   ├── Interrupted              the run was cancelled (Ctrl-C) before or while a command ran
    │   ├── UnsafeWrite              a write outside what a scratch volume allows was refused
    │   │                            (kvgate.probes.scratch; fio's UnsafeTarget is one)
    │   └── EngineError              the serving engine crashed, never became ready, left
    │                                processes behind or refused a call (kvgate.probes.engines.errors)
    └── StoreError                   a run directory is missing or unreadable
        └── ModifiedRun              a stored run was modified after it was sealed: its figures are
                                     not used (exit 2, as a report of it)

Third-party exceptions (paramiko, yaml, pydantic, OSError) are mapped to these at
the boundary where they happen; library code never calls sys.exit.
"""

from __future__ import annotations

from typing import Protocol


class KvgateError(Exception):
    """Base of every kvgate error; str() is the message for the user."""


class ConfigError(KvgateError):
    """A user-written file is invalid: names the file, the field path and the expectation."""

    def __init__(self, path: str, field: str, expected: str) -> None:
        self.path, self.field, self.expected = path, field, expected
        where = f"{path}: {field}" if field else path
        super().__init__(f"{where}: {expected}")


class UsageError(KvgateError):
    """The command line, or a gate-order rule, was violated."""


class LabError(KvgateError):
    """The lab prevented evaluating a check; the check becomes ERROR, never PASS."""


class TransportError(LabError):
    """A host cannot be reached or the connection dropped."""


class HostKeyError(TransportError):
    """The host key is unknown or changed; the connection was refused."""


class Ran(Protocol):
    """What CommandFailed keeps of a command (a kvgate.transport.CommandResult): its str() says it all."""

    @property
    def host(self) -> str: ...
    @property
    def command(self) -> str: ...
    @property
    def exit_status(self) -> int: ...


class CommandFailed(LabError):
    """A command had to succeed and did not."""

    def __init__(self, result: Ran) -> None:
        self.result = result
        super().__init__(str(result))


class CommandTimeout(LabError):
    """A command overran its timeout and was killed."""

    def __init__(self, host: str, command: str, timeout_s: float, partial: str = "") -> None:
        self.host, self.command, self.timeout_s = host, command, timeout_s
        msg = f"{host}: `{command}` did not finish within {timeout_s:g} s and was killed"
        super().__init__(msg + (f"\n{partial}" if partial else ""))


class ToolMissing(LabError):
    """A tool the check needs is not installed on the host."""

    def __init__(self, host: str, tool: str) -> None:
        self.host, self.tool = host, tool
        super().__init__(f"{host}: `{tool}` is not installed (not found in PATH)")


class Interrupted(LabError):
    """The run was cancelled (Ctrl-C): no new command starts and running ones are ended."""

    def __init__(self, host: str, command: str) -> None:
        super().__init__(f"{host}: `{command}` interrupted: the run was cancelled")


class StoreError(KvgateError):
    """A run directory is missing, unreadable or of an unknown schema version."""


class ModifiedRun(StoreError):
    """A stored run changed after its manifest sealed it: nothing reads its figures (exit 2)."""
