"""Serving engines as profiles (YAML data) driven by a context-managed service.

service.py        EngineService: launch in its own process group, ready-wait that notices a crash,
                  stop and verify nothing of the group is left; Placement; the launch it records
                  is kvgate.record's EngineLaunch
environment.py    the engine's environment is kvgate's: the host's stray VLLM_*, LMCACHE_*, SGLANG_*,
                  *_VISIBLE_DEVICES are unset at launch and named in the launch record
hostcall.py       stdlib probes run on the engine host (HTTP, liveness, process group)
metrics.py        Prometheus text: parse, snapshot, diff over a measured window
latency.py        the engine's own TTFT, ITL and TPOT over a load, from its /metrics histograms
lmcache.py        LMCache's CPU pool stages every disk restore: whether it holds a load's state per rank
read_pool.py      whether the installed LMCache has the parallel disk-read pool R1's parallel reader needs
model_staging.py  an engine deployment's host made ready: its interpreter, the engine installed, the model
                  staged (a generated tiny model for ``model: tiny``)
tinymodel.py      a tiny random-weight Llama GGUF generated locally (llama.cpp)
tinyhf.py         a tiny random-weight Llama in Hugging Face format, generated on the engine host (vLLM)
errors.py         EngineCrashed, EngineNotReady, EngineLeftover, EngineCallFailed: LabErrors, so ERROR

The profiles are data: kvgate/configuration/engine_profile.py (EngineProfile: argv template, env,
endpoints, KV tier, caveats); EngineProfile and its loaders are offered here too.
"""

from kvgate.probes.engines.errors import EngineCallFailed
from kvgate.probes.engines.latency import engines_latency, histograms
from kvgate.probes.engines.lmcache import staging_shortfall
from kvgate.probes.engines.metrics import Histogram, MetricsError, Snapshot, diff, scrape
from kvgate.probes.engines.model_staging import (
    check_engine_installed,
    describe_model,
    engine_python,
    stage_model,
)
from kvgate.probes.engines.read_pool import read_pool_missing, reads_in_parallel
from kvgate.probes.engines.service import EngineService, Placement, settled_kv_bytes
from kvgate.probes.engines.tinyhf import kv_bytes_per_token as tiny_hf_kv_bytes_per_token
from kvgate.probes.engines.tinymodel import TinyLlamaSpec

__all__ = [
    "EngineCallFailed",
    "EngineService",
    "Histogram",
    "MetricsError",
    "Placement",
    "Snapshot",
    "TinyLlamaSpec",
    "check_engine_installed",
    "describe_model",
    "diff",
    "engine_python",
    "engines_latency",
    "histograms",
    "read_pool_missing",
    "reads_in_parallel",
    "scrape",
    "settled_kv_bytes",
    "stage_model",
    "staging_shortfall",
    "tiny_hf_kv_bytes_per_token",
]
