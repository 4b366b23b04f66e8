"""Page 1's profile and scope lines: what each gate ran, from what its record keeps (G4: its soak
against the seed's 72 h).

G3 and G4 record their gate profile; G2 records its fio matrix profile (``workloads/fio/*.yaml``)
as its gate profile; G1 has none: it reads the delivery against the inventory's bill of
materials, the same at every scale, so its scope is its hardware families and volumes.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from itertools import pairwise

from kvgate.base.errors import KvgateError
from kvgate.base.units import MiB
from kvgate.configuration.fio_matrix import MatrixProfile
from kvgate.configuration.gate_profiles import VOLUME_ARMS, G4Profile
from kvgate.configuration.model_profiles import ModelProfile
from kvgate.configuration.references import load_references
from kvgate.record import DeploymentFacts, G3DeploymentRow, SoakFacts, held_little
from kvgate.report.g4_tables import soak_windows
from kvgate.report.model import RunView
from kvgate.report.numbers import cell, duration, human

G1_PROFILE = (
    "none: G1 reads what was delivered against the inventory's bill of materials (hosts.<h>.expect), "
    "the same at every scale"
)

PREFLIGHT_PROFILE = (
    "none: preflight probes, in minutes, what each gate's evidence needs (hosts, volumes' counters, "
    "engines' tiers), the same at every scale"
)


def profile_lines(view: RunView) -> list[tuple[str, str]]:
    """('Profile', …) and what else tells the gate's scope: G1's families and volumes, G2's fio matrix."""
    if view.gate == "g1":
        return [("Profile", G1_PROFILE), *g1_scope(view)]
    if view.gate == "preflight":
        return [("Profile", PREFLIGHT_PROFILE), ("Volumes", volumes(view, sorted(view.record.volumes)))]
    out = [("Profile", view.profile_text)]
    prof = view.record.configuration.gate_profile
    if isinstance(prof, G4Profile):
        order = soak_order(view)
        out += [
            ("Soak length", soak_length(prof.duration_s) + (f"; {order}" if order else "")),
            ("Load", soak_load(prof)),
        ]
    if view.gate == "g2":
        prof = view.record.configuration.gate_profile
        if isinstance(prof, MatrixProfile):
            out.append(("fio matrix", fio_matrix(prof, reached=swept_to(view)) + cv_overrides(view)))
        if ran := view.record.configuration.workload_models:
            out.append(("Workloads", workloads(ran)))
        measured = sorted(view.record.g2_rows)
        out.append(("Volumes", volumes(view, measured) if measured else "none measured"))
    elif view.record.volumes:
        out.append(("Volumes", volumes(view, sorted(view.record.volumes))))
    if served := engines_served(view):
        out.append(("Engines", served))
    return out


def soak_order(view: RunView) -> str:
    """'on localhost, tiny-llama (09:40–09:42 UTC), then tiny-vllm (09:42–09:45 UTC): one after the other,
    never together' — a host's deployments are soaked in turn (kvgate.orchestration.g4.fixtures); a
    reader took the two soaks for one load."""
    spans: dict[str, list[tuple[float, float, str]]] = {}
    for key in view.record.g4_rows:
        host, _, deployment = key.partition("/")
        windows = soak_windows(view.run_dir / "artifacts" / host / "g4" / deployment / "windows.jsonl")
        if windows:
            spans.setdefault(host, []).append(
                (windows[0]["start_unix_s"], windows[-1]["end_unix_s"], deployment)
            )
    said = []
    for host, soaks in sorted(spans.items()):
        if len(soaks) > 1:
            soaks.sort()
            apart = all(b <= c for (_, b, _), (c, _, _) in pairwise(soaks))
            turns = ", then ".join(f"{d} ({clock(a)}–{clock(b)} UTC)" for a, b, d in soaks)
            said.append(
                f"on {host}, {turns}: " + ("one after the other, never together" if apart else "overlapping")
            )
    return "; ".join(said)


def clock(unix_s: float) -> str:
    return time.strftime("%H:%M", time.gmtime(unix_s))


