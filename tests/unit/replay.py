"""Executor double for hardware that cannot exist here: each command gets a recorded output.

Shared by the G1 tests (test_g1_plan.py, test_facts_fabric.py); the outputs are real
recordings from tests/data/recorded (see PROVENANCE.md) or, where marked there, constructed.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from kvgate.transport.base import CommandResult, quote

DATA = Path(__file__).parents[1] / "data" / "recorded"
HOST = "gpu-1"
Answer = tuple[int, str, str]


def recorded(name: str) -> str:
    return (DATA / name).read_text()


def ok(name: str) -> Answer:
    return 0, recorded(name), ""


class Replay:
    """Answers each command by the longest recorded prefix it starts with; `command -v` by `tools`."""

    def __init__(self, answers: dict[str, Answer], tools: set[str]) -> None:
        self.host = HOST
        self.answers, self.tools = answers, tools
        self.commands: list[str] = []

    def run(self, command: str, *args: object, **_: Any) -> CommandResult:
        cmd = quote(command, *args)
        self.commands.append(cmd)
        if cmd.startswith("realpath -m -z -- "):  # the scratch check: these paths have no links
            return CommandResult(self.host, cmd, 0, "".join(f"{a}\0" for a in args), "", 0.0)
        if cmd.startswith(("command -v ", "cd / && command -v ")):  # tools are probed by absolute path
            tool = shlex.split(cmd)[-1]
            found = tool in self.tools
            return CommandResult(self.host, cmd, 0 if found else 1, f"/usr/bin/{tool}\n" * found, "", 0.0)
        for prefix in sorted(self.answers, key=len, reverse=True):
            if cmd.startswith(prefix):
                status, out, err = self.answers[prefix]
                return CommandResult(self.host, cmd, status, out, err, 0.0)
        return CommandResult(self.host, cmd, 127, "", f"replay: nothing recorded for {cmd[:60]}", 0.0)

    def put(self, local: Path, remote: str) -> None:
        raise NotImplementedError

    def get(self, remote: str, local: Path) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass
