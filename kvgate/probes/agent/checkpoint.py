"""checkpoint: R rank processes write their shard of a snapshot with fsync, then a cold read-back.

As MLPerf Storage does it: write (each rank: create, write, fsync), then
drop caches and read everything back, verifying every cell. The write window
runs from the first rank's start to the last rank's fsync; ranks are separate
processes started before the window and released together.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from typing import Any

from kvgate.probes.agent.cold import cold_window
from kvgate.probes.agent.events import Cancelled, EventLog, Progress
from kvgate.probes.agent.odirect import DirectTracker, alignment_for, open_file
from kvgate.probes.agent.readers import Cell, Verifier, VerifyPool, make_readers, read_cells
from kvgate.probes.agent.spec import Spec, WorkloadRun, pattern_of, workload_run
from kvgate.probes.agent.stats import rate
from kvgate.probes.agent.writers import CREATE, CellWriter

KEYS = ("snapshot_bytes", "ranks", "readback_threads", "write_direct")
ROOT = os.path.abspath(__file__).rsplit(os.sep + "kvgate" + os.sep, 1)[0]  # the zipapp or source root
BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from kvgate.probes.agent.checkpoint import rank_main; rank_main()"
)
POLL_S = 0.2


def parse(data: Any) -> dict[str, Any]:
    """Validate a checkpoint spec."""
    spec = Spec(data, "checkpoint", KEYS)
    cfg = spec.common()
    cfg["ranks"] = spec.integer("ranks")
    cfg["snapshot_bytes"] = spec.integer("snapshot_bytes", minimum=cfg["ranks"], multiple_of=cfg["ranks"])
    cfg["readback_threads"] = spec.integer("readback_threads", 8)
    cfg["write_direct"] = spec.boolean("write_direct", False)
    return cfg


def run(data: Any, log: EventLog, stop: threading.Event) -> dict[str, Any]:
    """Write the snapshot with R ranks, then read it back cold and verify."""
    cfg = parse(data)
    shard = cfg["snapshot_bytes"] // cfg["ranks"]
    with workload_run(cfg, "checkpoint", data, writes_bytes=cfg["snapshot_bytes"], log=log, stop=stop) as run:
        paths = [run.dir.file(f"rank{r:05d}.shard") for r in range(cfg["ranks"])]
        run.result.update(ranks=cfg["ranks"], snapshot_bytes=shard * cfg["ranks"], shard_bytes=shard)
        run.result["write"] = write_snapshot(run, paths, shard)
        run.result["readback"] = read_back(run, paths, shard)
    return run.result


def write_snapshot(run: WorkloadRun, paths: list[str], shard: int) -> dict[str, Any]:
    """Start R rank processes, release them together, follow their files' sizes as progress."""
    cfg = run.cfg
    procs = [start_rank(r, path, shard, cfg) for r, path in enumerate(paths)]
    try:
        for p in procs:
            if p.stdout is None or p.stdout.readline().strip() != "ready":
                raise RuntimeError(f"rank process {p.pid} did not get ready (see the agent's stderr)")
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        follow(procs, paths, Progress(run.log, "write", shard * len(paths)), run.stop)
        ranks = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return summarize_write(ranks, shard * len(paths), cfg)


