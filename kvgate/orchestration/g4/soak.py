"""Soak one engine deployment on one host: start its engines, hand the soak to the host, follow it.

The engines start detached (``setsid``, as in G3) and the soak runs on the host as an
agent workload (:mod:`kvgate.probes.agent.soak`), so the controller only polls its events:
every window is stored in the run directory as it arrives. The job and the engines
are recorded in run.json (``g4_jobs``) before the first poll, so after a dropped
connection, a crash or Ctrl-C (which detaches: the soak runs on to its end and then
stops the engines itself), ``kvgate run g4 --resume RUN`` reattaches to the same job
instead of starting another one.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import asdict
from typing import Any

from kvgate.base.errors import CommandTimeout, Interrupted, LabError, TransportError
from kvgate.configuration.engine_profile import tensor_parallel
from kvgate.configuration.gateconfig import GateConfig
from kvgate.orchestration.g4 import health, integrity
from kvgate.orchestration.g4.outcome import Soaked, SoakResult, measure
from kvgate.orchestration.g4.plan import counts_hits_in_log, soaked_profile
from kvgate.probes import agentctl
from kvgate.probes.engines import (
    EngineCallFailed,
    EngineService,
    Placement,
    check_engine_installed,
    describe_model,
    engine_python,
    stage_model,
)
from kvgate.probes.hostevidence import HostEvidence
from kvgate.probes.loadgen import PromptSpec, fit_tokens_per_word
from kvgate.probes.scratch import ScratchDir, checked, create, remove, run_directory
from kvgate.record import AgentJob, G4Job, RunStore, SoakEngine
from kvgate.transport import Executor

ENGINE_STOP_S = 90.0  # the agent stops its engines: SIGTERM, SIGKILL after 15 s each
LOST_CONTACT_S = 900.0  # polls failing on the link this long: the controller gives up (the soak runs on)


class SoakRun:
    """Start (or reattach to) one deployment's soak, follow it to the end, measure it."""

    def __init__(
        self,
        ex: Executor,
        config: GateConfig,
        *,
        host: str,
        name: str,
        store: RunStore,
        notify: Any,
    ) -> None:
        inv = config.inventory.inventory
        self.ex, self.config, self.inv, self.host, self.name = ex, config, inv, host, name
        self.profile, self.store, self._notify = config.g4, store, notify
        self.dep = inv.engines[name]
        self.tier = soaked_profile(config, name)
        self.python = engine_python(inv.hosts[host], self.dep)
        self.key = f"{host}/{name}"
        self.windows: dict[int, dict[str, Any]] = {}
        taken = health.stored(store.path, host, name)
        self.last_snapshot = taken[-1]["time_unix_s"] if taken else 0.0

    def notify(self, event: str) -> None:
        self._notify(f"g4 {self.name}: {event}")

    def run(self) -> SoakResult:
        """The whole soak; a stored job of this run is reattached to, not started again."""
        record = self.store.run_record()
        state = record.g4_jobs.get(self.key)
        if state is None and record.g4_stopped:
            raise LabError(f"{self.key}: not soaked: the run was stopped (kvgate stop, {record.g4_stopped})")
        if state is None:
            state = self._start()
        else:
            self.notify(f"reattaching to the soak started {state.started_at}")
        engines = [self._adopt(state.work_dir, e) for e in state.engines]
        job = agentctl.RemoteJob(**state.job.model_dump())
        try:
            outcome = self._follow(job)
            checked = self._follow_integrity(state)
            self._snapshot()  # the end
        except Interrupted:
            self.notify("detached: the soak runs on to its end on the host; --resume RUN reattaches")
            raise
        except (TransportError, CommandTimeout) as exc:  # the link, not the soak: leave it running
            raise LabError(
                f"{self.host}: lost contact with the soak for {LOST_CONTACT_S:.0f} s ({exc}); it runs on "
                "on the host: `kvgate run g4 --resume RUN` reattaches, `kvgate stop RUN` ends it"
            ) from exc
        except LabError:
            self._finish(engines, state)
            raise
        tails = self._finish(engines, state, outcome)
        per_rank = self.tier.cache.capacity_bytes if self.tier.cache is not None else None
        soaked = Soaked(
            self.ex,
            self.store,
            self.host,
            self.name,
            self.tier,
            self.profile,
            sudo=self.inv.hosts[self.host].sudo,
            volume=self.dep.volume,
            engines=len(state.engines),
            cap_bytes=None if per_rank is None else per_rank * tensor_parallel(self.dep.engine_args),
            windows=tuple(self.windows[i] for i in sorted(self.windows)),
            outcome=outcome,
            tails=tails,
            checked=checked,
        )
        return measure(soaked)

    # -- start ----------------------------------------------------------------------------------
    def _start(self) -> G4Job:
        check_engine_installed(self.ex, self.python, self.tier)
        model, _ = stage_model(self.ex, self.inv.hosts[self.host], self.dep, self.tier, self.python)
        vol = self.inv.volumes[self.dep.volume]
        run = run_directory(vol, gate="g4", host=self.host, run=self.store.path.name)
        work = self._work_dir(f"{run}/{self.name}")
        engines: list[EngineService] = []
        try:
            create(self.ex, work, fresh=True)
            for i, env in enumerate(self.dep.instance_envs):
                self.notify(f"starting engine {i + 1}/{len(self.dep.instance_envs)} ({self.tier.name})")
                where = self._placement(work.path, model, i)
                eng = EngineService(self.ex, self.tier, where, env=env, args=self.dep.engine_args)
                engines.append(eng)
                eng.start()
            state = self._launch(engines, model, work.path)
            state = self._start_integrity(state, work.path)
            self._snapshot()  # the start
        except BaseException:
            for eng in engines:
                eng.stop()
            remove(self.ex, work, parents=2)  # and kvgate-g4/<host>-<run> once empty
            raise
        self.store.merge_meta(g4_jobs={self.key: state.model_dump()})
        return state

    def _start_integrity(self, state: G4Job, work: str) -> G4Job:
        """The integrity load beside the soak, in the work directory; a start that failed is kept as why."""
        spec = integrity.spec(self.profile, soak_state_dir=state.job.state_dir, duration_s=self._timeout_s())
        try:
            job = integrity.start(self.ex, self._work_dir(f"{work}/integrity"), spec, python=self.python)
        except LabError as exc:
            self.notify(f"the integrity load did not start: {exc}")
            return state.model_copy(update={"integrity_error": f"it did not start: {exc}"})
        i = self.profile.integrity
        self.notify(f"integrity load started: a cycle every {i.cycle_s} s, at most {i.max_bytes_per_s} B/s")
        return state.model_copy(update={"integrity": AgentJob(**asdict(job))})

    def _follow_integrity(self, state: G4Job) -> integrity.Followed:
        """The integrity job to its end (it ends after its cycle in progress, once the soak has)."""
        job = agentctl.RemoteJob(**state.integrity.model_dump()) if state.integrity else None
        i = self.profile.integrity
        timeout = i.cycle_s + 4 * i.bytes_per_cycle / i.max_bytes_per_s + ENGINE_STOP_S
        return integrity.follow(
            self.ex, job, timeout_s=timeout, poll_s=self.profile.poll_s, why=state.integrity_error
        )

    def _work_dir(self, path: str) -> ScratchDir:
        """The deployment's work directory on its volume, once the scratch check passed it."""
        return checked(self.ex, self.inv.volumes[self.dep.volume], path)

    def _placement(self, work: str, model: str, i: int) -> Placement:
        """Engine instance ``i``: its own run and cache directories, its slot's port (as in G3)."""
        base = f"{work}/engine-{i}"
        return Placement(
            run_dir=f"{base}/run",
            model=model,
            cache_dir=f"{base}/cache",
            port=self.dep.engine_port(2 * i),
            python=self.python,
        )

    def _launch(self, engines: list[EngineService], model: str, work: str) -> G4Job:
        """Calibrate the prompts on the first engine, then start the soak job on the host."""
        first = engines[0]
        models = first.request("GET", "/v1/models", timeout_s=30)
        try:
            model_id = str(models.json()["data"][0]["id"])
        except (ValueError, KeyError, IndexError, TypeError):
            raise EngineCallFailed(
                self.host,
                self.tier.name,
                f"GET /v1/models names no model (HTTP {models.status}: {models.body[:200]!r})",
            ) from None
        volume = HostEvidence(self.ex, python=self.python).resolve(work)
        p, load = self.profile, self.profile.load
        salt = f"{self.store.path.name}/{self.key}/{secrets.token_hex(3)}"
        spec = {
            "urls": [e.url("") for e in engines],
            "model": model_id,
            "duration_s": p.duration_s,
            "window_s": p.window_s,
            "min_windows": p.needed_windows,  # windows overrun on a busy host: never too few to judge
            "concurrency": load.concurrency,
            "prompt_tokens": load.prompt_tokens,
            "max_tokens": load.max_tokens,
            "tokens_per_word": self._tokens_per_word(first),
            "reuse": load.reuse,
            "documents": load.documents,
            "prefix_share": load.prefix_share,
            "fixed_output": self.tier.fixed_output,
            "request_timeout_s": load.request_timeout_s,
            "output_tokens_from": "usage" if self.tier.streams_usage else "chunks",
            "canary_prompts": p.canary.prompts,
            "canary_max_tokens": p.canary.max_tokens,
            "logprobs": p.canary.logprobs,
            "salt": salt,
            "engines": [self._sampled(e) for e in engines],
            "volume": volume.to_json(),
            "stop_engines_at_end": True,
            "labels": {"deployment": self.name, "model": model},
        }
        job = agentctl.start(self.ex, "soak", spec)
        self.notify(f"soak started on the host: {p.duration_s} s in {p.window_s}-s windows")
        records = [e.record.model_dump() for e in engines if e.record is not None]
        self.store.merge_meta(engines={self.key: {f"soak-{i}": r for i, r in enumerate(records)}})
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        placed = [SoakEngine(pid=e.pid, index=i, run_dir=e.placement.run_dir) for i, e in enumerate(engines)]
        return G4Job(
            job=AgentJob(**asdict(job)), work_dir=work, started_at=started, engines=placed, spec=spec
        )

    def _sampled(self, eng: EngineService) -> dict[str, Any]:
        """What the soak samples of one engine: its process group (and container), tier directory, hits."""
        cache = self.tier.cache
        kv_dir = eng.kv_dir_path() if cache is not None else None
        metrics = eng.url(self.tier.metrics.path) if self.tier.metrics else None
        return {
            "pgid": eng.pid,
            "container_pid": eng.evidence_target[0] if eng.container_name is not None else None,
            "cache_dir": kv_dir,
            "metrics_url": metrics,
            "hit_counter": self.tier.hit_counter,
            "hit_log": eng.log_path if counts_hits_in_log(self.tier) else None,
        }

    def _tokens_per_word(self, eng: EngineService) -> float:
        """Tokens per prompt word of this engine's tokenizer (its profile's tokenize). When it counts
        nothing, the soak's prompts cannot be sized as its profile says: the deployment stops, saying why."""
        tok = self.tier.tokenize
        spec = PromptSpec(salt=f"{self.key}/calibrate", prompt_tokens=4 * self.profile.load.prompt_tokens)
        n = eng.count_tokens(tok.path, tok.field, spec.prompt(0))
        if not n:
            why = f"{tok.path} counted no tokens (HTTP error or an empty list): prompts cannot be sized"
            raise EngineCallFailed(self.host, self.tier.name, why)
        return fit_tokens_per_word(spec, n)

    # -- follow ---------------------------------------------------------------------------------
    def _follow(self, job: agentctl.RemoteJob) -> dict[str, Any]:
        """Poll the job to its end, storing every window as it arrives; the agent's result.

        A lost link is retried for LOST_CONTACT_S; a soak past its duration by more than
        the last window's worst case, or whose agent hangs (stale heartbeat), is cancelled.
        """
        timeout = self._timeout_s()
        try:
            return agentctl.wait(
                self.ex,
                job,
                self._on_event,
                timeout_s=timeout,
                interval_s=self.profile.poll_s,
                tolerate_s=LOST_CONTACT_S,
            )
        except agentctl.JobOverran:
            agentctl.cancel(self.ex, job, grace_s=ENGINE_STOP_S)
            raise LabError(f"{self.host}: the soak overran {timeout:.0f} s and was cancelled") from None
        except (TransportError, CommandTimeout):
            raise
        except LabError:  # the agent died or hangs: make sure it is gone before its engines are stopped
            agentctl.cancel(self.ex, job, grace_s=ENGINE_STOP_S)
            raise

    def _snapshot(self) -> None:
        """Device health now, kept as an artifact (so a resumed run judges it too)."""
        snap = health.snapshot(self.ex, host=self.host, sudo=self.inv.hosts[self.host].sudo)
        self.store.artifact(self.host, health.artifact_name(self.name, snap), json.dumps(snap))
        self.last_snapshot = snap["time_unix_s"]

    def _timeout_s(self) -> float:
        """How long the soak may take: its duration (or its needed windows), its last window, the stop."""
        load = self.profile.load
        last_window_s = self.profile.window_s + load.request_timeout_s * (1 + self.profile.canary.prompts)
        soak_s = max(self.profile.duration_s, self.profile.needed_windows * last_window_s)
        return soak_s + last_window_s + ENGINE_STOP_S

    def _on_event(self, event: dict[str, Any]) -> None:
        if event.get("event") == "note":
            self.notify(str(event.get("message")))
        if event.get("event") != "window" or event["index"] in self.windows:
            return
        self.windows[event["index"]] = event
        self.store.artifact(
            self.host, f"g4/{self.name}/windows/w{event['index']:05d}.json", json.dumps(event)
        )
        if event["end_unix_s"] - self.last_snapshot >= self.profile.health.snapshot_s:
            self._snapshot()  # every snapshot_s (an hour on a lab)
        s = event["summary"]
        self.notify(
            f"window {event['index'] + 1}/{self.profile.planned_windows}: {s['completed']} ok, "
            f"{s['failed']} failed, TTFT p50 {_ms(s['p50_ttft_ms'])}, RSS {event['rss_kib'] // 1024} MiB"
        )

    def _adopt(self, work_dir: str, e: SoakEngine) -> EngineService:
        """The service of an engine this run started (maybe by an earlier controller), to stop it."""
        i = e.index  # its instance's environment and arguments, so their secrets stay redacted
        env = self.dep.instance_envs[i] if i < len(self.dep.instance_envs) else {}
        eng = EngineService(
            self.ex, self.tier, self._placement(work_dir, "", i), env=env, args=self.dep.engine_args
        )
        eng.pid, eng.launches = e.pid, 1
        return eng

    def _finish(
        self, engines: list[EngineService], state: G4Job, outcome: dict[str, Any] | None = None
    ) -> list[str]:
        """Keep the engines' logs, make sure none is left running, remove the work directory.

        Every step runs even when one fails (the first failure is raised at the end). Engines
        the agent reported stopped (``engines_left: []``) are not signalled again: after a long
        detach their process group ids may belong to someone else.
        """
        stopped_by_agent = outcome is not None and outcome.get("engines_left") == []
        tails: list[str] = []
        errors: list[LabError] = []
        if state.integrity is not None:  # ended by now, unless the soak broke: then it is stopped here
            try:
                agentctl.cancel(self.ex, agentctl.RemoteJob(**state.integrity.model_dump()), grace_s=60)
            except LabError as exc:
                errors.append(exc)
        for i, eng in enumerate(engines):
            try:
                log = self.ex.run("tail -c 2000000 %s 2>/dev/null", eng.log_path, timeout_s=60).stdout
                if log:  # a second reattach (work directory gone) keeps the log stored the first time
                    self.store.artifact(self.host, f"g4/{self.name}/engine-{i}.log", log)
                tails.append("\n".join(log.splitlines()[-20:]))
                if not stopped_by_agent:
                    eng.stop()  # verifies that nothing of it is left
            except LabError as exc:
                errors.append(exc)
        try:  # the stored path is checked again: an edited run.json cannot point the removal elsewhere
            remove(self.ex, self._work_dir(state.work_dir), parents=2)
        except LabError as exc:
            errors.append(exc)
        if errors:
            raise errors[0]
        return tails


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} ms"


def measure_soak(
    ex: Executor, config: GateConfig, *, host: str, name: str, store: RunStore, notify: Any
) -> SoakResult:
    """Soak one deployment on one host (see the module docstring)."""
    result = SoakRun(ex, config, host=host, name=name, store=store, notify=notify).run()
    result.model = describe_model(config.inventory.inventory.engines[name], result.tier)
    return result
