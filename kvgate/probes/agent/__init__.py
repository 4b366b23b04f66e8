"""The kvgate agent: stdlib-only workloads shipped to a host as a zipapp (python3 >= 3.8).

Nothing here imports kvgate outside this package or any third-party module
(numpy/safetensors only inside the optional ``safetensors`` loader), so the
zipapp runs on a bare lab host:

    python3 agent.pyz kv-restore --spec spec.json --state-dir DIR

    __main__.py        the command line: one workload, its state in a directory the controller polls
    spec.py            a workload spec (plain JSON) validated, naming the bad key; the run directory owned
    events.py          the state directory: events.jsonl, result.json, exit_code, pid and heartbeat
    kv_restore.py      kv-restore: C requests' KV prefixes written as tier files, made cold, restored with
                       P readers each (P=1 R1's serial read path, P>1 its parallel one)
    kv_layout.py       the on-disk layouts of an emulated KV tier: LMCache chunk files or vLLM block files
    model_load.py      model-load: a sharded safetensors model generated, then loaded cold by each loader
    model_files.py     that model generated on the target, its manifest (shards, checksums, tensor spans)
    safetensors_io.py  real safetensors files: header length, JSON header, tensor bytes
    checkpoint.py      checkpoint: R ranks write their shard with fsync, then a cold, verified read-back
    sessions.py        sessions of turns over shared documents (G3's capacity arms), beside the engine
    soak.py            the G4 soak: windows of mixed load, a correctness canary, samples; for hours
    integrity.py       integrity: beside the soak, fio (crc32c), checkpoints and KV chunks written and read
                       back by checksum every cycle; a mismatch or I/O error named by file, offset, time
    integrity_fio.py   its fio part: the previous cycle's file verified at rest, then written and verified
    soak_sample.py     what the soak samples after every window: memory, tier bytes, device I/O, hits
    engine_log.py      the cache hits an engine without a hit counter logs (llama-cpp-python)
    cold.py            the cold read windows: the page cache dropped, the volume's reads counted
    content.py         deterministic file content and its cell checksums (a bad byte located to its cell)
    writers.py         pattern files written from one pre-filled aligned buffer
    readers.py         cells read with T threads (aligned, O_DIRECT when asked), every one verified
    odirect.py         O_DIRECT with aligned buffers; a fallback to buffered I/O counted, never silent
    reads.py           the bytes a workload reads back cold, from its spec (preflight's NFS comparison)
    stats.py           percentiles as numpy computes them by default (linear), in the stdlib

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
    ``server-drop``  data_bytes: on NFS, before a cold read, the agent waits for the controller
                  to drop the server's cache and write ``server-drop-<seq>.json`` {controlled, how}
    ``result``    the same object as result.json
- ``result.json``: the start fields plus ``status`` (ok | invalid-spec | failed |
  cancelled), ``exit_code``, ``elapsed_s``, ``labels`` (echoed from the spec),
  ``error``/``traceback`` when not ok, and the workload's measurements; units are
  in every key (``_bytes``, ``_bytes_per_s``, ``_s``). Each read phase carries
  ``cold`` {drop_caches, server_drop, device, device_read_bytes, expected_read_bytes,
  device_read_ratio, page_cache_bytes_before/after}, ``direct_*`` (requested,
  engaged, fallback reason) and verification (checksum_algorithm,
  checksums_verified, checksums_failed, verify_ok, corrupt[] with file and
  offset_bytes);
- ``exit_code``: written last (0 ok, 1 failed, 2 spec refused, 143 cancelled).
"""

from __future__ import annotations

from kvgate.probes.agent import engine_log
from kvgate.probes.agent.cold import server_drop_file
from kvgate.probes.agent.reads import cold_read_bytes
from kvgate.probes.agent.sessions import Sessions
from kvgate.probes.agent.soak import hit_ratio

AGENT_VERSION = "1"

__all__ = ["Sessions", "cold_read_bytes", "engine_log", "hit_ratio", "server_drop_file"]
