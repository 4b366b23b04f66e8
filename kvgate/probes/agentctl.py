"""Ship the agent to a host, run a workload detached from the session, follow it, fetch its result.

The agent is a zipapp of ``kvgate/probes/agent`` with deterministic bytes, cached on
the host by content hash. A workload runs under ``setsid nohup`` with its state
in a directory on the host, so an SSH drop neither kills nor loses it; the
controller only polls files (scylla-cluster-tests PR #7834, teuthology #2252)
and verifies the process identity (pid + start time) before it kills
(FIELD-NOTES "remote execution over SSH").

Usage::

    job = start(ex, "kv-restore", spec)
    result = wait(ex, job, on_event=print, timeout_s=3600)
"""

from __future__ import annotations

import hashlib
import io
import json
import secrets
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kvgate.base.errors import CommandTimeout, LabError, ToolMissing, TransportError
from kvgate.probes.agent import server_drop_file
from kvgate.probes.scratch import ScratchDir
from kvgate.transport import Executor

# Drops an NFS server's cache before a cold read of N bytes: {controlled, how} (ServerCache.answer)
ServerDrop = Callable[[int], dict[str, Any]]

PROBES_DIR = Path(__file__).parent  # the agent and what it ships beside it
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
BOOT = b"import sys\nfrom kvgate.probes.agent.__main__ import main\nsys.exit(main())\n"
SHORT_S = 30.0  # bound of every quick remote command
PUT_S = 120.0
START_WAIT_S = 15  # how long the launcher waits for the agent's pid file
STALE_HEARTBEAT_S = 120

LAUNCH = (
    "cd %s || exit 3; "
    "setsid nohup %s %s %s --spec spec.json --state-dir . </dev/null >stdout.log 2>stderr.log & "
    "i=0; while [ ! -s pid ] && [ ! -e exit_code ] && [ $i -lt %s ]; do sleep 0.1; i=$((i+1)); done; "
    "cat pid 2>/dev/null; true"
)
# ``<state> <start ticks>`` of a pid: fields 3 and 22 of /proc/<pid>/stat, read after the ``(comm)``
PROC_STATE = "sed 's/.*) //' /proc/%s/stat 2>/dev/null | cut -d' ' -f1,20"
POLL = (
    "cd %s || exit 3; if [ -e exit_code ]; then echo exit $(cat exit_code); "
    "elif set -- $(sed 's/.*) //' /proc/%s/stat 2>/dev/null | cut -d' ' -f1,20) && "
    '[ "$2" = %s ] && [ "$1" != Z ]; '
    "then echo alive $(( $(date +%%s) - $(cat heartbeat 2>/dev/null || date +%%s) )); "
    "elif [ -e exit_code ]; then echo exit $(cat exit_code); else echo dead; fi; "
    "tail -c +%s events.jsonl 2>/dev/null; true"
)
SIGNAL_IF_SAME = (
    "set -- $(sed 's/.*) //' /proc/%s/stat 2>/dev/null | cut -d' ' -f1,20); "
    'if [ "$2" = %s ] && [ "$1" != Z ] && kill -%s -%s; then echo signalled; else echo gone; fi'
)


@dataclass(frozen=True)
class RemoteJob:
    """A running (or finished) agent workload on a host; plain data, so it can be stored and resumed."""

    host: str
    workload: str
    run_id: str  # also names the run directory on the target: kvgate-<workload>-<run_id>
    state_dir: str
    agent: str
    pid: int
    start_ticks: int
    sudo: bool = False


def pack(package: str, boot: bytes, *, also: tuple[str, ...] = ()) -> bytes:
    """Stdlib packages of kvgate as a deterministic zipapp (shebang, stored entries, fixed dates, sorted).

    ``also``: further kvgate packages shipped beside ``package`` (the agent's soak drives the load
    generator in-process).
    """
    stub = f'"""kvgate, as shipped in a zipapp: only kvgate.probes.{package} is here."""\n'.encode()
    entries = {"__main__.py": boot, "kvgate/__init__.py": stub, "kvgate/probes/__init__.py": stub}
    for name in (package, *also):
        for path in sorted((PROBES_DIR / name).glob("*.py")):
            entries[f"kvgate/probes/{name}/{path.name}"] = path.read_bytes()
    buf = io.BytesIO()
    buf.write(b"#!/usr/bin/env python3\n")
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, ZIP_EPOCH)
            info.external_attr = 0o644 << 16
            zf.writestr(info, entries[name])
    return buf.getvalue()


