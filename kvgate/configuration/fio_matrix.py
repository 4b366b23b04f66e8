"""The G2 baseline matrix: a workload profile (YAML) → fio jobs, and the statistics over them.

A profile names the fixed jobs (sequential read and write at 1 MiB, random read at
4 KiB), an optional block size × numjobs × iodepth sweep, the repeat count (default 3)
and the bounds the gate judges (coefficient of variation, knee gain). Repeats give the
coefficient of variation; the sweep gives the device's read ceiling (its best cell,
re-measured: :mod:`kvgate.probes.fio.ceiling`) and the saturation knee:

    parallelism P = numjobs × iodepth (I/Os in flight). For each P the best
    bandwidth over its cells counts. The knee is the smallest P from which no
    larger P reaches ``bw(P) × (1 + knee_gain)``. When that is the largest P
    measured, the sweep never saturated (``saturated`` is False).

>>> knee = saturation_knee([SweepPoint(1, 1, 100.0), SweepPoint(1, 4, 180.0), SweepPoint(4, 4, 185.0)])
>>> knee.parallelism, knee.saturated
(4, True)
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, ValidationError

from kvgate.base.config_file import Frozen, read_yaml, repo_root
from kvgate.base.errors import ConfigError
from kvgate.configuration.bounds import Count, Ratio, Seconds
from kvgate.configuration.fio_job import IOENGINES, VERIFY_NAMES, FioJob, Rw, is_size


def _size(text: str) -> str:
    if not is_size(text):
        raise ValueError(f"expected a fio size > 0 like 4k, 1m, 16g or 1MiB (one word), got {text!r}")
    return text


def _verify(name: str) -> str:
    if name not in VERIFY_NAMES:
        raise ValueError(
            f"expected one of fio's verify names ({', '.join(sorted(VERIFY_NAMES))}), got {name!r}"
        )
    return name


def _ioengine(name: str) -> str:
    if name not in IOENGINES:
        raise ValueError(f"expected one of {', '.join(sorted(IOENGINES))}, got {name!r}")
    return name


# every value below ends up in a fio job file: each is checked for what fio would read there
FioSize = Annotated[str, AfterValidator(_size)]
Verify = Annotated[str, AfterValidator(_verify)]
IoEngine = Annotated[str, AfterValidator(_ioengine)]
Depth = Annotated[int, Field(le=65_536)]  # fio's iodepth (its own limit)
Word = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=64)]


class JobDefaults(Frozen):
    """Settings every job of the profile shares unless it overrides them."""

    size: FioSize = "16g"
    runtime_s: Seconds = Field(default=60, ge=1)
    ramp_s: Seconds = Field(default=10, ge=0)
    direct: bool = True
    ioengine: IoEngine = "libaio"


class JobSpec(Frozen):
    rw: Rw
    bs: FioSize
    iodepth: Depth = Field(default=1, ge=1)
    numjobs: Count = Field(default=1, ge=1)
    size: FioSize | None = None
    runtime_s: Seconds | None = Field(default=None, ge=1)
    ramp_s: Seconds | None = Field(default=None, ge=0)
    direct: bool | None = None
    verify: Verify | None = None


class SweepSpec(Frozen):
    """Every block size × numjobs × iodepth cell, read (or written) like the fixed jobs.

    ``repeats``, ``runtime_s`` and ``ramp_s`` default to the profile's: a large sweep
    may run each cell once and shorter, because its best cell is re-measured with the
    profile's repeats and runtime as the ceiling (kvgate.probes.fio.ceiling).
    """

    name: Word = "sweep"
    rw: Rw = "read"
    bs: FioSize | Annotated[tuple[FioSize, ...], Field(min_length=1)] = "1m"  # one size or several: ``sizes``
    numjobs: tuple[Annotated[Count, Field(ge=1)], ...] = Field(min_length=1)
    iodepth: tuple[Annotated[Depth, Field(ge=1)], ...] = Field(min_length=1)
    knee_gain: float = Field(default=0.05, gt=0, lt=1)
    # where the sweep stops going on along the readers' block size without a plateau (probes.fio.ceiling)
    max_parallelism: Count = Field(default=1024, ge=1)
    repeats: Count | None = Field(default=None, ge=1)
    runtime_s: Seconds | None = Field(default=None, ge=1)
    ramp_s: Seconds | None = Field(default=None, ge=0)

    @property
    def sizes(self) -> tuple[str, ...]:
        """The block sizes swept, in order."""
        return (self.bs,) if isinstance(self.bs, str) else self.bs

    def cells(self) -> list[tuple[str, JobSpec]]:
        """(cell name, job) of every point, block size outermost."""
        return [
            (sweep_cell(self.name, bs, nj, qd), self.spec(bs, nj, qd))
            for bs in self.sizes
            for nj in self.numjobs
            for qd in self.iodepth
        ]

    def spec(self, bs: str, numjobs: int, iodepth: int) -> JobSpec:
        return JobSpec(
            rw=self.rw, bs=bs, numjobs=numjobs, iodepth=iodepth, runtime_s=self.runtime_s, ramp_s=self.ramp_s
        )


class MatrixProfile(Frozen):
    """One workload profile file (workloads/fio/*.yaml)."""

    name: str
    description: str = ""
    kind: Literal["fio-matrix"] = "fio-matrix"
    repeats: Count = Field(default=3, ge=1)
    max_cv: Ratio = Field(default=0.05, gt=0)  # judged: bandwidth variation over repeats
    defaults: JobDefaults = Field(default_factory=JobDefaults)
    jobs: dict[Word, JobSpec] = Field(default_factory=dict)
    sweep: SweepSpec | None = None

    def fio_jobs(self, directory: str, *, tag: str = "") -> dict[str, FioJob]:
        """Every cell as a FioJob doing I/O under ``directory``; ``tag`` (host/device) prefixes names.

        Every sweep cell is one fio job name (the sweep's), so all cells read the same files
        (fio names them ``<job>.<clone>.0``): the sweep lays out max(numjobs) × size once,
        not numjobs × size per cell (on main: ~2 TB at full scale before the block sizes).
        """
        out = {cell: self.job(cell, spec, directory, tag) for cell, spec in self.jobs.items()}
        if self.sweep:
            out |= {
                cell: self.job(self.sweep.name, spec, directory, tag) for cell, spec in self.sweep.cells()
            }
        return out

    def repeats_of(self, cell: str) -> int:
        """How often a cell runs: the sweep's own repeats for its cells, else the profile's."""
        if self.sweep and self.sweep.repeats and cell not in self.jobs:
            return self.sweep.repeats
        return self.repeats

    def job(self, name: str, spec: JobSpec, directory: str, tag: str = "") -> FioJob:
        """One cell as a FioJob named ``name`` (its files' prefix), the profile's defaults for the rest."""
        d = self.defaults
        return FioJob(
            name=f"{tag}.{name}" if tag else name,
            rw=spec.rw,
            bs=spec.bs,
            iodepth=spec.iodepth,
            numjobs=spec.numjobs,
            size=spec.size or d.size,
            runtime_s=spec.runtime_s or d.runtime_s,
            ramp_s=d.ramp_s if spec.ramp_s is None else spec.ramp_s,
            direct=d.direct if spec.direct is None else spec.direct,
            ioengine=d.ioengine,
            verify=spec.verify,
            directory=directory,
        )


def sweep_cell(name: str, bs: str, numjobs: int, iodepth: int) -> str:
    """The cell name of one sweep point: ``sweep-4m-j4-qd16``."""
    return f"{name}-{bs}-j{numjobs}-qd{iodepth}"


def load_profile(path: Path) -> MatrixProfile:
    """Load and validate a profile; errors name the file and the field path."""
    data = read_yaml(path)  # bounded, hostile-file-safe reading: kvgate.base.config_file
    try:
        profile = MatrixProfile.model_validate(data)
        profile.fio_jobs("/validate")  # building every FioJob checks ramp < runtime, sizes, names
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise ConfigError(str(path), field, str(err["msg"]).removeprefix("Value error, ")) from exc
    except ValueError as exc:
        raise ConfigError(str(path), "jobs", str(exc)) from exc
    return profile


def fio_matrix_path(scale: str) -> Path:
    """The matrix G2 runs at an inventory scale: ``workloads/fio/smoke.yaml``, else ``baseline.yaml``."""
    return repo_root() / "workloads" / "fio" / f"{'smoke' if scale == 'smoke' else 'baseline'}.yaml"


@functools.cache
def fio_matrix(scale: str) -> MatrixProfile:
    """G2's matrix for ``scale``, read once per process (gateconfig checks the jobs G2 judges)."""
    return load_profile(fio_matrix_path(scale))


def cv(values: Sequence[float]) -> float | None:
    """Coefficient of variation (sample stdev / mean); None with fewer than 2 values or mean 0."""
    if len(values) < 2 or statistics.fmean(values) == 0:
        return None
    return statistics.stdev(values) / statistics.fmean(values)


@dataclass(frozen=True)
class SweepPoint:
    numjobs: int
    iodepth: int
    bw_bytes_per_s: float
    bs: str = "1m"

    @property
    def parallelism(self) -> int:
        """I/Os in flight: numjobs × iodepth."""
        return self.numjobs * self.iodepth


@dataclass(frozen=True)
class Knee:
    """Where bandwidth stops growing with parallelism (see the module docstring)."""

    parallelism: int
    numjobs: int
    iodepth: int
    bw_bytes_per_s: float
    saturated: bool  # False: bandwidth still grew at the largest parallelism measured
    gain: float
    bs: str = "1m"


def saturation_knee(points: Sequence[SweepPoint], gain: float = 0.05) -> Knee:
    """The smallest parallelism after which bandwidth gains stay below ``gain``."""
    if not points:
        raise ValueError("a sweep without points has no knee")
    best: dict[int, SweepPoint] = {}
    for p in points:
        if p.parallelism not in best or p.bw_bytes_per_s > best[p.parallelism].bw_bytes_per_s:
            best[p.parallelism] = p
    levels = [best[k] for k in sorted(best)]
    for i, p in enumerate(levels):
        later = max((q.bw_bytes_per_s for q in levels[i + 1 :]), default=0.0)
        if later < p.bw_bytes_per_s * (1 + gain):
            saturated = i < len(levels) - 1
            return Knee(p.parallelism, p.numjobs, p.iodepth, p.bw_bytes_per_s, saturated, gain, p.bs)
    raise AssertionError("unreachable: the last level always qualifies")
