"""The engines and soaks a run started, as run.json keeps them: ``engines`` and ``g4_jobs``.

Written as they start (kvgate.orchestration.g3.measure, g4.soak) and checked by the store
like every key of the record; ``kvgate stop`` and a resumed G4 run find their soaks here.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class EngineLaunch(_Row):
    """One engine launch, as kvgate.probes.engines.EngineService records it when the engine is ready:
    command line, environment and files with secrets redacted, version, pid, timings."""

    profile: str
    kind: str
    host: str
    argv: list[str]
    env: dict[str, str]
    env_dropped: list[str] = []  # engine variables of the host's login environment the launch unset
    listening: list[str] | None = None  # TCP address:port the engine listened on once ready; None: not read
    workdir: str
    files: dict[str, str]
    version: str
    pid: int
    log_path: str
    started_at: str
    ready_s: float
    serves_concurrently: bool
    weights_load_s: float | None = None
    notes: str = ""
    kv_cache: str = ""  # where its KV cache lived and how large, as its profile said (the arms' note)
    extra: dict[str, Any] = {}  # the engine kind's own facts


class AgentJob(_Row):
    """A detached agent workload (kvgate.probes.agentctl.RemoteJob)."""

    host: str
    workload: str
    run_id: str
    state_dir: str
    agent: str
    pid: int
    start_ticks: int
    sudo: bool = False


class SoakEngine(_Row):
    pid: int | None
    index: int
    run_dir: str


class G4Job(_Row):
    """A soak the controller follows: its agent job, engines and spec, recorded before the first poll."""

    job: AgentJob
    work_dir: str
    started_at: str
    engines: list[SoakEngine]
    spec: dict[str, Any]  # the agent's soak spec, as sent (the agent checks it)
    integrity: AgentJob | None = None  # the integrity load beside it (None: it could not start, said why)
    integrity_error: str = ""
