"""O_DIRECT capability of every volume (LMCache #4386): a small probe run by the host's python3.

G1 writes in two places, here and the counter probe (counters.py), both only on scratch. On a
volume marked scratch, once the scratch check (:mod:`kvgate.probes.scratch`) passed its
directory, the probe creates a hidden file there
(O_CREAT|O_EXCL, so never through a planted link), writes one block from a
page-aligned buffer at the device's logical block size and at the filesystem's
f_bsize, reads it back with O_DIRECT, compares, and always removes the file. A
failure names the stage and the errno (EINVAL: the filesystem refuses O_DIRECT).
Other volumes, and a scratch volume the check refuses, are never written: an
existing file is read with O_DIRECT if there is one, otherwise the result says why
it was not probed.
"""

from __future__ import annotations

from typing import Any

from kvgate.probes.facts.base import Collected, HostContext, ParseError, load_json, require_tool, run_parsed
from kvgate.probes.scratch import write_refusals
from kvgate.transport import Executor

TOOL = "python3"
NOT_SCRATCH = "not probed: volume not scratch"
PROBE = r"""
import errno, json, mmap, os, sys

def logical_block(path):
    st = os.stat(path)
    base = "/sys/dev/block/%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))
    for q in (base + "/queue/logical_block_size", base + "/../queue/logical_block_size"):
        try:
            with open(q) as f:
                return int(f.read())
        except (OSError, ValueError):
            pass
    return None

def failed(res, stage, e):
    res.update(ok=False, stage=stage, errno=errno.errorcode.get(e.errno, str(e.errno)), error=e.strerror)
    return res

def aligned(size, fill):
    buf = mmap.mmap(-1, size)
    buf.write(bytes((i * 7 + fill) % 251 for i in range(size)))
    return buf

def write_read(name, size, res):
    data = aligned(size, size)
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_DIRECT, 0o600)
    except OSError as e:
        return failed(res, "open", e)
    try:
        if os.pwrite(fd, data, 0) != size:
            return res.update(ok=False, stage="write", errno=None, error="short write") or res
    except OSError as e:
        return failed(res, "write", e)
    finally:
        os.close(fd)
    return read_back(name, size, res, data)

def read_back(name, size, res, data=None):
    back = mmap.mmap(-1, size)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECT)
    except OSError as e:
        return failed(res, "open-read", e)
    try:
        n = os.preadv(fd, [back], 0)
    except OSError as e:
        return failed(res, "read", e)
    finally:
        os.close(fd)
    same = data is None or back[:] == data[:]
    res.update(ok=n == size and same, stage=None if same else "verify", bytes_read=n)
    return res

def scratch_probe(path, size):
    name = os.path.join(path, ".kvgate-odirect-%d-%d" % (os.getpid(), size))
    res = {"block_bytes": size}
    try:
        return write_read(name, size, res)
    finally:
        try:
            os.unlink(name)
        except FileNotFoundError:
            pass
        except OSError as e:
            res["cleanup_error"] = "%s: %s" % (errno.errorcode.get(e.errno, e.errno), e.strerror)

def read_probe(path, size):
    for entry in os.scandir(path):
        if entry.is_file(follow_symlinks=False) and entry.stat().st_size >= size:
            return read_back(entry.path, size, {"block_bytes": size, "file": entry.path})
    return None

def main(path, mode):
    out = {"path": path, "mode": mode}
    try:
        out["fs_block_bytes"] = os.statvfs(path).f_bsize
        out["logical_block_bytes"] = logical_block(path)
    except OSError as e:
        return failed(out, "stat", e)
    sizes = sorted({out["logical_block_bytes"] or 512, out["fs_block_bytes"]})
    probe = scratch_probe if mode == "write" else read_probe
    results = [r for r in (probe(path, s) for s in sizes) if r is not None]
    out["results"] = results
    out["ok"] = all(r["ok"] for r in results) if results else None
    return out

print(json.dumps(main(sys.argv[1], sys.argv[2])))
"""


def parse_probe(text: str) -> dict[str, Any]:
    """The probe's JSON verdict for one volume, with a readable status."""
    doc = load_json(text.strip().splitlines()[-1] if text.strip() else text, "odirect probe", "one JSON line")
    if not isinstance(doc, dict) or "ok" not in doc:
        raise ParseError("odirect probe", "a JSON object with 'ok'", text)
    doc["status"] = _status(doc)
    return doc


def _status(doc: dict[str, Any]) -> str:
    if doc["ok"] is None:
        return NOT_SCRATCH if doc.get("mode") == "read" else "not probed"
    if doc["ok"]:
        return "passed"
    bad = [r for r in doc.get("results", [doc]) if not r.get("ok")]
    return "; ".join(_failure(r) for r in bad)


def _failure(r: dict[str, Any]) -> str:
    where = f"{r['block_bytes']} B " if "block_bytes" in r else ""
    return f"{where}{r.get('stage')} failed: {r.get('errno') or ''} ({r.get('error') or 'data mismatch'})"


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Probe every volume: write+read on scratch volumes the scratch check passes, read-only elsewhere."""
    col = Collected(facts={"volumes": {}})
    if not ctx.volumes or not require_tool(ex, col, TOOL):
        return col
    for name, vol in ctx.volumes.items():
        refused = "; ".join(write_refusals(ex, vol, vol.path)) if vol.scratch else ""
        if refused:  # a scratch volume that resolves out of itself or into the system: not touched
            status = f"not probed: {refused}"
            col.facts["volumes"][name] = {"path": vol.path, "mode": "refused", "ok": None, "status": status}
            continue
        mode = "write" if vol.scratch else "read"
        result = run_parsed(
            ex, col, name, parse_probe, "python3 -c %s %s %s", PROBE, vol.path, mode, timeout_s=120
        )
        if result is not None:
            col.facts["volumes"][name] = result
    return col
