"""kv-restore: write C requests' KV prefixes as tier files, make cold, restore them concurrently.

Reproduces the R1 single-card conc-16 cold-read setup: every request restores
its files with P readers (P=1 is the serial read path, P>1 the parallel one);
each P in ``readers_per_request`` is one cold restore of the same files.
``layout`` picks the files (kv_layout): ``lmcache-chunks`` (default; N-token
chunk files) or ``vllm-blocks`` (vLLM's hash-named block files; vLLM itself
reads a request's files one after the other, i.e. P=1, one read per file when
``io_bytes`` >= the file size).
Reported per restore: per-request latency p50/p90/p99, aggregate bytes/s, the
cold proof (device read bytes vs bytes restored, Cached before/after), whether
O_DIRECT engaged, and the verification of every chunk read back.
"""

from __future__ import annotations

import mmap
import threading
import time
from typing import TYPE_CHECKING, Any

from kvgate.probes.agent.cold import cold_window
from kvgate.probes.agent.events import EventLog, Progress
from kvgate.probes.agent.kv_layout import LAYOUTS, LMCACHE_CHUNKS, KVLayout, VLLMBlockLayout
from kvgate.probes.agent.odirect import DirectTracker, alignment_for
from kvgate.probes.agent.readers import Verifier, VerifyPool, make_readers, read_cells, run_threads
from kvgate.probes.agent.spec import Spec, WorkloadRun, workload_run
from kvgate.probes.agent.stats import latency_summary, rate
from kvgate.probes.agent.writers import CellWriter

if TYPE_CHECKING:
    from kvgate.probes.agent.kv_layout import Layout

LMCACHE_KEYS = ("tokens_per_chunk",)
VLLM_KEYS = ("tokens_per_block", "blocks_per_file", "model_name")
KEYS = (
    "layout",
    "kv_bytes_per_token",
    "prefix_tokens",
    "requests",
    "readers_per_request",
    "writer_threads",
    *LMCACHE_KEYS,
    *VLLM_KEYS,
)


def parse(data: Any) -> tuple[dict[str, Any], Layout, list[int]]:
    """Validate a kv-restore spec: (common settings, layout, readers per request to run)."""
    spec = Spec(data, "kv-restore", KEYS)
    common = spec.common()
    common["writer_threads"] = spec.integer("writer_threads", 4)
    layout = parse_layout(spec, seed=common["seed"])
    return common, layout, spec.integers("readers_per_request", [1, 8])


def parse_layout(spec: Spec, *, seed: int) -> Layout:
    """The ``layout`` and its own keys; a key of the other layout is refused, not ignored."""
    kind = spec.choice("layout", LAYOUTS, LMCACHE_CHUNKS)
    spec.refuse(VLLM_KEYS if kind == LMCACHE_CHUNKS else LMCACHE_KEYS, f"layout {kind}")
    kv_bytes, prefix = spec.integer("kv_bytes_per_token"), spec.integer("prefix_tokens")
    requests = spec.integer("requests")
    if kind == LMCACHE_CHUNKS:
        tokens = spec.integer("tokens_per_chunk", 256)
        return KVLayout(
            kv_bytes_per_token=kv_bytes, tokens_per_chunk=tokens, prefix_tokens=prefix, requests=requests
        )
    layout = VLLMBlockLayout(
        kv_bytes_per_token=kv_bytes,
        tokens_per_block=spec.integer("tokens_per_block", 16),
        blocks_per_file=spec.integer("blocks_per_file", 1),
        prefix_tokens=prefix,
        requests=requests,
        seed=seed,
        model_name=spec.name("model_name", "kvgate-emulated"),
        page_bytes=mmap.PAGESIZE,
    )
    if layout.files_per_request < 1:
        one_file = f"tokens_per_block x blocks_per_file = {layout.tokens_per_file}"
        raise spec.fail("prefix_tokens", f"at least {one_file} tokens (vLLM stores only full blocks)")
    return layout


def run(data: Any, log: EventLog, stop: threading.Event) -> dict[str, Any]:
    """The whole workload; returns the result fields."""
    common, layout, readers = parse(data)
    total = layout.total_bytes
    with workload_run(common, "kv-restore", data, writes_bytes=total, log=log, stop=stop) as run:
        log.emit("phase", phase="layout", run_dir=run.dir.path, **layout.describe())
        run.result.update(layout=layout.describe(), io_bytes=common["io_bytes"])
        run.result["alignment_bytes"] = alignment_for(run.dir.path)
        run.result["write"] = write_phase(run, layout)
        run.result["restores"] = [restore_phase(run, layout, per_request=p) for p in readers]
        run.result.update(speedup(run.result["restores"]))
    return run.result


