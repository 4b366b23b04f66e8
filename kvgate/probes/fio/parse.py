"""fio json+ output → per-job results, aggregated by kvgate (not by group_reporting).

fio writes error lines into the ``--output`` file before the JSON (fio #731,
#1685; client mode prefixes every server line with ``<host>``), so the document
is located defensively: the first line starting with ``{`` that decodes to an
object with ``fio version``. Units are converted once, here, into names that say
them: bytes, bytes_per_s, iops, ms, ns.

>>> from pathlib import Path
>>> result = parse_output(Path("tests/data/recorded/fio/multijob.json").read_text())
>>> len(result.jobs), result.summary().read.bw_bytes_per_s == sum(j.read.bw_bytes_per_s for j in result.jobs)
(4, True)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kvgate.probes.fio.hist import Histogram

ALL_CLIENTS = "All clients"  # fio's own cluster entry in client mode: no bins, not trusted


class FioOutputError(ValueError):
    """The fio output holds no valid json+ document; str() says what was found instead."""


@dataclass(frozen=True)
class DirectionStats:
    """One direction (read or write) of one job, or of an aggregate of jobs."""

    io_bytes: int = 0
    bw_bytes_per_s: int = 0
    iops: float = 0.0
    total_ios: int = 0
    runtime_ms: int = 0  # an aggregate keeps the longest
    clat: Histogram = field(default_factory=Histogram)
    fio_clat_percentiles_ns: tuple[tuple[float, int], ...] = ()  # fio's own, for cross-checks

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> DirectionStats:
        clat = d.get("clat_ns", {})
        pct = tuple((float(k), int(v)) for k, v in clat.get("percentile", {}).items())
        return cls(
            io_bytes=int(d["io_bytes"]),
            bw_bytes_per_s=int(d["bw_bytes"]),
            iops=float(d["iops"]),
            total_ios=int(d["total_ios"]),
            runtime_ms=int(d["runtime"]),
            clat=Histogram.from_bins(clat.get("bins", {})),
            fio_clat_percentiles_ns=pct,
        )

    @classmethod
    def combine(cls, parts: Iterable[DirectionStats]) -> DirectionStats:
        """Jobs running side by side: bandwidth and IOPS add up, histograms merge."""
        items = list(parts)
        return cls(
            io_bytes=sum(p.io_bytes for p in items),
            bw_bytes_per_s=sum(p.bw_bytes_per_s for p in items),
            iops=sum(p.iops for p in items),
            total_ios=sum(p.total_ios for p in items),
            runtime_ms=max((p.runtime_ms for p in items), default=0),
            clat=Histogram.merge(p.clat for p in items),
        )

    def clat_ns(self, p: float) -> int | None:
        """Completion-latency percentile from the histogram; None without samples."""
        return self.clat.percentile_ns(p) if self.clat.samples else None


@dataclass(frozen=True)
class JobResult:
    """One fio job clone as fio reported it; ``host`` is "address:port" in client mode."""

    name: str
    error: int
    read: DirectionStats
    write: DirectionStats
    host: str = ""
    options: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> JobResult:
        host = f"{d['hostname']}:{d['port']}" if "hostname" in d else ""
        return cls(
            name=str(d["jobname"]),
            error=int(d.get("error", 0)),
            read=DirectionStats.from_json(d["read"]),
            write=DirectionStats.from_json(d["write"]),
            host=host,
            options=tuple((str(k), str(v)) for k, v in d.get("job options", {}).items()),
        )


@dataclass(frozen=True)
class Summary:
    """An aggregate over jobs (and hosts), computed by kvgate; the flat view has units in names."""

    jobs: int
    hosts: tuple[str, ...]
    read: DirectionStats
    write: DirectionStats

    @property
    def ceiling_hit(self) -> bool:
        """True when a sample landed in fio's open-ended last bucket (≥ ~17.05 s)."""
        return bool(self.read.clat.ceiling_samples or self.write.clat.ceiling_samples)

    def metrics(self) -> dict[str, float | int | None]:
        """``read_bw_bytes_per_s``, ``read_iops``, ``read_clat_p99_9_ns``, … for both directions."""
        out: dict[str, float | int | None] = {}
        for name, d in (("read", self.read), ("write", self.write)):
            out |= {f"{name}_io_bytes": d.io_bytes, f"{name}_bw_bytes_per_s": d.bw_bytes_per_s}
            out |= {f"{name}_iops": d.iops, f"{name}_clat_samples": d.clat.samples}
            for label, p in (("p50", 50.0), ("p99", 99.0), ("p99_9", 99.9)):
                out[f"{name}_clat_{label}_ns"] = d.clat_ns(p)
        return out


