"""Run one fio job on a host over an Executor, under a watchdog, and judge whether it can be trusted.

The jobfile and the watchdog wrapper are uploaded into a fresh run directory;
fio writes json+ to a file there (``--output``) while its stdout and stderr are
captured apart (fio #731, #1685). A run is INVALID, with the reason spelled out,
when the watchdog fired, when fio printed no valid JSON, when a job reports an
error, or when no I/O happened; fio's own error text is carried in the reason.

Usage, on a real host::

    from kvgate.transport.local import LocalExecutor
    from kvgate.configuration.inventory.schema import Volume
    vol = Volume(path="/tmp/kvgate-doctest", kind="baseline", scratch=True)
    job = FioJob(name="rr", rw="randread", bs="4k", size="1m", runtime_s=1, ramp_s=0, directory=vol.path)
    run = run_fio(LocalExecutor(), job, vol)
    run.invalid_reason is None and run.summary().read.iops > 0
    # → True
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kvgate.base.errors import CommandTimeout, LabError, ToolMissing
from kvgate.configuration.fio_job import FioJob
from kvgate.configuration.inventory import Volume
from kvgate.probes.fio.parse import FioOutputError, FioResult, Summary, parse_output
from kvgate.probes.fio.safety import SafeJobfile, check_jobfile
from kvgate.probes.fio.watchdog import EVIDENCE_FILE, SCRIPT, STDERR_FILE, STDOUT_FILE, WatchdogReport
from kvgate.probes.nfs_server import ServerCache
from kvgate.transport import CommandResult, Executor

LAYOUT_MIN_BYTES_PER_S = 64 << 20  # a layout slower than this is a sick volume: the watchdog fires
EXECUTOR_MARGIN_S = 30.0  # the executor's own timeout sits behind the watchdog's


@dataclass(frozen=True)
class RunOptions:
    """How kvgate runs fio on a host (the job itself says what fio does)."""

    workdir: str = "/tmp/kvgate-fio"  # jobfiles, outputs, evidence; never the data under test
    grace_s: float = 30.0  # beyond runtime + ramp before the watchdog fires (startup, layout)
    sudo: bool = False
    allow_destructive: bool = False  # raw-device writes (see kvgate.probes.fio.safety)
    server_cache: ServerCache | None = None  # an NFS volume's server cache (kvgate.probes.nfs_server)


@dataclass(frozen=True)
class FioRun:
    """Everything one fio invocation produced, raw and parsed, and whether it can be trusted."""

    host: str
    job: FioJob
    jobfile: str
    command: str
    exit_status: int
    stdout: str
    stderr: str
    output: str  # the --output file as fio wrote it (json+, maybe with error lines before it)
    elapsed_s: float
    deadline_s: float
    result: FioResult | None
    invalid_reason: str | None
    watchdog: WatchdogReport | None = None
    notes: tuple[str, ...] = field(default=())  # e.g. an ioengine fallback

    @property
    def valid(self) -> bool:
        return self.invalid_reason is None

    def summary(self) -> Summary:
        """The kvgate aggregate; raises when fio produced no parseable result."""
        if self.result is None:
            raise FioOutputError(self.invalid_reason or "no fio result")
        return self.result.summary()

    def artifacts(self) -> dict[str, str]:
        """Raw texts for the run store: jobfile, stdout, stderr, json+ output, watchdog evidence."""
        raw = {"job.fio": self.jobfile, "fio.stdout": self.stdout, "fio.stderr": self.stderr}
        raw["fio.json"] = self.output
        if self.watchdog:
            raw["watchdog.txt"] = self.watchdog.raw
        return raw


def deadline_s(job: FioJob, grace_s: float) -> float:
    """When the watchdog fires: runtime + ramp + grace."""
    return job.runtime_s + job.ramp_s + grace_s


def resolve_ioengine(ex: Executor, job: FioJob) -> tuple[FioJob, tuple[str, ...]]:
    """Keep the job's engine when the host's fio has it; libaio falls back to psync (recorded)."""
    if not ex.run("command -v fio").ok:
        raise ToolMissing(ex.host, "fio")
    if ex.run("fio --enghelp=%s", job.ioengine).ok or job.ioengine != "libaio":
        return job, ()
    note = "libaio is not available in this fio: fell back to psync (one I/O in flight per job)"
    return job.replace(ioengine="psync"), (note,)


def run_fio(ex: Executor, job: FioJob, volume: Volume, opts: RunOptions | None = None) -> FioRun:
    """Check the job file fio will read is safe, then run ``job`` on the host under the watchdog."""
    opts = opts or RunOptions()
    job, notes = resolve_ioengine(ex, job)
    safe = checked_jobfile(ex, job.to_jobfile(), volume, opts)
    return execute(ex, job, opts, jobfile=safe, notes=notes)


def lay_out(ex: Executor, job: FioJob, volume: Volume, opts: RunOptions | None = None) -> FioRun:
    """Create the job's files without measuring (fio create_only), e.g. before dropping caches."""
    opts = opts or RunOptions()
    safe = checked_jobfile(ex, job.to_jobfile(layout_only=True), volume, opts)
    grace = opts.grace_s + job.working_set_bytes / LAYOUT_MIN_BYTES_PER_S
    layout_opts = RunOptions(opts.workdir, grace, opts.sudo, opts.allow_destructive)
    return execute(ex, job, layout_opts, jobfile=safe, expect_io=False)


def checked_jobfile(ex: Executor, text: str, volume: Volume, opts: RunOptions) -> SafeJobfile:
    """The job file ``text`` once the safety check passed it on this host (kvgate.probes.fio.safety)."""
    return check_jobfile(ex, text, volume, allow_destructive=opts.allow_destructive, sudo=opts.sudo)