def write_phase(run: WorkloadRun, layout: Layout) -> dict[str, Any]:
    """Write every KV file (fsync each), with a few writer threads; not the measured part."""
    run_dir, pattern, common, stop = run.dir, run.pattern, run.cfg, run.stop
    for name, text in layout.metadata_files().items():
        with open(run_dir.file(name), "x") as f:
            f.write(text)
    files = layout.files()
    paths = [run_dir.file(layout.name(r, c)) for r, c, _ in files]
    tracker = DirectTracker(common["direct"])
    align = alignment_for(run_dir.path)
    progress = Progress(run.log, "write", layout.total_bytes)
    nthreads = min(common["writer_threads"], len(files))
    writers = [
        CellWriter(pattern, direct=common["direct"], tracker=tracker, align=align) for _ in range(nthreads)
    ]
    start = time.monotonic()

    def work(slot: int) -> None:
        for i in range(slot, len(files), nthreads):
            r, c, size = files[i]
            writers[slot].write_file(
                paths[i], size, file_id=layout.file_id(r, c), progress=progress, stop=stop
            )

    run_threads(work, nthreads, stop)
    elapsed = time.monotonic() - start
    progress.close()
    out: dict[str, Any] = {
        "bytes": layout.total_bytes,
        "files": len(files),
        "elapsed_s": elapsed,
        "fsync_per_file": True,
    }
    out["bytes_per_s"] = rate(layout.total_bytes, elapsed)
    out.update(tracker.report())
    return out


def restore_phase(run: WorkloadRun, layout: Layout, *, per_request: int) -> dict[str, Any]:
    """One cold restore of all requests at once, each with ``per_request`` readers."""
    run_dir, pattern, common, log = run.dir.path, run.pattern, run.cfg, run.log
    tracker = DirectTracker(common["direct"])
    align = alignment_for(run_dir)
    cells = [layout.cells(run_dir, r, pattern.cell_bytes) for r in range(layout.requests)]
    readers = [
        make_readers(
            per_request, io_bytes=pattern.cell_bytes, align=align, direct=common["direct"], tracker=tracker
        )
        for _ in range(layout.requests)
    ]
    verifier = Verifier(pattern)
    progress = Progress(log, "restore", layout.total_bytes, readers_per_request=per_request)
    window = cold_window(run_dir, drop=common["drop_caches"], data_bytes=layout.total_bytes, log=log)
    with VerifyPool(verifier) as pool:
        latencies, restored, elapsed = concurrent_restore(cells, readers, pool, progress, run.stop)
    cold = window.end(layout.total_bytes)
    progress.close()
    for group in readers:
        for reader in group:
            reader.close()
    out: dict[str, Any] = {"readers_per_request": per_request, "requests": layout.requests}
    out.update(
        {"restored_bytes": restored, "elapsed_s": elapsed, "restore_bytes_per_s": rate(restored, elapsed)}
    )
    out.update(latency_summary(latencies, "restore_latency"))
    out["request_latencies_s"] = latencies
    out["cold"] = cold
    out.update(tracker.report())
    out.update(verifier.report())
    return out


def concurrent_restore(
    cells: list[Any], readers: list[Any], pool: VerifyPool, progress: Progress, stop: threading.Event
) -> tuple[list[float], int, float]:
    """Start every request at the same instant; returns (latencies, bytes, wall seconds)."""
    n = len(cells)
    latencies, restored = [0.0] * n, [0] * n
    gate = threading.Barrier(n + 1)
    start = [0.0]

    def request(slot: int) -> None:
        gate.wait()
        restored[slot] = read_cells(cells[slot], readers[slot], pool=pool, progress=progress, stop=stop)
        latencies[slot] = time.monotonic() - start[0]

    def release() -> None:
        start[0] = time.monotonic()
        gate.wait()

    run_threads(request, n, stop, started=release)
    return latencies, sum(restored), time.monotonic() - start[0]


def speedup(restores: list[dict[str, Any]]) -> dict[str, Any]:
    """Parallel vs serial bandwidth when both P=1 and a P>1 restore ran (R1: 0.98 → 5.23 GB/s)."""
    by_p = {r["readers_per_request"]: r["restore_bytes_per_s"] for r in restores}
    if 1 not in by_p or len(by_p) < 2 or not by_p[1]:
        return {}
    best = max(p for p in by_p if p > 1)
    return {"parallel_readers_per_request": best, "parallel_vs_serial_bandwidth_ratio": by_p[best] / by_p[1]}