def zipapp_bytes() -> bytes:
    """The agent zipapp, with the load generator (its soak drives it) and the evidence module."""
    return pack("agent", BOOT, also=("loadgen", "evidence"))


def remote_home(ex: Executor) -> str:
    """$HOME of the remote user."""
    home = ex.run('echo "$HOME"', timeout_s=SHORT_S, check=True).stdout.strip()
    if not home.startswith("/"):
        raise LabError(f"{ex.host}: cannot tell the remote home directory (got {home!r})")
    return home


def remote_sha256(ex: Executor, path: str) -> str | None:
    """sha256 of a remote file, None if it is not there."""
    res = ex.run("sha256sum %s 2>/dev/null", path, timeout_s=SHORT_S)
    return res.stdout.split()[0] if res.ok and res.stdout.strip() else None


def ensure_uploaded(ex: Executor) -> str:
    """Upload the agent to ``~/.cache/kvgate/agent-<sha256[:16]>.pyz`` unless it is there; return its path."""
    return upload(ex, "agent", zipapp_bytes())


def upload(ex: Executor, name: str, data: bytes) -> str:
    """Put a zipapp at ``~/.cache/kvgate/<name>-<sha256[:16]>.pyz`` on the host unless it is there.

    It is packed afresh each time (milliseconds) and staged in a private temporary directory:
    no copy is kept in a shared directory, where another user could swap it between check and upload.
    """
    digest = hashlib.sha256(data).hexdigest()
    remote = f"{remote_home(ex)}/.cache/kvgate/{name}-{digest[:16]}.pyz"
    if remote_sha256(ex, remote) == digest:
        return remote
    ex.run("mkdir -p %s", remote.rsplit("/", 1)[0], timeout_s=SHORT_S, check=True)
    partial = f"{remote}.part-{secrets.token_hex(4)}"
    with tempfile.TemporaryDirectory(prefix="kvgate-") as tmp:
        local = Path(tmp) / f"{name}.pyz"
        local.write_bytes(data)
        ex.put(local, partial)
    if remote_sha256(ex, partial) != digest:
        ex.run("rm -f %s", partial, timeout_s=SHORT_S)
        raise TransportError(f"{ex.host}: the uploaded {name} does not match its sha256 {digest[:16]}")
    ex.run("mv -f %s %s", partial, remote, timeout_s=SHORT_S, check=True)
    return remote


def check_python(ex: Executor, python: str) -> None:
    """The host's python must exist and be >= 3.8."""
    res = ex.run("%s -c %s", python, "import sys; print(sys.version_info >= (3, 8))", timeout_s=SHORT_S)
    if res.exit_status == 127:
        raise ToolMissing(ex.host, python)
    if res.stdout.strip() != "True":
        raise LabError(f"{ex.host}: the agent needs python >= 3.8 as `{python}`\n{res}")


def start(
    ex: Executor,
    workload: str,
    spec: dict[str, Any],
    *,
    python: str = "python3",
    state_root: str | None = None,
    sudo: bool = False,
    target: ScratchDir | None = None,
) -> RemoteJob:
    """Upload (if needed) and launch ``workload`` detached; returns once its pid file exists.

    A workload that writes on a volume (its spec's ``target_dir``) starts only with the
    proof that the directory passed the scratch check: ``target`` (kvgate.probes.scratch.checked).
    """
    spec = _targeted(ex, spec, target)
    agent = ensure_uploaded(ex)
    check_python(ex, python)
    run_id = spec.get("run_id") or f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{secrets.token_hex(3)}"
    state_dir = f"{state_root or remote_home(ex) + '/.cache/kvgate/jobs'}/{workload}-{run_id}"
    ex.run("mkdir -p %s", state_dir, timeout_s=SHORT_S, check=True)
    with tempfile.TemporaryDirectory() as tmp:
        local = Path(tmp) / "spec.json"
        local.write_text(json.dumps({**spec, "run_id": run_id}, indent=1))
        ex.put(local, f"{state_dir}/spec.json")
    steps = START_WAIT_S * 10
    res = ex.run(
        LAUNCH, state_dir, python, agent, workload, steps, timeout_s=START_WAIT_S + SHORT_S, sudo=sudo
    )
    fields = res.stdout.split()
    if len(fields) != 2:
        raise LabError(f"{ex.host}: the agent did not start in {state_dir}\n{stderr_tail(ex, state_dir)}")
    return RemoteJob(ex.host, workload, run_id, state_dir, agent, int(fields[0]), int(fields[1]), sudo)


