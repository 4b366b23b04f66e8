"""The preflight plan: what is probed on which host, and what each probe must show.

>>> from kvgate.configuration.gateconfig import in_memory
>>> from kvgate.configuration.inventory import Inventory
>>> inv = Inventory.model_validate({"site": "s", "hosts": {"h": {"roles": ["storage-client"]}},
...     "volumes": {"v": {"path": "/mnt/v", "kind": "candidate", "scratch": True}}})
>>> [c.check for c in plan(in_memory(inv))]
['ssh', 'sudo', 'agent-python', 'volume[v].counters', 'volume[v].nfs']
"""

from __future__ import annotations

from kvgate.base.criteria import Criterion
from kvgate.configuration.gateconfig import GateConfig
from kvgate.configuration.inventory import Inventory
from kvgate.judgement import Check, Ruling
from kvgate.orchestration.preflight.measure import model_loads_of, started_arms
from kvgate.probes.engines import reads_in_parallel

NFS_TYPES = ("nfs", "nfs4")


PreflightCheck = Check[None]  # one probe on one host; key: the probe's own name


def _check(
    host: str, check: str, criterion: tuple[str, str, str, object, str, str], skip: str | None = None
) -> PreflightCheck:
    rule, metric, comparator, expected, unit, source = criterion
    return Check(
        host=host,
        check=check,
        criterion=Criterion(rule, metric, comparator, expected, unit, source=source),
        spec=None,
        key=check,
        ruled=Ruling.skip(skip) if skip else None,
    )


SSH = ("PF-HOST-1", "command_round_trip_s", ">=", 0, "s", "a command runs over the host's transport")
SUDO = ("PF-HOST-2", "sudo_ok", "==", True, "", "sudo -n true (drop caches, nvme smart-log)")
PYTHON = (
    "PF-HOST-3",
    "agent_python",
    "version>=",
    "3.8",
    "",
    "the agent and load generator need python3 >= 3.8",
)
COUNTERS = (
    "PF-VOL-1",
    "counters_moved_ratio",
    ">=",
    1.0,
    "x",
    "an O_DIRECT read of N MiB moves the counters that stand for the volume by at least N (by more when "
    "another reader shares the device: its reads are counted too)",
)
NFS_CACHE = (
    "PF-VOL-2",
    "nfs_server_cache",
    "in",
    ("dropped", "ram_gib declared"),
    "",
    "every cold read the gates plan on the volume: after a drop of the server's page cache over SSH, "
    "or larger than its declared RAM (an agent workload: only larger)",
)
START = (
    "PF-ENG-1",
    "ready_s",
    ">",
    0,
    "s",
    "the deployment's tier engine (its tier_profile) starts and answers: seconds from launch to ready",
)
METRICS = (
    "PF-ENG-2",
    "named_counters_missing",
    "==",
    0,
    "missing",  # "0 missing": a reader read "= 0 counters" as a check that expects none
    "its /metrics has every counter its profile names (its hit counters, which G3 and G4 read)",
)
TOKENIZER = ("PF-ENG-3", "tokenizer_ok", "==", True, "", "its tokenizer endpoint (tokenize) counts a prompt")
TIER_CYCLE = (
    "PF-ENG-4",
    "restore_read_ratio",
    ">=",
    0.9,
    "x",
    "one prompt populated, made cold the profile's way, restored from the SSD with hits; the ratio is the "
    "storage's bytes for the restore (the less of the device's and the engine's) over the prompt's KV bytes",
)


READ_POOL = (
    "PF-ENG-5",
    "read_pool",
    "==",
    True,
    "",
    "the installed LMCache reads a request's disk chunks in parallel, as R1's parallel reader asks",
)
ARM_START = (
    "PF-ENG-6",
    "engine_start",
    "matches",
    "^ready in ",
    "",
    "every other engine G3 starts for the deployment (each distinct launch once; <arm>#N: its instance N, "
    "from 0, where the deployment runs several) starts and answers",
)

MODEL_LOAD_START = (
    "PF-ENG-7",
    "engine_start",
    "matches",
    "^ready in ",
    "",
    "R9's model load starts from its copy on a candidate volume and answers; its other copies exist",
)


def host_checks(inv: Inventory, host: str) -> list[PreflightCheck]:
    no_sudo = None if inv.hosts[host].sudo else "the inventory does not allow sudo here (sudo: false)"
    return [
        _check(host, "ssh", SSH),
        _check(host, "sudo", SUDO, no_sudo),
        _check(host, "agent-python", PYTHON),
    ]


def volume_checks(inv: Inventory, host: str, volume: str) -> list[PreflightCheck]:
    fstype = inv.volumes[volume].fstype
    not_nfs = None if fstype in NFS_TYPES else f"the inventory does not declare it NFS (fstype: {fstype})"
    return [
        _check(host, f"volume[{volume}].counters", COUNTERS),
        _check(host, f"volume[{volume}].nfs", NFS_CACHE, not_nfs),
    ]


def deployment_checks(config: GateConfig, host: str, name: str) -> list[PreflightCheck]:
    tier = config.engine(config.inventory.inventory.engines[name].tier_profile)
    no_tier = None if tier.cache else f"{tier.name} has no SSD tier (cache: null): no tier cycle to probe"
    # an engine without /metrics names no counter there: a PASS of "0 missing of 0" would check nothing
    no_metrics = (
        f"{tier.name} has no /metrics (metrics: null): no counter to read"
        if not tier.metrics
        else None
        if tier.hit_counter or tier.warm_hit_counter
        else f"{tier.name} names no counter on its /metrics (hit_counter): none to read"
    )
    d = f"engine[{name}]"
    return [
        _check(host, f"{d}.start", START),
        _check(host, f"{d}.metrics", METRICS, no_metrics),
        _check(host, f"{d}.tokenizer", TOKENIZER),
        _check(host, f"{d}.tier-cycle", TIER_CYCLE, no_tier),
        _check(host, f"{d}.read-pool", READ_POOL, no_parallel_reader(config, name)),
        *(_check(host, f"{d}.start[{arm}]", ARM_START) for arm in started_arms(config, name)),
    ]


def no_parallel_reader(config: GateConfig, name: str) -> str | None:
    """Why the deployment has no parallel reader to probe (None: it has one)."""
    cold_read = config.inventory.inventory.engines[name].cold_read
    if cold_read is None:
        return "the deployment names no R1 readers (cold_read:)"
    if not reads_in_parallel(config.engine(cold_read.parallel)):
        return f"{cold_read.parallel} does not ask LMCache for parallel disk reads (disk_io_threads)"
    return None


def plan(config: GateConfig) -> list[PreflightCheck]:
    """Every probe of every host: the host, its volumes, the engine deployments and R9 model loads it runs."""
    inventory, checks = config.inventory.inventory, []
    for host in inventory.hosts:
        checks += host_checks(inventory, host)
        for volume in inventory.volumes_of(host):
            checks += volume_checks(inventory, host, volume)
        for name in inventory.engines:
            if host in inventory.engine_hosts(name):
                checks += deployment_checks(config, host, name)
        checks += [
            _check(host, f"model-load[{n}].start", MODEL_LOAD_START) for n in model_loads_of(inventory, host)
        ]
    return checks
