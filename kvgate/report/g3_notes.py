"""What G3's tables say beside their numbers: how the arms ran, and what each engine cannot show.

Written at render time from what G3 recorded of a deployment (``g3_rows.<host/deployment>.deployment``:
its tier's name, kind and notes, whether it serves concurrently and has an external tier,
its near-ties and where the load generator ran) and the arms it measured.

>>> loadgen_note(None)[:40]
'The load generator ran on the engine hos'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kvgate.configuration.gate_profiles import CAPACITY_ARMS, READ_ARMS, VOLUME_ARMS, WHOLE_VOLUME_ARMS
from kvgate.record import DeploymentFacts, EngineLaunch

# What kvgate found about an engine kind's tier, and how the protocol copes (said in the report).
KIND_LIMITS = {
    "llama-cpp": (
        "Its disk cache (llama-cpp-python 0.3.36) keeps one prompt's state at a time: a lookup removes "
        "the entry it matches. So each trial runs on a fresh tier directory, the engine's own count of "
        "restored tokens is part of the cold proof, and the capacity arms' ssd-tier runs "
        "llama-cpp-disk-keep, the same server with a cache that keeps what it serves."
    ),
}


ROW_NOTES: tuple[tuple[Callable[[str], bool], str], ...] = (  # (is an arm key of these rows, what they are)
    (
        lambda key: key.endswith("@whole"),
        " Rows <arm>@whole: every engine instance of the host driven together (request i to "
        "instance i mod N), medians over trials of each load's TTFT p50 and output throughput.",
    ),
    (
        lambda key: key.split("@")[0] in CAPACITY_ARMS,
        " Rows dram-only@… / ssd-tier@… (kvgate's own capacity figure, bound to no reference): the same "
        "engine without and with "
        "its SSD tier (its profile's capacity_arms; an engine with no SSD tier has dram-only rows alone), "
        "the same turns over shared documents visited "
        "round-robin (the G3 profile's capacity load), warm-up excluded, the page cache dropped "
        "before each round; medians over rounds of each round's TTFT p50 and output throughput. "
        "Tokens restored: every prompt token the engine reused in the round.",
    ),
    (
        lambda key: key.split("@")[0] in VOLUME_ARMS + WHOLE_VOLUME_ARMS,
        " Rows baseline-volume@c<N> / candidate-volume@c<N> (R2/R3, as the seed's reports measured "
        "them): the same engine's SSD tier on the deployment's baseline volume and on the candidate "
        "(the G3 profile's volume load), its sessions populated once, then per level one wave of "
        "sessions 0..N−1, each read once, the engine made cold and the page cache dropped before it; "
        "each load proven cold by the bytes its own volume's devices and the engine read (-whole: every "
        "instance together, R3).",
    ),
    (
        lambda key: key.split("@")[0] in READ_ARMS,
        " Rows serial-read@c<C> / parallel-read@c<C> (R1): the same C prompts restored cold by the "
        "deployment's serial and parallel tier reader (engines.<name>.cold_read), each on a fresh tier; "
        "restore read GB/s = the engine's own read bytes / time from the load's start to its last first "
        "token.",
    ),
)


def caches_note(launches: Mapping[str, EngineLaunch]) -> str:
    """' KV caches as launched: dram-only (llama-cpp-ram): no tier …; ssd-tier, …': each capacity and
    volume arm's cache beside its figures (a reader found the 100 MB RAM bound only in a command line)."""
    by_profile: dict[tuple[str, str], list[str]] = {}
    for arm, launch in sorted(launches.items()):
        if launch.kv_cache and arm in (*CAPACITY_ARMS, *VOLUME_ARMS):
            by_profile.setdefault((launch.profile, launch.kv_cache), []).append(arm)
    said = [
        f"{', '.join(arms)} ({profile}): {cache.rstrip('.')}" for (profile, cache), arms in by_profile.items()
    ]
    return f" KV caches as launched: {'; '.join(said)}." if said else ""