def engines_served(view: RunView) -> str:
    """'localhost/tiny-llama: llama-cpp-disk, llama-cpp-python 0.3.36, serving a Llama generated here …':
    what each G3/G4 deployment ran and served, so a figure is read with the model that made it."""
    rec = view.record
    facts: dict[str, DeploymentFacts | SoakFacts] = {
        k: r.deployment for k, r in rec.g3_rows.items() if isinstance(r, G3DeploymentRow)
    }
    facts |= {k: r.soak for k, r in rec.g4_rows.items()}
    out = []
    for key, f in sorted(facts.items()):
        versions = sorted({e.version for e in rec.engines.get(key, {}).values()})
        engine = f"{f.tier}, {' / '.join(versions)}" if versions else f.tier
        said = f"{key}: {engine}, serving {f.model}" if f.model else f"{key}: {engine}"
        if not f.serves_concurrently:  # a reader took G4's TTFT for the engine's, not the queue's
            said += " — one request at a time: the others wait, so its TTFT is mostly queueing"
        soaking = [n for n in rec.engines.get(key, {}) if n.startswith("soak-")]
        if (
            isinstance(f, SoakFacts) and len(soaking) > 1
        ):  # a reader found 4.35 GB in one engine's 4.29 GB tier
            said += (
                f" — {len(soaking)} engines at once sharing the load, the tier's capacity their tiers' summed"
            )
        out.append(said)
    return "; ".join(out)


def serving_only(view: RunView) -> tuple[str, ...]:
    """Each G3/G4 deployment without a KV tier on the storage, and what its passes cannot say (a reader
    found half of G4's PASSes from such an engine, beside the tiered one's, with nothing said)."""
    rec = view.record
    tiers = {
        k: r.deployment.tier
        for k, r in rec.g3_rows.items()
        if isinstance(r, G3DeploymentRow) and not r.deployment.external_tier
    }
    tiers |= {k: r.soak.tier for k, r in rec.g4_rows.items() if r.figures.cap_bytes is None}
    out = []
    for key, tier in sorted(tiers.items()):
        host, _, name = key.rpartition("/")
        passed = sum(r.host == host and f"[{name}]" in r.check and r.label == "PASS" for r in view.all_rows)
        out.append(
            f"{key} ({tier}) keeps its KV cache in the engine's memory, with no tier on the storage: "
            f"its {passed} passed check{'' if passed == 1 else 's'} say nothing of a KV tier on the storage"
        )
    return tuple(out)


def volume_restores(view: RunView) -> tuple[str, ...]:
    """G3: how fast R2/R3's volume arms restored on each volume (the engine's bytes over its restore time,
    the range over their levels): what a gain between the two volumes measures (a reader found the demo's
    ↓85 % TTFT to be its baseline's 20 MB/s throttle, said nowhere near it)."""
    out = []
    for key, row in sorted(view.record.g3_rows.items()):
        if not isinstance(row, G3DeploymentRow):
            continue
        said = []
        for name in VOLUME_ARMS:
            rates = [
                a.read_bw_gb_per_s
                for arm, a in row.figures.arms.items()
                if arm.partition("@")[0] == name and a.read_bw_gb_per_s is not None
            ]
            if rates:
                low, high = min(rates), max(rates)
                shown = cell(low) if low == high else f"{cell(low)}–{cell(high)}"
                said.append(f"{name} {shown} GB/s")
        if len(said) == len(VOLUME_ARMS):
            out.append(f"{key}: {', '.join(said)}")
    return tuple(out)


def capacity_arms(view: RunView) -> tuple[str, ...]:
    """G3: each deployment whose DRAM cache reused little of the capacity load beside its SSD tier, at the
    level where the SSD tier gained most: what its capacity arms compared (a reader took the demo's
    100 MB DRAM cache, sized below the documents, for DRAM against SSD)."""
    out = []
    for key, row in sorted(view.record.g3_rows.items()):
        if not isinstance(row, G3DeploymentRow):
            continue
        arms = row.figures.arms
        pairs = [
            (arms[name], ssd)
            for name in held_little(arms)
            if (ssd := arms.get(name.replace("dram-only@", "ssd-tier@", 1))) and arms[name].ttft_p50_s
        ]
        if not pairs or not all(s.ttft_p50_s for _, s in pairs):
            continue
        dram, ssd = max(pairs, key=lambda p: (p[0].ttft_p50_s or 0) / (p[1].ttft_p50_s or 1))
        out.append(
            f"{key} ({dram.arm.partition('@')[2]}): prompt tokens reused per round "
            f"{human(dram.hit_tokens_p50)} from DRAM against {human(ssd.hit_tokens_p50)} from the SSD tier; "
            f"TTFT p50 {human(dram.ttft_p50_s, 's')} against {human(ssd.ttft_p50_s, 's')}"
        )
    return tuple(out)


