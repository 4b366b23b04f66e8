"""An engine deployment's host made ready: its interpreter, the engine installed, the model staged.

G3, G4 and preflight start engines the same way; a ``model: tiny`` deployment gets a
generated tiny model (HF format for vLLM, GGUF for llama.cpp), cached by digest.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from kvgate.base.errors import LabError
from kvgate.base.safefile import own_directory
from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.inventory import EngineDeployment, Host
from kvgate.probes import agentctl
from kvgate.probes.engines import tinyhf
from kvgate.probes.engines.tinymodel import TinyLlamaSpec
from kvgate.probes.loadgen import WORDS
from kvgate.transport import Executor

MODEL_CACHE = Path(os.environ.get("KVGATE_MODEL_CACHE", "/var/tmp/kvgate-models"))


def engine_python(host: Host, dep: EngineDeployment) -> str:
    """The deployment's interpreter, else this controller's own (local) or python3 (ssh)."""
    return dep.python or (sys.executable if host.transport == "local" else "python3")


def describe_model(dep: EngineDeployment, profile: EngineProfile) -> str:
    """What a deployment serves, as its report names it: the model, its shape and KV bytes per token."""
    if dep.model != "tiny":
        stored = dep.state_bytes_per_token or 0
        return f"{dep.model} (the inventory's model); its tier stores {stored / 1e3:.1f} kB per prompt token"
    if profile.tiny_model == "hf":
        return tinyhf.described()
    return TinyLlamaSpec().described() if profile.tiny_model == "gguf" else ""  # stage_model refuses others


def stage_model(
    ex: Executor, host: Host, dep: EngineDeployment, profile: EngineProfile, python: str
) -> tuple[str, int]:
    """The model path on the host and the state bytes per token its tier stores."""
    if dep.model != "tiny":
        assert dep.state_bytes_per_token is not None  # the inventory schema requires it
        return dep.model, dep.state_bytes_per_token
    if profile.tiny_model == "hf":
        return _tiny_hf(ex, host, python), tinyhf.kv_bytes_per_token()
    if profile.tiny_model is None:
        raise LabError(
            f"{ex.host}: {profile.name} serves no tiny model (tiny_model): give the model's path on the host"
        )
    try:
        from kvgate.probes.engines.tinymodel import ensure_tiny_gguf

        local = ensure_tiny_gguf(own_directory(MODEL_CACHE))
    except ImportError as exc:
        raise LabError(
            f"the tiny model needs the engine extra on the controller (`make engine`): {exc}"
        ) from exc
    bpt = TinyLlamaSpec().llama_cpp_state_bytes_per_token
    if host.transport == "local":
        return str(local), bpt
    return _put_model(ex, local), bpt


def _tiny_hf(ex: Executor, host: Host, python: str) -> str:
    """Generate the tiny HF-format Llama on the host with the engine's interpreter (cached by digest)."""
    script = Path(tinyhf.__file__)
    digest = hashlib.sha256(script.read_bytes()).hexdigest()[:12]
    if host.transport == "local":
        where, run = str(own_directory(MODEL_CACHE)), str(script)
    else:
        where = f"{agentctl.remote_home(ex)}/.cache/kvgate/models"
        run = f"{where}/tinyhf-{digest}.py"
        ex.run("mkdir -p %s", where, timeout_s=30, check=True)
        ex.put(script, run)
    out = f"{where}/tiny-llama-hf-{digest}"
    argv = [python, run, out, *WORDS]
    res = ex.run(" ".join(["%s"] * len(argv)), *argv, timeout_s=600)
    if not res.ok:
        raise LabError(f"{ex.host}: generating the tiny HF model with {python} failed\n{res}")
    return out


def _put_model(ex: Executor, local: Path) -> str:
    digest = hashlib.sha256(local.read_bytes()).hexdigest()
    remote = f"{agentctl.remote_home(ex)}/.cache/kvgate/models/{local.name}"
    if agentctl.remote_sha256(ex, remote) != digest:
        ex.run("mkdir -p %s", remote.rsplit("/", 1)[0], timeout_s=30, check=True)
        ex.put(local, remote)
    return remote


def check_engine_installed(ex: Executor, python: str, profile: EngineProfile) -> None:
    """The engine's Python package must import on the host (a clear ERROR instead of a crash log).
    A container's engine is in its image, not on the host: its start says when it cannot run."""
    module = profile.package
    if profile.container is not None or module is None:
        return
    res = ex.run("%s -c %s", python, f"import {module}", timeout_s=120)
    if not res.ok:
        raise LabError(
            f"{ex.host}: {python} cannot import {module} (install the engine: `make engine`)\n{res}"
        )