def start_rank(rank: int, path: str, shard: int, cfg: dict[str, Any]) -> subprocess.Popen[str]:
    """One rank process, waiting for "go" once it has its buffer and its file open."""
    proc = subprocess.Popen(
        [sys.executable, "-c", BOOT, ROOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    args = {"rank": rank, "path": path, "bytes": shard, "seed": cfg["seed"], "io_bytes": cfg["io_bytes"]}
    args.update({"checksum": cfg["checksum"], "direct": cfg["write_direct"]})
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(args) + "\n")
    proc.stdin.flush()
    return proc


def follow(
    procs: list[subprocess.Popen[str]], paths: list[str], progress: Progress, stop: threading.Event
) -> None:
    """Report the sum of the shard sizes until every rank has exited; stop them if asked."""
    while any(p.poll() is None for p in procs):
        if stop.is_set():
            raise Cancelled("stopped while writing the snapshot")
        done = sum(os.stat(path).st_size for path in paths if os.path.exists(path))
        progress.add(done - progress.done_bytes)
        time.sleep(POLL_S)
    progress.add(progress.total_bytes - progress.done_bytes)
    progress.close()
    failed = [p.returncode for p in procs if p.returncode]
    if failed:
        raise RuntimeError(f"rank processes exited with {failed} (see the agent's stderr)")


def summarize_write(ranks: list[dict[str, Any]], total: int, cfg: dict[str, Any]) -> dict[str, Any]:
    """Window from the first start to the last fsync; per-rank figures kept."""
    window = max(r["end_s"] for r in ranks) - min(r["start_s"] for r in ranks)
    out: dict[str, Any] = {"bytes": total, "elapsed_s": window, "write_bytes_per_s": rate(total, window)}
    out["fsync_max_s"] = max(r["fsync_s"] for r in ranks)
    out["write_direct_requested"] = cfg["write_direct"]
    out["direct_engaged"] = all(r["direct_engaged"] for r in ranks) if cfg["write_direct"] else False
    out["ranks"] = ranks
    return out


def read_back(run: WorkloadRun, paths: list[str], shard: int) -> dict[str, Any]:
    """Drop caches, read every shard with T threads (O_DIRECT if asked) and verify every cell."""
    pattern, cfg, log = run.pattern, run.cfg, run.log
    cells = [
        Cell(path, r, k, k * pattern.cell_bytes, min(pattern.cell_bytes, shard - k * pattern.cell_bytes))
        for r, path in enumerate(paths)
        for k in range(-(-shard // pattern.cell_bytes))
    ]
    tracker = DirectTracker(cfg["direct"])
    readers = make_readers(
        cfg["readback_threads"],
        io_bytes=pattern.cell_bytes,
        align=alignment_for(paths[0]),
        direct=cfg["direct"],
        tracker=tracker,
    )
    verifier = Verifier(pattern)
    progress = Progress(log, "readback", shard * len(paths))
    window = cold_window(
        os.path.dirname(paths[0]), drop=cfg["drop_caches"], data_bytes=shard * len(paths), log=log
    )
    start = time.monotonic()
    try:
        with VerifyPool(verifier) as pool:
            nbytes = read_cells(cells, readers, pool=pool, progress=progress, stop=run.stop)
            elapsed = time.monotonic() - start
    finally:
        for reader in readers:
            reader.close()
    out: dict[str, Any] = {"bytes": nbytes, "elapsed_s": elapsed, "read_bytes_per_s": rate(nbytes, elapsed)}
    out["threads"] = cfg["readback_threads"]
    out["cold"] = window.end(nbytes)
    progress.close()
    out.update(tracker.report())
    out.update(verifier.report())
    return out


def rank_main() -> None:
    """Entry of a rank process: read args, open, say ready, wait for go, write, fsync, print timings."""
    args = json.loads(sys.stdin.readline())
    pattern = pattern_of(args)
    tracker = DirectTracker(args["direct"])
    writer = CellWriter(
        pattern, direct=args["direct"], tracker=tracker, align=alignment_for(os.path.dirname(args["path"]))
    )
    fd = open_file(args["path"], CREATE, direct=args["direct"], tracker=tracker)
    print("ready", flush=True)
    sys.stdin.readline()
    start = time.monotonic()
    fd = writer.write_cells(fd, args["path"], args["bytes"], file_id=args["rank"])
    written = time.monotonic()
    os.fsync(fd)
    end = time.monotonic()
    os.close(fd)
    report = {"rank": args["rank"], "bytes": args["bytes"], "start_s": start, "end_s": end}
    report.update(
        {
            "write_s": written - start,
            "fsync_s": end - written,
            "bytes_per_s": rate(args["bytes"], end - start),
        }
    )
    report["direct_engaged"] = tracker.report()["direct_engaged"]
    print(json.dumps(report), flush=True)