def shared_device(view: RunView) -> str:
    """G3: how many measured loads another reader shared the device with, and one such load's own
    words (its bytes, the host's load and busiest readers); '' on a quiet host (a reader found the
    demo's timings measured beside a test suite, said only in the evidence tables)."""
    arms = [
        a
        for r in view.record.g3_rows.values()
        if isinstance(r, G3DeploymentRow)
        for a in r.figures.arms.values()
    ]
    shared = [(a.arm, q) for a in arms for q in a.qualifications]
    if not shared:
        return ""
    loads = sum(a.trials for a in arms)
    arm, first = shared[0]
    return (
        f"in {len(shared)} of {loads} measured loads the device read far more than the engine: restore "
        f"bandwidths are the engine's own bytes, but those loads' timings carry the other reader's work "
        f"(one of them: {arm} {first})"
    )


# device reads a soak window may have beyond its engines' and its integrity load's (a log, metadata), as
# G3's cold.max_idle_device_bytes: past it, another reader shared the device
SOAK_IDLE_BYTES = 64 * MiB


def hits_from_memory(view: RunView) -> tuple[str, ...]:
    """G4: each deployment whose tier served prompt tokens from cache while its engines read (almost)
    nothing from the device — the hits came from the page cache, so the soak never read its tier from
    the storage under load (a reader found tiny-llama's hit trend 'held' over 0–1 MiB of reads a window)."""
    out = []
    for key, row in sorted(view.record.g4_rows.items()):
        host, _, deployment = key.partition("/")
        windows = soak_windows(view.run_dir / "artifacts" / host / "g4" / deployment / "windows.jsonl")
        hits = sum(h for w in windows if isinstance(h := w.get("hit_tokens"), int | float))
        reads = [r for w in windows if isinstance(r := w.get("engine_read_bytes"), int | float)]
        if row.figures.cap_bytes is None or not hits or len(reads) < len(windows) or sum(reads) > FROM_MEMORY:
            continue
        out.append(
            f"{deployment} on {host}: its tier served {hits:,.0f} prompt tokens from cache over "
            f"{len(windows)} windows while its engines read {sum(reads) / MiB:,.1f} MiB from the device"
        )
    return tuple(out)


FROM_MEMORY = 64 * MiB  # a soak's engines reading less than this while their tier hits: the page cache served


def soak_shared(view: RunView) -> str:
    """G4: in how many windows the device read more than the soak accounts for (its engines' own reads,
    and the integrity load at most its declared share), and the first such window's figures; '' on a
    quiet host (a reader found 208 GB read beside a soak of an engine with no tier, said nowhere)."""
    shared, total = [], 0
    for key, row in sorted(view.record.g4_rows.items()):
        host, _, deployment = key.partition("/")
        for w in soak_windows(view.run_dir / "artifacts" / host / "g4" / deployment / "windows.jsonl"):
            device, engines = w.get("device_read_bytes"), w.get("engine_read_bytes")
            if engines is None and row.figures.cap_bytes is None:
                engines = 0  # no tier on the storage: the engine reads nothing of it during the soak
            if not isinstance(device, int | float) or not isinstance(engines, int | float):
                continue
            total += 1
            integrity = row.integrity.share_bytes_per_s * (
                w["end_unix_s"] - w.get("start_unix_s", w["end_unix_s"])
            )
            if device - engines - integrity > SOAK_IDLE_BYTES:
                shared.append((deployment, w["index"], device, engines, integrity))
    if not shared:
        return ""
    deployment, index, device, engines, integrity = shared[0]
    return (
        f"in {len(shared)} of the {total} soak windows whose engines' reads are known the device read more "
        "than the soak accounts for (its engines' own reads and at most the integrity load's share): those "
        "windows' latency and throughput "
        f"carry another reader's work (the first, {deployment} window {index}: the device read "
        f"{device / MiB:,.0f} MiB, the engines {engines / MiB:,.0f} MiB, the integrity load at most "
        f"{integrity / MiB:,.0f} MiB)"
    )


def g1_scope(view: RunView) -> list[tuple[str, str]]:
    # the families the verdict's coverage counts (a reader found page 2's list and page 1's disagree)
    families = sorted(view.outcome.coverage.bound)
    judged = sorted({r.check.split(".")[0][7:-1] for r in view.all_rows if r.check.startswith("volume[")})
    return [
        ("Hardware families", f"{len(families)}: {', '.join(families)}" if families else "none checked"),
        ("Volumes", volumes(view, judged) if judged else "none declared"),
    ]