def summarize(jobs: Iterable[JobResult]) -> Summary:
    """Aggregate job results: sum of per-job bandwidth/IOPS, merged latency histograms."""
    items = list(jobs)
    return Summary(
        jobs=len(items),
        hosts=tuple(sorted({j.host for j in items})),
        read=DirectionStats.combine(j.read for j in items),
        write=DirectionStats.combine(j.write for j in items),
    )


def merge(summaries: Iterable[Summary]) -> Summary:
    """Combine summaries of jobs that ran at the same time (several hosts, one cluster figure)."""
    items = list(summaries)
    return Summary(
        jobs=sum(s.jobs for s in items),
        hosts=tuple(sorted({h for s in items for h in s.hosts})),
        read=DirectionStats.combine(s.read for s in items),
        write=DirectionStats.combine(s.write for s in items),
    )


@dataclass(frozen=True)
class FioResult:
    """A parsed fio output file."""

    fio_version: str
    jobs: tuple[JobResult, ...]
    prefix: str  # non-JSON text fio wrote before the document (its error lines)
    group_reported: bool  # group_reporting merged jobs: per-job figures were lost
    fio_all_clients: JobResult | None = None  # fio's own cluster entry (client mode)

    def summary(self) -> Summary:
        return summarize(self.jobs)

    def per_host(self) -> dict[str, Summary]:
        """Client mode: one summary per server ("address:port")."""
        return {
            h: summarize(j for j in self.jobs if j.host == h) for h in sorted({j.host for j in self.jobs})
        }

    @property
    def errors(self) -> tuple[str, ...]:
        return tuple(
            f"job {j.name}{' on ' + j.host if j.host else ''}: error {j.error}" for j in self.jobs if j.error
        )


def locate_json(text: str) -> tuple[dict[str, Any], str]:
    """The fio json document in ``text`` and the non-JSON text before it."""
    decoder = json.JSONDecoder()
    offset = 0
    for line in text.splitlines(keepends=True):
        if line.startswith("{"):
            try:
                doc, _ = decoder.raw_decode(text, offset)
            except (ValueError, RecursionError) as exc:  # JSONDecodeError, a 5000-digit number, deep nesting
                raise FioOutputError(f"fio output is truncated or not JSON: {exc!s:.200}") from exc
            if isinstance(doc, dict) and "fio version" in doc:
                return doc, text[:offset]
        offset += len(line)
    raise FioOutputError("no fio JSON document in the output" + (f"; it says: {text[-500:]}" if text else ""))


def unsupported(version: str, entry: Mapping[str, Any]) -> str | None:
    """Why a job entry of a fio version or setting kvgate cannot read has no usable figures."""
    if "read" not in entry and "mixed" in entry:
        return (
            f"{version} ran with unified_rw_reporting=1: reads and writes are merged into 'mixed'; "
            "kvgate needs them apart (unified_rw_reporting=0 or 'both')"
        )
    read = entry.get("read")
    if isinstance(read, Mapping) and "bw_bytes" not in read and "bw" in read:
        return (
            f"{version} has no bw_bytes: fio before 3.0 printed KiB/s, io_bytes in KiB and latencies in "
            "microseconds without json+ bins; kvgate needs fio >= 3.0 json+ output"
        )
    return None


def _jobs(version: str, entries: list[Any]) -> tuple[list[JobResult], list[JobResult]]:
    """(jobs, fio's own "All clients" entry if any), or FioOutputError naming what is wrong."""
    if not all(isinstance(e, Mapping) for e in entries):
        raise FioOutputError(f"{version}: a job entry is not a JSON object")
    for entry in entries:
        if why := unsupported(version, entry):
            raise FioOutputError(why)
    try:
        jobs = [JobResult.from_json(e) for e in entries if e.get("jobname") != ALL_CLIENTS]
        cluster = [JobResult.from_json(e) for e in entries if e.get("jobname") == ALL_CLIENTS]
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise FioOutputError(f"{version}: fio JSON job entry is malformed: {exc!r:.200}") from exc
    return jobs, cluster


def parse_output(text: str) -> FioResult:
    """Parse a fio ``--output-format=json+`` output file (plain or client mode)."""
    doc, prefix = locate_json(text)
    version = str(doc["fio version"])
    entries = doc.get("client_stats", doc.get("jobs"))
    if not isinstance(entries, list) or not entries:
        raise FioOutputError(f"{version}: fio JSON has no jobs (neither 'jobs' nor 'client_stats')")
    jobs, cluster = _jobs(version, entries)
    return FioResult(
        fio_version=version,
        jobs=tuple(jobs),
        prefix=prefix,
        group_reported=_group_reported(doc, entries),
        fio_all_clients=cluster[0] if cluster else None,
    )


def _group_reported(doc: Mapping[str, Any], entries: list[Mapping[str, Any]]) -> bool:
    scopes = [doc.get("global options", {})] + [e.get("job options", {}) for e in entries]
    return any(str(s.get("group_reporting", "0")) not in ("0", "") for s in scopes if isinstance(s, Mapping))