def limits_note(where: str, d: DeploymentFacts, arms: list[str], launches: Mapping[str, EngineLaunch]) -> str:
    """What this engine cannot show, said plainly in the report."""
    tier = d.tier
    conc = (
        f"{tier} serves one request at a time: a load of C requests at once (rows <arm>@c<C>) queued "
        "and was served one by one, so its TTFT is mostly queueing, and the R2/R3 concurrency gains "
        "(conc 8/16) are not evaluable on it."
        if not d.serves_concurrently
        else f"{tier} serves requests concurrently: the arms ran one prompt per trial, then at each "
        "concurrency level (rows <arm>@c<C>: medians over trials of each load's TTFT p50 and output "
        "throughput)."
    )
    conc += "".join(note for rows, note in ROW_NOTES if any(rows(k) for k in arms))
    if not d.external_tier:
        conc += (
            f" {tier} has no external KV tier: only recompute and warm (DRAM prefix cache) were measured, "
            "so every SSD-restore verdict is not evaluable on it."
        )
    if not d.capacity_figure:
        conc += (
            " kvgate's own capacity figure (the engine without its SSD tier against with it, bound to no "
            "reference) was not run: the inventory turns it off (engines.<name>.capacity_figure: false)."
        )
    if ties := d.near_ties:
        conc += (
            f" {len(ties)} cached output(s) differed from recompute's only from a near-tied token "
            "on (each side's token in the other's top-k logprobs), tolerated as vLLM's own tests do "
            f"(check_logprobs_close); first: {ties[0]}."
        )
    kind = KIND_LIMITS.get(d.kind, "")
    conc += caches_note(launches)
    said = f"{conc} {loadgen_note(d.loadgen_address)} {d.tier_notes.strip()} {kind}"
    return f"{where}: {said}".strip()


def loadgen_note(address: str | None) -> str:
    """Where the client ran, which decides whether TTFT includes the lab network."""
    if address is None:
        return "The load generator ran on the engine host (127.0.0.1): TTFT excludes the lab network."
    return (
        f"The load generator ran on the control node, reaching the engines at {address} "
        "(engines.<name>.loadgen: controller): TTFT includes the network path."
    )


EVIDENCE_NOTE = (
    "Counters bracketing exactly the measured request. Device bytes are those of the devices that carry "
    "the candidate volume (a multipath head's paths, an LV's disks; on NFS, the client's reads from the "
    "server) and count every reader during the window (another tenant's I/O can only raise them; a few "
    "percent below the engine's is accounting: a process's bytes count when its reads, readahead included, "
    "are submitted, a device's when they complete, and a throttled device may still be reading at the "
    "window's end); engine "
    "bytes are summed over every process the engine started (its session; in a container, its cgroup's "
    "reads of the volume's devices, or on NFS its init's session). "
    "Tokens restored: the engine's own count (its log). Tier growth: the tier directory after "
    "populate, against prompt tokens × the model's state bytes per token. Restore read GB/s: the engine's "
    "bytes over the request's TTFT (one prompt), or over the time to a load's last first token; that time "
    "holds the engine's queueing and compute too, so the figure is a floor of what the storage delivered, "
    "not its read rate (G2 measures that)."
)
NOTE = (
    "One prompt per trial, each with its own salt. ssd-restore: populate on a fresh tier directory on the "
    "candidate volume, check write-through, restart the engine and drop the page cache, then send the prompt "
    "again with the volume's device counters, the engine's process-tree read bytes and its hit counter "
    "bracketing "
    "exactly that request. warm: the same prompt once more without restart. Arms run one after the other "
    "(every recompute trial, then the tier engines'), never two engines at once. TTFT percentiles over "
    "the trials (numpy linear, as vllm bench serve); CV = population std / mean, in %. Completion tokens: "
    "llama-cpp-python sends no usage when streaming, so every request must end by length (max_tokens); "
    "prompt tokens are counted with the engine's tokenizer."
)
