"""Serving engines as profiles (YAML data) driven by a context-managed service.

profile.py    EngineProfile: argv template, env, endpoints, KV tier, caveats
service.py    EngineService: launch in its own process group, ready-wait, stop
hostcall.py   stdlib probes run on the engine host (HTTP, liveness, process group)
metrics.py    Prometheus text: parse, snapshot, diff over a measured window
tinymodel.py  a tiny random-weight Llama GGUF generated locally
errors.py     EngineCrashed, EngineNotReady, EngineLeftover, EngineCallFailed
"""

from kvgate.configuration.engine_profile import EngineKind, EngineProfile, load_profile, load_profiles
from kvgate.probes.engines.errors import (
    EngineCallFailed,
    EngineCrashed,
    EngineError,
    EngineLeftover,
    EngineNotReady,
)
from kvgate.probes.engines.service import EngineRecord, EngineService, Placement

__all__ = [
    "EngineCallFailed",
    "EngineCrashed",
    "EngineError",
    "EngineKind",
    "EngineLeftover",
    "EngineNotReady",
    "EngineProfile",
    "EngineRecord",
    "EngineService",
    "Placement",
    "load_profile",
    "load_profiles",
]
