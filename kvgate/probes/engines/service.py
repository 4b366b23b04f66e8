"""EngineService: one serving engine on one host, as a context-managed service.

Launch runs the profile's argv under ``setsid nohup`` in its own process group,
with a log and a pid file in the run dir on the host. The ready-wait polls the
ready endpoint *from the host* and notices a crash (pid gone → EngineCrashed
with the log tail); it never hangs past the ready timeout. Stop sends SIGTERM
to the group, waits, SIGKILLs, and verifies that nothing in the group is left.

Usage, on a real host::

    from kvgate.transport.local import LocalExecutor
    with EngineService(LocalExecutor(), profile, placement) as engine:
        engine.request("POST", "/v1/completions", body='{"prompt": "hi", "max_tokens": 1}')
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from kvgate.base import redact
from kvgate.configuration.engine_profile import EngineProfile, Launch, fill, tensor_parallel
from kvgate.configuration.inventory import API_PORT_OFFSET
from kvgate.probes.engines import environment, hostcall
from kvgate.probes.engines.errors import EngineCallFailed, EngineCrashed, EngineLeftover, EngineNotReady
from kvgate.probes.engines.hostcall import HttpResult
from kvgate.record import EngineLaunch
from kvgate.transport import CANCEL, Executor, quote

LOG_TAIL_LINES = 40
POLL_S = 0.5
KILL_WAIT_S = 10.0
DEAD_STATES = ("gone", "Z", "X")  # /proc state letters of a process that will not answer again
# the engine's shell writes its pid before it execs the engine: up to 5 s for it to appear
WAIT_FOR_PID = "for i in $(seq 100); do [ -s %s ] && break; sleep 0.05; done; cat %s"


@dataclass(frozen=True)
class Placement:
    """Where and how one engine instance runs on its host."""

    run_dir: str
    model: str
    cache_dir: str
    port: int = 8000
    host: str = "127.0.0.1"
    python: str = "python3"

    def values(self) -> dict[str, str]:
        """The placeholder values for the profile templates."""
        return {**{k: str(v) for k, v in asdict(self).items()}, "api_port": str(self.port + API_PORT_OFFSET)}


class EngineService:
    """Start, probe, reset and stop one engine; ``with`` guarantees the stop."""

    def __init__(
        self,
        ex: Executor,
        profile: EngineProfile,
        placement: Placement,
        *,
        env: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
    ) -> None:
        """``env``: extra environment of this instance (e.g. its GPUs), over the profile's;
        ``args``: appended to the profile's launch command (e.g. the site's tensor parallelism)."""
        self.ex, self.profile, self.placement = ex, profile, placement
        launch = profile.render(placement.values())
        self.launch: Launch = replace(launch, env={**launch.env, **(env or {})}, argv=(*launch.argv, *args))
        found = redact.secrets_in(self.launch.env, self.launch.argv) | redact.secrets_in_data(
            profile.model_dump(by_alias=True)  # its files' data and JSON arguments, at any depth
        )
        redact.remember(found)  # masked wherever stored
        self.pid: int | None = None
        self.record: EngineLaunch | None = None
        self.launches = 0
        self.container_name: str | None = None  # the running container, for a containerized profile
        self.env_dropped: list[str] = []  # the host's engine variables the last launch unset

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> EngineService:
        self.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self, *, ready_timeout_s: float | None = None) -> EngineLaunch:
        """Launch and wait until ready; the record carries restart-to-ready seconds."""
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        t0 = time.monotonic()
        pid = self._launch()
        try:
            self._wait_ready(t0, ready_timeout_s or self.profile.ready_timeout_s)
        except BaseException:
            self.stop()  # a failed start leaves nothing behind either
            raise
        self.record = self._make_record(pid, started_at, time.monotonic() - t0)
        return self.record

    def restart(self) -> float:
        """Stop, start again, and return the restart-to-ready seconds."""
        self.stop()
        return self.start().ready_s

    def make_cold(self) -> tuple[str, float | None]:
        """Empty the engine's GPU and CPU caches the profile's way (``cold_by``), keeping its tier.

        Returns how, and the restart-to-ready seconds where it restarted.
        """
        if self.profile.cold_by == "restart":
            return "restart", self.restart()
        self.reset()
        calls = [
            f"{e.method} {e.path}" + (f" (port +{e.port_offset})" if e.port_offset else "")
            for e in self.profile.reset
        ]
        return f"reset: {', '.join(calls)}", None

    def stop(self) -> None:
        """SIGTERM the process group, wait, SIGKILL, and verify that nothing is left (also after Ctrl-C)."""
        if self.pid is None:
            return
        with CANCEL.cleanup():
            if self.container_name is not None and self.launch.container is not None:
                timeout = int(self.profile.stop_timeout_s)  # the runtime stops the container, then the client
                self.ex.run(
                    "%s stop -t %s %s",
                    self.launch.container[0],
                    timeout,
                    self.container_name,
                    timeout_s=self.profile.stop_timeout_s + 30,
                )
            self._stop_group()

    def _stop_group(self) -> None:
        assert self.pid is not None
        pgid, python = self.pid, self.placement.python
        left = hostcall.group_members(self.ex, python, pgid, "SIGTERM")
        left = self._wait_group_empty(pgid, left, self.profile.stop_timeout_s)
        if left:
            hostcall.group_members(self.ex, python, pgid, "SIGKILL")
            left = self._wait_group_empty(pgid, [pgid], KILL_WAIT_S)
        self.pid = None
        if left:
            raise EngineLeftover(self.ex.host, self.profile.name, f"left processes {left} after SIGKILL")

    # -- calls on the host -----------------------------------------------------------------
    def url(self, path: str, *, port_offset: int = 0) -> str:
        """The engine URL as seen from its own host (an engine bound to every address: via loopback)."""
        host = "127.0.0.1" if self.placement.host == "0.0.0.0" else self.placement.host
        return f"http://{host}:{self.placement.port + port_offset}{path}"

    def request(
        self,
        method: str,
        path: str,
        *,
        body: str = "",
        timeout_s: float = 600.0,
        stream: bool = False,
        port_offset: int = 0,
    ) -> HttpResult:
        """One HTTP call to the engine, made on the engine host; a dead engine raises EngineCrashed."""
        res = hostcall.http(
            self.ex,
            self.placement.python,
            method,
            self.url(path, port_offset=port_offset),
            body=body,
            timeout_s=timeout_s,
            stream=stream,
            scratch_dir=self.placement.run_dir,
        )
        if res.status == 0:
            self.ensure_alive()
        return res

    def ensure_alive(self) -> None:
        """Raise EngineCrashed (with the log tail) when the engine process is gone."""
        if self.pid is None:
            raise EngineCrashed(self.ex.host, self.profile.name, "is not running")
        state, _ = hostcall.probe(self.ex, self.placement.python, self.pid, self.url(self.profile.ready.path))
        if state in DEAD_STATES:
            raise EngineCrashed(self.ex.host, self.profile.name, f"died (pid {self.pid})", self.log_tail())

    def reset(self) -> list[HttpResult]:
        """Call every reset endpoint of the profile; a failed reset raises EngineCallFailed."""
        results = []
        ranks = tensor_parallel(self.launch.argv)
        for ep in self.profile.reset:
            for rank in range(ranks if ep.each_rank else 1):
                offset = ep.port_offset + rank
                res = self.request(
                    ep.method, ep.path, body=ep.body, timeout_s=ep.timeout_s, port_offset=offset
                )
                if not res.ok:
                    where = f"{ep.method} {ep.path}" + (f" (port +{offset})" if offset else "")
                    raise EngineCallFailed(
                        self.ex.host, self.profile.name, f"reset {where}: {res.status} {res.error}"
                    )
                results.append(res)
        return results

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The last lines of the current launch's log."""
        return self.ex.run("tail -n %s %s", lines, self.log_path, timeout_s=30).stdout.rstrip()

    def read_log(self) -> str:
        """The whole log of the current launch."""
        return self.ex.run("cat %s", self.log_path, timeout_s=60).stdout

    def count_tokens(self, path: str, field: str, prompt: str) -> int | None:
        """The prompt's length by the engine's own tokenizer endpoint; None when it answers non-2xx."""
        res = self.request("POST", path, body=json.dumps({field: prompt}), timeout_s=60)
        if not res.ok:
            return None
        try:
            return len(res.json()["tokens"])
        except (ValueError, KeyError, TypeError):
            msg = f"{path} answered no token list (HTTP {res.status}: {res.body[:200]!r})"
            raise EngineCallFailed(self.ex.host, self.profile.name, msg) from None

    def kv_dir_path(self) -> str:
        """The profile's KV directory on the host, filled in for this placement."""
        if self.profile.cache is None:
            raise EngineCallFailed(self.ex.host, self.profile.name, "has no external KV tier (cache: null)")
        return fill(self.profile.cache.kv_dir, self.placement.values())

    def kv_dir_bytes(self) -> int:
        """Bytes under the profile's KV directory on the host (0 when it does not exist yet)."""
        kv_dir = self.kv_dir_path()
        out = self.ex.run("du -sb %s 2>/dev/null || echo 0", kv_dir, timeout_s=120).stdout.split()
        return int(out[0]) if out else 0

    @property
    def evidence_target(self) -> tuple[int, str]:
        """(pid, scope) whose reads are this engine's (kvgate.probes.evidence.engines).

        On the host: the session setsid started (the API server and every process it made).
        In a container: the container's cgroup, found from its init process.
        """
        if self.container_name is None:
            assert self.pid is not None, "the engine is not running"
            return self.pid, "session"
        runtime = self.launch.container[0] if self.launch.container else "docker"
        res = self.ex.run(
            "%s inspect -f {{.State.Pid}} %s", runtime, self.container_name, timeout_s=60, check=True
        )
        return int(res.stdout.strip()), "cgroup"

    @property
    def log_path(self) -> str:
        return f"{self.placement.run_dir}/engine-{self.launches}.log"

    # -- internals -------------------------------------------------------------------------
    def _launch(self) -> int:
        """Write config files, start the engine detached, and return its pid (= its pgid)."""
        run_dir, pid_file = self.placement.run_dir, f"{self.placement.run_dir}/engine.pid"
        self.ex.run(
            "mkdir -p %s %s %s && rm -f %s",
            run_dir,
            self.placement.cache_dir,
            self.launch.workdir,
            pid_file,
            check=True,
        )
        self._put_files()
        self.launches += 1
        env_args, argv = [f"{k}={v}" for k, v in self.launch.env.items()], list(self.launch.argv)
        if self.launch.container is not None:  # the environment goes into the container, not the client
            argv, env_args = self._in_container(argv, env_args), []
        unset = environment.unset_options(self._strays())
        inner = quote(
            "echo $$ > %s; exec nohup env" + " %s" * len(unset) + " --" + " %s" * (len(env_args) + len(argv)),
            pid_file,
            *unset,
            *env_args,
            *argv,
        )
        try:
            out = self.ex.run(
                "cd %s && (setsid sh -c %s > %s 2>&1 < /dev/null &) && " + WAIT_FOR_PID,
                self.launch.workdir,
                inner,
                self.log_path,
                pid_file,
                pid_file,
                timeout_s=30,
                check=True,
            )
        except BaseException:  # Ctrl-C or SIGTERM mid-launch: the engine may run without our knowing
            with contextlib.suppress(Exception):  # the launch's own error is the one to tell
                self._stop_unannounced(pid_file)
            raise
        self.pid = int(out.stdout.split()[0])
        return self.pid

    def _strays(self) -> list[str]:
        """The host's engine variables this launch drops (none for a container: it inherits nothing)."""
        if self.launch.container is not None:
            self.env_dropped = []
        else:
            names = environment.host_variable_names(self.ex)
            self.env_dropped = environment.strays(names, self.launch.env)
        return self.env_dropped

    def _stop_unannounced(self, pid_file: str) -> None:
        """Stop an engine whose launch was cut before it told its pid: its pid file tells it."""
        with CANCEL.cleanup():
            out = self.ex.run(WAIT_FOR_PID + " 2>/dev/null || true", pid_file, pid_file, timeout_s=30)
        if out.stdout.strip().isdigit():
            self.pid = int(out.stdout)
            self.stop()

    def _in_container(self, argv: list[str], env_args: list[str]) -> list[str]:
        """The runtime's attached ``run`` of the profile's image with ``argv``, named for this launch."""
        assert self.launch.container is not None
        assert self.profile.container is not None
        self.container_name = f"kvgate-{self.placement.port}-{secrets.token_hex(4)}"
        environment = [a for e in env_args for a in ("-e", e)]
        return [
            *self.launch.container,
            "--name",
            self.container_name,
            "-w",
            self.launch.workdir,
            *environment,
            self.profile.container.image,
            *argv,
        ]

    def _put_files(self) -> None:
        for name, text in self.launch.files.items():
            with tempfile.NamedTemporaryFile("w", delete=False) as fh:
                fh.write(text)
            try:
                self.ex.put(Path(fh.name), f"{self.placement.run_dir}/{name}")
            finally:
                Path(fh.name).unlink()

    def _wait_ready(self, t0: float, timeout_s: float) -> None:
        """Poll the ready endpoint until 200; raise on a crash or at the deadline."""
        assert self.pid is not None
        url = self.url(self.profile.ready.path)
        while True:
            state, status = hostcall.probe(self.ex, self.placement.python, self.pid, url)
            if state in DEAD_STATES:
                raise EngineCrashed(
                    self.ex.host,
                    self.profile.name,
                    f"exited during start-up (pid {self.pid})",
                    self.log_tail(),
                )
            if status == 200:
                return
            if time.monotonic() - t0 > timeout_s:
                msg = f"not ready after {timeout_s:g} s ({url} last answered {status or 'nothing'})"
                raise EngineNotReady(self.ex.host, self.profile.name, msg, self.log_tail())
            time.sleep(POLL_S)

    def _wait_group_empty(self, pgid: int, left: list[int], timeout_s: float) -> list[int]:
        deadline = time.monotonic() + timeout_s
        while left and time.monotonic() < deadline:
            time.sleep(0.2)
            left = hostcall.group_members(self.ex, self.placement.python, pgid)
        return left

    def _make_record(self, pid: int, started_at: str, ready_s: float) -> EngineLaunch:
        """The record kept in the run: command line, environment and files with secrets redacted."""
        p, launch = self.profile, self.launch
        files = {name: redact.text(text) for name, text in launch.files.items()}
        return EngineLaunch(
            profile=p.name,
            kind=p.kind,
            host=self.ex.host,
            argv=list(redact.argv(launch.argv)),
            env=redact.env(launch.env),
            env_dropped=list(self.env_dropped),
            listening=self._listening(pid),
            workdir=launch.workdir,
            files=files,
            version=self._version(),
            pid=pid,
            log_path=self.log_path,
            started_at=started_at,
            ready_s=ready_s,
            serves_concurrently=p.serves_concurrently,
            notes=p.notes,
            kv_cache=kv_cache_said(p),
            weights_load_s=self._weights_load_s(),
        )

    def _listening(self, pid: int) -> list[str] | None:
        """The ports the engine opened, once ready; None in a container (not the group's processes)."""
        return (
            None
            if self.container_name is not None
            else hostcall.listening(self.ex, self.placement.python, pid)
        )

    def _weights_load_s(self) -> float | None:
        """The weight-load time the engine logged during this start (the last match in its log)."""
        if not self.profile.weights_log:
            return None
        log = self.ex.run("tail -c 4000000 %s", self.log_path, timeout_s=30).stdout
        found = re.findall(self.profile.weights_log, log)
        return float(found[-1]) if found else None

    def _version(self) -> str:
        argv = self.launch.version_argv
        if not argv:
            return "unknown (profile has no version_cmd)"
        if self.container_name is not None and self.launch.container is not None:  # inside the running one
            argv = (self.launch.container[0], "exec", self.container_name, *argv)
        res = self.ex.run(" ".join(["%s"] * len(argv)), *argv, timeout_s=120, env=self.launch.env or None)
        return res.stdout.strip() if res.ok else f"unknown (exit {res.exit_status}: {res.tail(1)})"