def volumes(view: RunView, names: list[str]) -> str:
    """'scratch (candidate): …; baseline (baseline): a throttled loop device …': each volume (or
    host/volume) with its kind and the site's description, as the inventory declared them."""
    out = []
    for name in names:
        entry = view.record.volumes.get(name.rpartition("/")[2])
        if entry is None:
            out.append(name)
            continue
        said = f": {entry.description}" if entry.description else ""
        out.append(f"{name} ({entry.kind}){said}")
    return "; ".join(out)


def cv_overrides(view: RunView) -> str:
    """'; the inventory holds baseline, scratch to CV ≤ 100 %': where a volume's own bound replaces the
    profile's, so the matrix line does not contradict the checks."""
    by_bound: dict[float, list[str]] = {}
    for name, v in sorted(view.record.volumes.items()):
        if v.max_cv is not None:
            by_bound.setdefault(v.max_cv, []).append(name)
    said = [f"{', '.join(names)} to CV ≤ {human(cv, 'ratio')}" for cv, names in by_bound.items()]
    return f"; the inventory holds {'; '.join(said)}" if said else ""


def relaxed_bounds(view: RunView) -> list[str]:
    """'scratch, baseline: repeats' CV ≤ 100 %, where the profile asks ≤ 50 %': each bound the inventory
    loosened past the gate profile's, for "Waivers and overrides" (a reader found the doubled bound beside
    "No check was waived")."""
    prof = view.record.configuration.gate_profile
    if view.gate != "g2" or not isinstance(prof, MatrixProfile):
        return []
    by_bound: dict[float, list[str]] = {}
    for name, v in sorted(view.record.volumes.items()):
        if v.max_cv is not None and v.max_cv > prof.max_cv:
            by_bound.setdefault(v.max_cv, []).append(name)
    asked = human(prof.max_cv, "ratio")
    return [
        f"{', '.join(names)}: repeats' CV ≤ {human(cv, 'ratio')} (volumes.<name>.expect.max_cv), where the "
        f"profile {prof.name} asks ≤ {asked}{needed(view, names, prof.max_cv)}"
        for cv, names in by_bound.items()
    ]


def needed(view: RunView, volumes: list[str], asked: float) -> str:
    """Whether a loosened CV bound changed a verdict: the largest CV measured on those volumes against
    the profile's (a reader asked whether the doubled bound had been needed)."""
    cvs = [
        (float(r.measured_value), r.id)
        for r in view.all_rows
        if r.metric.endswith("_cv")
        and isinstance(r.measured_value, int | float)
        and any(r.check.startswith(f"volume[{v}].") for v in volumes)
    ]
    if not cvs:
        return ""
    most, where = max(cvs)
    shown = human(most, "ratio")
    if most <= asked:
        return f"; the largest CV measured on them, {shown}, is within it: no verdict needed the looser bound"
    past = sum(cv > asked for cv, _ in cvs)
    return f"; {past} CV(s) passed only under the looser bound (the largest, {where}: {shown})"


def swept_to(view: RunView) -> dict[str, int]:
    """Per volume (host/volume), the most I/Os in flight (jobs × depth) its stored sweep reached."""
    return {
        key: max(int(p[-2]) for p in row.sweep)
        for key, row in sorted(view.record.g2_rows.items())
        if row.sweep
    }


def fio_matrix(prof: MatrixProfile, *, reached: Mapping[str, int] | None = None) -> str:
    """'seqread-1m (read, bs 1m, 1 × QD 8), …; 2 repeats, CV ≤ 50 %; sweep …; 3 s runs on 32m files';
    ``reached``: per volume, where its sweep was carried on past the cells (the readers' I/Os in flight)."""
    jobs = [f"{name} ({j.rw}, bs {j.bs}, {j.numjobs} × QD {j.iodepth})" for name, j in prof.jobs.items()]
    text = f"{', '.join(jobs) or 'no fixed jobs'}; {prof.repeats} repeats, CV ≤ {human(prof.max_cv, 'ratio')}"
    if prof.sweep is not None:
        axes = [prof.sweep.sizes, prof.sweep.numjobs, prof.sweep.iodepth]
        cells = len(axes[0]) * len(axes[1]) * len(axes[2])
        shown = " × ".join("/".join(map(str, a)) for a in axes)
        text += f"; sweep bs × jobs × QD {shown} ({cells} cells)"
        most = max(prof.sweep.numjobs) * max(prof.sweep.iodepth)
        past = {key: n for key, n in (reached or {}).items() if n > most}
        if past:
            where = ", ".join(f"{n} on {key}" for key, n in past.items())
            text += (
                f", carried on along the readers' block size to cover the busiest of G2's own readers, each "
                f"volume until its bandwidth stopped growing (I/Os in flight reached: {where}; its cells "
                f"alone reach {most})"
            )
    d = prof.defaults
    direct = "O_DIRECT" if d.direct else "buffered"
    return f"{text}; {d.runtime_s} s runs on {d.size} files, {direct}, {d.ioengine}"


