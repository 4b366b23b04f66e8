"""A G3 restore's bandwidth beside what G2 measured on the same volume, for the evidence checklist.

G3 reads the latest G2 run of its inventory with no check failed or unevaluated before it measures
(kvgate.orchestration.g3.prediction ``StorageBound.load``) and records G2's figures of each deployment's
tier volume with its arms (``g3_rows.<host/deployment>.figures.g2``). A restore far below G2's figures
says the engine, not the storage, set its pace; one above G2's best read is INVALID already (something
else served it).

>>> gb_per_s(1.36e9)
'1.36 GB/s'
"""

from __future__ import annotations

import re

from kvgate.configuration.gate_profiles import VerdictBinding
from kvgate.record import ArmFigures, G2Figures, G3Figures
from kvgate.report.g3_figures import bindings, level, number, suffixes
from kvgate.report.model import CheckRow, RunView
from kvgate.report.numbers import human

DEPLOYMENT = re.compile(r"^engine\[(?P<name>[^\]]+)\]\.(?P<check>.+)$")


def gb_per_s(bytes_per_s: float) -> str:
    return human(bytes_per_s, "B/s")


def restore_vs_g2(view: RunView, row: CheckRow) -> str:
    """'restore 0.21 GB/s (ssd-tier · conc 8) vs G2 on this volume: …'; '' where nothing restored."""
    found = DEPLOYMENT.match(row.check)
    if view.gate != "g3" or found is None:
        return ""
    figs = view.g3_figures().get(f"{row.host}/{found['name']}")
    binding = next((b for b in bindings(view) if b.check == found["check"]), None)
    if binding is None or not isinstance(figs, G3Figures):
        return ""
    restores = restore_rates(figs.arms, binding)
    if not restores:
        return ""
    return f"restore {'; '.join(restores)} vs {g2_text(figs.g2)}"


def restore_rates(arms: dict[str, ArmFigures], binding: VerdictBinding) -> list[str]:
    """The candidate arm's restore bandwidth at each level of the binding (the engine's bytes over its
    time, as recorded), and where another reader shared the device, both byte counts and the host's load."""
    out = []
    for suffix in suffixes(binding):
        arm = f"{binding.candidate_arm}{suffix}"
        summary = arms.get(arm)
        bw = number(summary.read_bw_gb_per_s) if summary is not None else None
        if bw is not None and summary is not None:
            shared = f"; {summary.qualifications[0].split(': ', 1)[1]}" if summary.qualifications else ""
            out.append(
                f"{gb_per_s(bw * 1e9)} by the engine's bytes ({arm.partition('@')[0]} · {level(arm)}{shared})"
            )
    return out


def g2_text(g2: G2Figures | None) -> str:
    """What G2 measured on the volume, or that it measured nothing G3 could use."""
    ceiling = number(g2.read_ceiling_bytes_per_s) if g2 is not None else None
    per_request = number(g2.kv_restore_request_bytes_per_s) if g2 is not None else None
    if g2 is None or not g2.measured or ceiling is None:
        return "G2: no usable G2 run measured this volume (the planner assumed the inventory's figure)"
    text = f"G2 on this volume: read ceiling {gb_per_s(ceiling)}"
    return text + (f", one KV restore {gb_per_s(per_request)}" if per_request is not None else "")