def settled_kv_bytes(
    engines: Sequence[EngineService], *, at_least: int = 0, quiet_s: float = 2.0, timeout_s: float = 120.0
) -> int:
    """The engines' KV directories in bytes once their writes have drained.

    Tiers write asynchronously (LMCache's disk worker, vLLM's fs-tier threads, SGLang's
    host→storage backup): a restart right after the last response would lose writes in
    flight. Returns as soon as the total reaches ``at_least`` (the predicted state bytes;
    0: unknown), else once it has not changed for ``quiet_s``, else after ``timeout_s``.
    """
    deadline, last, since = time.monotonic() + timeout_s, -1, time.monotonic()
    while True:
        total = sum(e.kv_dir_bytes() for e in engines)
        now = time.monotonic()
        if total != last:
            last, since = total, now
        if (at_least and total >= at_least) or now - since >= quiet_s or now >= deadline:
            return total
        time.sleep(0.5)


def kv_cache_said(p: EngineProfile) -> str:
    """'a tier on the storage, 4.29 GB: one diskcache entry per …' or, with no tier, the profile's own
    description (where it says its RAM cache's bound): a capacity arm is read with its cache's size."""
    if p.cache is None:
        return f"no tier on the storage: {' '.join(p.description.split())}"
    size = f", {p.cache.capacity_bytes / 1e9:.3g} GB" if p.cache.capacity_bytes else ""
    return f"a tier on the storage{size}: {' '.join(p.cache.description.split())}"


__all__ = ["EngineService", "Placement", "kv_cache_said", "settled_kv_bytes"]
