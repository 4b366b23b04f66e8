"""Page 1's profile and scope lines: what each gate ran, from what its record keeps.

G3 and G4 record their gate profile; G2 records its fio matrix profile (``workloads/fio/*.yaml``)
as its gate profile; G1 has none: it reads the delivery against the inventory's bill of
materials, the same at every scale, so its scope is its BOM families and volumes.
"""

from __future__ import annotations

from typing import Any

from kvgate.report.model import RunView

G1_PROFILE = (
    "none: G1 reads what was delivered against the inventory's bill of materials (hosts.<h>.expect), "
    "the same at every scale"
)


def profile_lines(view: RunView) -> list[tuple[str, str]]:
    """('Profile', …) and what else tells the gate's scope: G1's families and volumes, G2's fio matrix."""
    if view.gate == "g1":
        return [("Profile", G1_PROFILE), *g1_scope(view)]
    out = [("Profile", view.profile_text)]
    if view.gate == "g2":
        prof = view.record.configuration.gate_profile
        if prof is not None and prof.get("kind") == "fio-matrix":
            out.append(("fio matrix", fio_matrix(prof)))
        volumes = sorted(view.record.g2_rows)
        out.append(("Volumes", ", ".join(volumes) if volumes else "none measured"))
    return out


def g1_scope(view: RunView) -> list[tuple[str, str]]:
    families = sorted({r.check.split(".")[0] for r in view.all_rows if not r.check.startswith("volume[")})
    volumes = sorted({r.check.split(".")[0][7:-1] for r in view.all_rows if r.check.startswith("volume[")})
    return [
        ("BOM families", f"{len(families)}: {', '.join(families)}" if families else "none checked"),
        ("Volumes", ", ".join(volumes) if volumes else "none declared"),
    ]


def fio_matrix(prof: dict[str, Any]) -> str:
    """'seqread-1m (read, bs 1m, 1 × QD 8), …; 2 repeats, CV ≤ 0.5; sweep …; 3 s runs on 32m files'."""
    jobs = [
        f"{name} ({j.get('rw')}, bs {j.get('bs')}, {j.get('numjobs', 1)} × QD {j.get('iodepth', 1)})"
        for name, j in (prof.get("jobs") or {}).items()
        if isinstance(j, dict)
    ]
    text = f"{', '.join(jobs) or 'no fixed jobs'}; {prof.get('repeats')} repeats, CV ≤ {prof.get('max_cv')}"
    sweep = prof.get("sweep")
    if isinstance(sweep, dict):
        axes = [listed(sweep.get("bs")), listed(sweep.get("numjobs")), listed(sweep.get("iodepth"))]
        cells = len(axes[0]) * len(axes[1]) * len(axes[2])
        shown = " × ".join("/".join(map(str, a)) for a in axes)
        text += f"; sweep bs × jobs × QD {shown} ({cells} cells)"
    d = prof.get("defaults") or {}
    direct = "O_DIRECT" if d.get("direct") else "buffered"
    return f"{text}; {d.get('runtime_s')} s runs on {d.get('size')} files, {direct}, {d.get('ioengine')}"


def listed(value: object) -> list[object]:
    """A sweep axis as recorded: a list, or one value."""
    return list(value) if isinstance(value, list) else [] if value is None else [value]
