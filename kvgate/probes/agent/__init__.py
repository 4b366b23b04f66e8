"""The kvgate agent: stdlib-only workloads shipped to a host as a zipapp (python3 >= 3.8).

Nothing here imports kvgate outside this package or any third-party module
(numpy/safetensors only inside the optional ``safetensors`` loader), so the
zipapp runs on a bare lab host:

    python3 agent.pyz kv-restore --spec spec.json --state-dir DIR

The state directory is the whole contract with the controller (kvgate.probes.agentctl):

- ``pid``: ``<pid> <start ticks>`` (field 22 of /proc/<pid>/stat), checked before any kill;
- ``heartbeat``: unix seconds, rewritten every 2 s while the agent lives;
- ``events.jsonl``: one JSON object per line, flushed per event; every event has
  ``event``, ``seq`` (1, 2, ...), ``t_s`` (since start) and ``time_unix_s``:
    ``start``     workload, agent_version, python_version, hostname, kernel, pid, uid
    ``phase``     phase, and what the phase is about (kv-restore: its layout)
    ``progress``  phase, done_bytes, total_bytes, elapsed_s (+ readers_per_request / loader);
                  at most ~2 per second per phase, plus the phase's first and last count
    ``note``      message (e.g. the page cache could not be dropped)
    ``result``    the same object as result.json
- ``result.json``: the start fields plus ``status`` (ok | invalid-spec | failed |
  cancelled), ``exit_code``, ``elapsed_s``, ``labels`` (echoed from the spec),
  ``error``/``traceback`` when not ok, and the workload's measurements; units are
  in every key (``_bytes``, ``_bytes_per_s``, ``_s``). Each read phase carries
  ``cold`` {drop_caches, device, device_read_bytes, expected_read_bytes,
  device_read_ratio, page_cache_bytes_before/after}, ``direct_*`` (requested,
  engaged, fallback reason) and verification (checksum_algorithm,
  checksums_verified, checksums_failed, verify_ok, corrupt[] with file and
  offset_bytes);
- ``exit_code``: written last (0 ok, 1 failed, 2 spec refused, 143 cancelled).
"""

from __future__ import annotations

from kvgate.probes.agent.sessions import Sessions

AGENT_VERSION = "1"

__all__ = ["Sessions"]