def execute(
    ex: Executor,
    job: FioJob,
    opts: RunOptions,
    *,
    jobfile: SafeJobfile,
    clients: Sequence[str] = (),
    notes: tuple[str, ...] = (),
    expect_io: bool = True,
) -> FioRun:
    """Upload the checked job file and run it; ``clients`` runs fio in client mode."""
    run_dir = _run_dir(ex, opts.workdir, job.name)
    _upload(ex, run_dir, {"job.fio": jobfile.text, "watchdog.sh": SCRIPT})
    deadline = deadline_s(job, opts.grace_s)
    template, args = _command(run_dir, deadline, opts.grace_s, clients)
    try:
        limit_s = deadline + 2 * opts.grace_s + EXECUTOR_MARGIN_S  # the wrapper fires well before
        res = ex.run(template, *args, timeout_s=limit_s, sudo=opts.sudo)
    except CommandTimeout as exc:
        res = CommandResult(ex.host, exc.command, 124, "", str(exc), exc.timeout_s)
    res, output, evidence = _collect(ex, run_dir, res)
    watchdog = WatchdogReport.parse(evidence, deadline) if evidence else None
    result, reason = _judge(res, output, watchdog, expect_io)
    return FioRun(
        ex.host,
        job,
        jobfile.text,
        res.command,
        res.exit_status,
        res.stdout,
        res.stderr,
        output,
        res.duration_s,
        deadline,
        result,
        reason,
        watchdog,
        notes,
    )


# the work directory is ours, not a link, and nobody else may write in it: fio reads the checked job
# file from there (as root on a lab), so whoever could rename entries in it could swap the file
_OWN_DIR = '[ -O %s ] && [ ! -L %s ] && [ -z "$(find %s -maxdepth 0 -perm /022)" ]'


def _run_dir(ex: Executor, workdir: str, name: str) -> str:
    """A fresh directory on the host for this run's jobfile, outputs and evidence."""
    res = ex.run(
        "mkdir -p -m 700 %s && " + _OWN_DIR + " && mktemp -d %s",
        *[workdir] * 4,
        f"{workdir}/{name}.XXXXXX",
    )
    if not res.ok:
        raise LabError(
            f"{ex.host}: fio work directory {workdir} is not ours alone (owner, link, g/o write)\n{res}"
        )
    return res.stdout.strip()


def _collect(ex: Executor, run_dir: str, res: CommandResult) -> tuple[CommandResult, str, str]:
    """fio's stdout/stderr files folded into the result, the json+ output and the watchdog evidence."""
    texts = {
        name: _cat(ex, f"{run_dir}/{name}") for name in ("out.json", EVIDENCE_FILE, STDOUT_FILE, STDERR_FILE)
    }
    stdout, stderr = texts[STDOUT_FILE] + res.stdout, texts[STDERR_FILE] + res.stderr
    merged = CommandResult(res.host, res.command, res.exit_status, stdout, stderr, res.duration_s)
    return merged, texts["out.json"], texts[EVIDENCE_FILE]


def _command(run_dir: str, deadline: float, grace: float, clients: Sequence[str]) -> tuple[str, list[object]]:
    """The wrapper command template and its arguments (quoted by the executor)."""
    job = f"{run_dir}/job.fio"
    targets = [a for c in clients for a in (f"--client={c}", job)] or [job]
    # from the run directory: fio writes side files (exec_prerun output …) to its cwd
    template = "cd %s && sh %s %s %s %s fio --output-format=json+ --output=%s" + " %s" * len(targets)
    return template, [
        run_dir,
        f"{run_dir}/watchdog.sh",
        int(deadline + 0.999),
        int(grace + 0.999),
        run_dir,
        f"{run_dir}/out.json",
        *targets,
    ]


def _upload(ex: Executor, run_dir: str, files: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory(prefix="kvgate-fio-") as tmp:
        for name, text in files.items():
            local = Path(tmp) / name
            local.write_text(text)
            ex.put(local, f"{run_dir}/{name}")


def _cat(ex: Executor, path: str) -> str:
    """A small text file on the host, or "" when it does not exist."""
    res = ex.run("cat %s", path)
    return res.stdout if res.ok else ""


def _judge(
    res: CommandResult, output: str, watchdog: WatchdogReport | None, expect_io: bool
) -> tuple[FioResult | None, str | None]:
    """The parsed result and the INVALID reason (None when the run can be trusted)."""
    if watchdog is not None:
        return None, watchdog.reason()
    try:
        result = parse_output(output)
    except FioOutputError as exc:
        return None, f"fio exited {res.exit_status} without a valid JSON result ({exc}): {_fio_text(res, '')}"
    if result.errors:
        return result, f"fio reported {', '.join(result.errors)}: {_fio_text(res, result.prefix)}"
    if res.exit_status != 0:
        return result, f"fio exited {res.exit_status}: {_fio_text(res, result.prefix)}"
    if expect_io and not any(j.read.io_bytes or j.write.io_bytes for j in result.jobs):
        return result, "fio completed without doing any I/O"
    return result, None


def _fio_text(res: CommandResult, prefix: str) -> str:
    return fio_messages(prefix, res.stderr, res.stdout)


def fio_messages(*texts: str, limit: int = 12) -> str:
    """fio's own words, one line after another: what it wrote before the JSON, to stderr, to stdout."""
    lines = [ln.strip() for text in texts for ln in text.splitlines()]
    unique = list(dict.fromkeys(ln for ln in lines if ln))
    return " | ".join(unique[-limit:]) or "(fio printed nothing)"