def soak_load(prof: G4Profile) -> str:
    """'16 requests in flight, 1,024-token prompts, 64 tokens out; 50 % turns on 8 shared documents …'."""
    ld, ig = prof.load, prof.integrity
    return (
        f"{ld.concurrency} requests in flight, {ld.prompt_tokens:,}-token prompts, "
        f"{ld.max_tokens} tokens out; "
        f"{human(ld.reuse, 'ratio')} of requests are turns on {ld.documents} shared documents "
        f"({human(ld.prefix_share, 'ratio')} of such a prompt is its document); {prof.canary.prompts} canary "
        f"prompts in every window ({duration(prof.window_s)} of load, closed when its requests have "
        f"finished); beside them an integrity load of at most {human(ig.max_bytes_per_s, 'B/s')} on the "
        f"KV tier's volume, read back and compared (fio's blocks by crc32c, checkpoints and KV chunks by "
        f"{ig.checksum}) in cycles starting at most every {duration(ig.cycle_s)} (each paced to that "
        "share, so a busy volume runs fewer)"
    )


def workloads(models: Mapping[str, ModelProfile]) -> str:
    """What each G2 storage workload read and wrote, in the sizes a reader can check against its rates."""
    said = []
    for workload, m in sorted(models.items()):
        kv, ml, ck = m.kv_restore, m.model_load, m.checkpoint
        # a synthetic model is no engine's: a reader matched the smoke KV's bytes per token against G3's
        # engines and found none
        name = (
            f"{m.name} (synthetic: no G3 engine's model)" if m.kv and m.kv.source == "synthetic" else m.name
        )
        if workload == "kv-restore" and kv is not None and m.kv is not None:
            files = f"{human(m.kv.kv_bytes_per_token, 'B')} per token, {kv.layout} files"
            if kv.layout == "lmcache-chunks":  # exactly the prefix's KV; vLLM's blocks round it up
                files = f"{human(kv.prefix_tokens * m.kv.kv_bytes_per_token, 'B')}: {files}"
            readers = " or ".join(str(r) for r in kv.readers_per_request)
            said.append(
                f"KV restore: {kv.requests} requests at once, each the KV of {kv.prefix_tokens:,} prompt "
                f"tokens of {name} ({files}), read by {readers} readers per request in {mib(kv.io_bytes)} "
                "reads"
            )
        elif workload == "model-load" and ml is not None:
            said.append(
                f"model load: {human(ml.model_bytes, 'B')} of {name} in {ml.shards} safetensors files, "
                f"loaded by one thread of buffered reads, then by {ml.threads} threads of {mib(ml.io_bytes)} "
                "O_DIRECT reads"
            )
        elif workload == "checkpoint" and ck is not None:
            each = "each rank a whole snapshot" if ck.snapshot_per_rank else "split over them"
            said.append(
                f"checkpoint: a {human(ck.snapshot_bytes, 'B')} snapshot by {ck.ranks} ranks ({each}), "
                f"each file fsynced, then read back cold by {ck.readback_threads} threads"
            )
    return "; ".join(said)


def mib(size: int) -> str:
    """An I/O size as the tools state it: '8 MiB', '64 KiB'."""
    return f"{size // MiB} MiB" if size % MiB == 0 else f"{size // 1024} KiB"


def seed_soak_hours() -> float | None:
    """The seed's G4 length (gates/references.yaml context ``g4-soak-duration``: "G4 72h 稳定性")."""
    try:
        found = [c for c in load_references().context if c.id == "g4-soak-duration"]
    except KvgateError:
        return None
    value = found[0].value if found else None
    return float(value) if isinstance(value, int | float) else None


def soak_length(seconds: float) -> str:
    """'2 min of the seed's 72 h: proves the pipeline, not 72 h of stability'."""
    hours = seed_soak_hours()
    if hours is None:
        return duration(seconds)
    if seconds >= hours * 3600:
        return f"{duration(seconds)}: the seed's {hours:g} h or longer"
    return f"{duration(seconds)} of the seed's {hours:g} h: proves the pipeline, not {hours:g} h of stability"
