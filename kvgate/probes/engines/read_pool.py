"""Whether the installed LMCache reads a request's disk chunks in parallel: R1's parallel reader needs it.

R1's parallel reader is LMCache's local-disk tier with ``extra_config.disk_io_threads: 8``. Since
LMCache PR #3961 that key also sizes the pool ``LocalDiskBackend._read_thread_pool`` through which
``batched_get_blocking`` reads a request's chunks concurrently; an LMCache without that pool reads
them one after another whatever the key says, so the "parallel" reader is serial and R1 compares
nothing about the storage. The probe runs the engine's own interpreter on its host and looks for the
pool in the installed ``LocalDiskBackend``.
"""

from __future__ import annotations

import json

from kvgate.configuration.engine_profile import EngineProfile
from kvgate.probes.engines.lmcache import lmcache_config
from kvgate.transport import Executor

POOL = "_read_thread_pool"  # LocalDiskBackend's parallel read pool (LMCache PR #3961)
_PROBE = r"""
import inspect, json, sys
try:
    import lmcache
    from lmcache.v1.storage_backend.local_disk_backend import LocalDiskBackend
    source = inspect.getsource(LocalDiskBackend)
    out = {"pool": sys.argv[1] in source, "version": getattr(lmcache, "__version__", "?")}
except Exception as e:
    out = {"error": f"{type(e).__name__}: {e}"}
print(json.dumps(out))
"""


def reads_in_parallel(profile: EngineProfile) -> bool:
    """Whether the profile's LMCache disk tier asks for more than one disk I/O thread."""
    config = lmcache_config(profile) or {}
    return int((config.get("extra_config") or {}).get("disk_io_threads", 1)) > 1


def read_pool_missing(ex: Executor, python: str, profile: EngineProfile) -> str | None:
    """Why ``profile`` cannot read in parallel with the LMCache ``python`` imports; None: it can."""
    if not reads_in_parallel(profile):
        return None
    res = ex.run("%s -c %s %s", python, _PROBE, POOL, timeout_s=300)
    lines = res.stdout.strip().splitlines()
    found = json.loads(lines[-1]) if res.ok and lines else {"error": res.tail(2) or f"exit {res.exit_status}"}
    if "error" in found:
        return f"{profile.name}: LMCache cannot be inspected with {python} on {ex.host}: {found['error']}"
    if found["pool"]:
        return None
    return (
        f"{profile.name}: the installed LMCache {found['version']} has no parallel disk-read pool "
        f"(LocalDiskBackend.{POOL}, LMCache PR #3961): its disk_io_threads do not read a request's "
        "chunks in parallel, so the parallel reader reads serially and R1 says nothing about storage"
    )