def _targeted(ex: Executor, spec: dict[str, Any], target: ScratchDir | None) -> dict[str, Any]:
    """The spec with ``target_dir`` from the checked ``target``; a target_dir without one is refused."""
    if target is None:
        if "target_dir" in spec:
            raise ValueError(
                "an agent workload writes its target_dir only with a kvgate.probes.scratch.checked target"
            )
        return spec
    if target.host != ex.host or spec.get("target_dir", target.path) != target.path:
        raise ValueError(
            f"target_dir {spec.get('target_dir')!r} is not the checked {target.host}:{target.path}"
        )
    return {**spec, "target_dir": target.path}


def stderr_tail(ex: Executor, state_dir: str, lines: int = 20) -> str:
    """The last lines the agent wrote to stderr (for error messages)."""
    return ex.run("tail -n %s %s/stderr.log 2>/dev/null", lines, state_dir, timeout_s=SHORT_S).stdout


def _poll(ex: Executor, job: RemoteJob, offset: int) -> tuple[list[dict[str, Any]], int, str]:
    """(complete new events, new offset, status line) — status is ``exit N``, ``alive AGE`` or ``dead``."""
    res = ex.run(POLL, job.state_dir, job.pid, job.start_ticks, offset + 1, timeout_s=SHORT_S)
    status, _, text = res.stdout.partition("\n")
    if res.exit_status == 3 or not status:
        raise LabError(f"{ex.host}: agent state directory {job.state_dir} is gone\n{res}")
    complete = text[: text.rfind("\n") + 1]
    events = [json.loads(line) for line in complete.splitlines() if line.strip()]
    return events, offset + len(complete.encode()), status


def poll(ex: Executor, job: RemoteJob, offset: int) -> tuple[list[dict[str, Any]], int, bool]:
    """New events since byte ``offset`` of events.jsonl, the next offset, and whether the job finished."""
    events, new_offset, status = _poll(ex, job, offset)
    if status == "dead":
        raise LabError(died(ex, job))
    return events, new_offset, status.startswith("exit")


def died(ex: Executor, job: RemoteJob) -> str:
    """Why a job whose process is gone without an exit code ended: killed, or its host restarted."""
    return (
        f"{ex.host}: agent {job.workload} (pid {job.pid}) died without an exit code: it was killed "
        f"(SIGKILL, the OOM killer) or its host restarted\n{stderr_tail(ex, job.state_dir)}"
    )


class JobOverran(CommandTimeout):
    """wait()'s own deadline passed; the job keeps running (cancel it or wait again)."""


def wait(
    ex: Executor,
    job: RemoteJob,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    *,
    timeout_s: float,
    interval_s: float = 1.0,
    offset: int = 0,
    tolerate_s: float = 0.0,
    server_drop: ServerDrop | None = None,
) -> dict[str, Any]:
    """Poll until the job finishes, feeding every event to ``on_event``; returns ``result()``.

    A ``server-drop`` event (an NFS volume's cold read, kvgate.probes.agent.cold) is answered
    with ``server_drop(data_bytes)``, or "not controlled" where the caller gave none.

    Raises JobOverran after ``timeout_s`` (the job keeps running: cancel it or wait
    again) and LabError if the agent died or its heartbeat went stale. A poll that
    fails on the link (TransportError, or the poll command's own timeout) is retried
    until contact has been lost for ``tolerate_s``; then its error is raised.
    """
    deadline = time.monotonic() + timeout_s
    lost_since: float | None = None
    while True:
        try:
            events, offset, status = _poll(ex, job, offset)
        except (TransportError, CommandTimeout):
            lost_since = time.monotonic() if lost_since is None else lost_since
            if time.monotonic() - lost_since >= tolerate_s or time.monotonic() >= deadline:
                raise
            time.sleep(max(interval_s, 5.0))
            continue
        lost_since = None
        for event in events:
            if event.get("event") == "server-drop":
                _answer_server_drop(ex, job, event, server_drop)
            if on_event is not None:
                on_event(event)
        if status.startswith("exit"):
            return result(ex, job)
        if status == "dead":
            raise LabError(died(ex, job))
        if status.startswith("alive") and int(status.split()[1]) > STALE_HEARTBEAT_S:
            raise LabError(f"{ex.host}: agent {job.workload} is {status}\n{stderr_tail(ex, job.state_dir)}")
        if time.monotonic() >= deadline:
            raise JobOverran(ex.host, f"agent {job.workload} in {job.state_dir}", timeout_s)
        time.sleep(interval_s)


def _answer_server_drop(ex: Executor, job: RemoteJob, event: dict[str, Any], drop: ServerDrop | None) -> None:
    """Drop the NFS server's cache for the agent's next cold read and tell it how that went."""
    answer: dict[str, Any] = {"controlled": False, "how": "this run controls no NFS server"}
    try:
        if drop is not None:
            answer = drop(int(event["data_bytes"]))
    except (CommandTimeout, LabError, TransportError) as exc:  # the server is out of reach: say so
        answer = {"controlled": False, "how": f"the drop on the NFS server failed: {exc}"}
    name = f"{job.state_dir}/{server_drop_file(int(event['seq']))}"
    text = json.dumps(answer)
    ex.run("printf %%s %s > %s.tmp && mv %s.tmp %s", text, name, name, name, timeout_s=SHORT_S, sudo=job.sudo)


def result(ex: Executor, job: RemoteJob) -> dict[str, Any]:
    """The agent's result.json (status, exit_code and the workload's measurements)."""
    res = ex.run("cat %s/result.json", job.state_dir, timeout_s=SHORT_S)
    if not res.ok:
        raise LabError(f"{ex.host}: agent {job.workload} has no result in {job.state_dir}\n{res}")
    data: dict[str, Any] = json.loads(res.stdout)
    return data


def _alive(ex: Executor, job: RemoteJob) -> bool:
    """True while the job's own process (same pid and start time, not a zombie) exists."""
    fields = ex.run(PROC_STATE, job.pid, timeout_s=SHORT_S).stdout.split()
    return len(fields) == 2 and fields[0] != "Z" and fields[1] == str(job.start_ticks)


def _signal(ex: Executor, job: RemoteJob, sig: str) -> bool:
    """Signal the job's process group, only if its leader is still the process we started."""
    res = ex.run(SIGNAL_IF_SAME, job.pid, job.start_ticks, sig, job.pid, timeout_s=SHORT_S, sudo=job.sudo)
    return res.stdout.strip() == "signalled"


def _wait_gone(ex: Executor, job: RemoteJob, seconds: float) -> bool:
    """Poll until the job's process is gone; True if it went within ``seconds``."""
    deadline = time.monotonic() + seconds
    while _alive(ex, job):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True


def cancel(ex: Executor, job: RemoteJob, *, grace_s: float = 10.0) -> bool:
    """TERM the job's process group, KILL it after ``grace_s``; False if it had already ended."""
    if not _signal(ex, job, "TERM"):
        return False
    if not _wait_gone(ex, job, grace_s):
        _signal(ex, job, "KILL")
        _wait_gone(ex, job, SHORT_S)
        mark = "[ -e %s/exit_code ] || echo 137 > %s/exit_code"  # so pollers see it finished
        ex.run(mark, job.state_dir, job.state_dir, timeout_s=SHORT_S, sudo=job.sudo)
    return True
