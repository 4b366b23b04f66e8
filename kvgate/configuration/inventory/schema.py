"""The inventory: the lab's hosts, volumes and bill of materials, typed and frozen.

Every model forbids unknown keys, so a typo is an error naming its field path
instead of an expectation that is silently never checked.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from kvgate.base.config_file import Frozen, field_error
from kvgate.base.criteria import COMPARATORS
from kvgate.configuration.bounds import (
    BytesPerToken,
    Celsius,
    Count,
    Events,
    GbPerS,
    Gib,
    Kiops,
    Mbps,
    Millis,
    Mtu,
    Seconds,
)
from kvgate.configuration.inventory.fields import (
    Environment,
    Name,
    ProxyJump,
    Regex,
    ToolName,
    canonical_volume_path,
    scratch_path_problem,
)
from kvgate.configuration.inventory.ports import engine_port, port_span

CLUSTER = "cluster"  # the host name of checks on the whole lab, never an inventory host nor measured itself


class Role(StrEnum):
    GPU_NODE = "gpu-node"
    STORAGE_CLIENT = "storage-client"
    STORAGE_TARGET = "storage-target"  # the array or NFS server's own host: G1, and its cache dropped
    ENGINE = "engine"
    CONTROL = "control"


class VolumeKind(StrEnum):
    CANDIDATE = "candidate"  # the array under test
    BASELINE = "baseline"  # NFS or local disk to compare against


class VolumeExpect(Frozen):
    """G2 criteria for a volume; unset ones are recorded as the site baseline without a threshold."""

    min_seq_read_gb_per_s: GbPerS | None = Field(default=None, gt=0)
    min_seq_write_gb_per_s: GbPerS | None = Field(default=None, gt=0)
    min_rand_read_kiops: Kiops | None = Field(default=None, gt=0)
    max_rand_read_p99_ms: Millis | None = Field(default=None, gt=0)
    # minimum sequential read as a fraction of the host's RDMA NIC line rate (BOM nics)
    line_rate_fraction: float | None = Field(default=None, gt=0, le=1)
    max_cv: float | None = Field(default=None, gt=0)  # default: the workload profile's
    min_kv_restore_gb_per_s: GbPerS | None = Field(default=None, gt=0)
    min_model_load_gb_per_s: GbPerS | None = Field(default=None, gt=0)
    min_checkpoint_write_gb_per_s: GbPerS | None = Field(default=None, gt=0)


class NfsServer(Frozen):
    """An NFS volume's server, so its cache can be controlled (see kvgate.probes.nfs_server)."""

    host: Name | None = None  # an inventory host: kvgate drops its page cache over SSH before cold reads
    ram_gib: Gib | None = Field(default=None, gt=0)  # else: a data set larger than this defeats its cache


class Volume(Frozen):
    """A mount under test; writes go only under `path` and only if `scratch` is true."""

    path: str = Field(max_length=4096, description="absolute directory on the host")
    kind: VolumeKind
    # what the volume is, in the site's words: every report names it (a stand-in, a throttle, a filer)
    description: str | None = Field(default=None, min_length=1, max_length=300)
    scratch: bool = False
    device: str | None = Field(default=None, pattern=r"^/dev/")
    fstype: str | None = None  # expected filesystem type, e.g. xfs, nfs4
    mount_options: tuple[str, ...] = ()  # options that must be present, e.g. noatime
    min_free_gib: Gib | None = Field(default=None, ge=0)
    hosts: tuple[str, ...] = ()  # empty: every host with the storage-client role
    nfs_server: NfsServer | None = None  # an NFS volume's server (its cache is DRAM outside the storage)
    expect: VolumeExpect = Field(default_factory=VolumeExpect)

    @field_validator("path")
    @classmethod
    def _canonical(cls, v: str) -> str:
        return canonical_volume_path(v)

    @model_validator(mode="after")
    def _scratch_target(self) -> Volume:
        """What can be known from the file alone; a host-side check resolves links at run time."""
        problem = scratch_path_problem(self.path) if self.scratch else None
        if problem is not None:
            raise field_error(
                ("path",), f"{problem} (scratch: true lets gates write and delete there)", self.path
            )
        return self


class ToolConstraint(Frozen):
    """`fio: ">= 3.28"` → comparator and version."""

    comparator: str
    version: str


def parse_constraint(text: str) -> ToolConstraint:
    m = re.fullmatch(r"\s*(>=|==)\s*([0-9][0-9A-Za-z.\-+]*)\s*", text)
    if not m:
        raise ValueError(f"expected a version constraint like '>= 3.28' or '== 2.11', got {text!r}")
    return ToolConstraint(comparator=f"version{m[1]}", version=m[2])


class CpuExpect(Frozen):
    model: Regex | None = None  # regex searched in lscpu's model name
    sockets: Count | None = Field(default=None, ge=1)
    cores: Count | None = Field(default=None, ge=1)  # physical cores, all sockets
    threads: Count | None = Field(default=None, ge=1)  # logical CPUs


class MemoryExpect(Frozen):
    total_gib: Gib = Field(gt=0)
    tolerance: float = Field(default=0.05, ge=0, le=0.5)  # firmware reserves some memory


class OsExpect(Frozen):
    id: str | None = None  # os-release ID, e.g. ubuntu
    version: Regex | None = None  # os-release VERSION_ID, regex
    kernel: Regex | None = None  # regex on uname -r


class NvmeExpect(Frozen):
    count: Count = Field(ge=0)  # 0: the host has no NVMe (checks SKIP)
    model: Regex | None = None
    firmware: Regex | None = None
    capacity_gb: Gib | None = Field(default=None, gt=0)  # per device, decimal GB
    max_temperature_c: Celsius = 70.0
    max_percentage_used: int = Field(default=90, ge=0, le=255)


class NicExpect(Frozen):
    name: Regex  # interface name regex, e.g. "^ens1f[01]$"
    count: Count = Field(default=1, ge=1)
    speed_mbps: Mbps | None = Field(default=None, gt=0)
    mtu: Mtu | None = Field(default=None, ge=576)
    driver: str | None = None
    rdma: bool = False  # must have an RDMA device with an ACTIVE port


class GpuExpect(Frozen):
    vendor: Literal["nvidia", "amd", "ascend"] | None = None
    count: Count = Field(ge=0)  # 0: the host has no GPU (checks SKIP)
    model: Regex | None = None
    driver: str | None = None  # constraint, e.g. ">= 550"
    # G1 accelerator detail (issue 14): what `count` counts, per-device memory, AMD firmware,
    # partition modes and XGMI (amd-smi); Ascend health is a kvgate rule on every NPU chip
    count_unit: Literal["devices", "cards"] = "devices"  # devices: as the runtime lists them (an
    # Ascend chip, an AMD partition); cards: physical boards (a 910 NPU with two chips is one card)
    min_memory_gib: Gib | None = Field(default=None, gt=0)  # VRAM/HBM per device
    firmware: Regex | None = None  # regex on the VBIOS/IFWI version amd-smi reports
    compute_partition: Literal["SPX", "DPX", "QPX", "CPX"] | None = None  # AMD Instinct
    memory_partition: Literal["NPS1", "NPS2", "NPS4", "NPS8"] | None = None
    xgmi: bool = False  # AMD: every pair of GPUs joined by an enabled XGMI link

    @field_validator("driver")
    @classmethod
    def _driver(cls, v: str | None) -> str | None:
        if v is not None:
            parse_constraint(v)
        return v

    @model_validator(mode="after")
    def _vendor(self) -> GpuExpect:
        if self.count > 0 and self.vendor is None:
            raise ValueError("vendor is required when count > 0 (nvidia, amd or ascend)")
        return self


class NvmeofExpect(Frozen):
    subsystems: Count = Field(ge=0)  # 0: no NVMe-oF on this host (checks SKIP)
    transport: Literal["rdma", "tcp", "fc"] = "rdma"
    min_live_paths: Count = Field(default=1, ge=1)
    # G1 path quality and the array's BOM (issue 14); a timeout bound left unset is not checked
    min_optimized_paths: Count = Field(default=1, ge=0)  # ANA optimized paths per subsystem (0: off)
    iopolicy: Literal["numa", "round-robin", "queue-depth"] | None = None  # native multipath
    min_ctrl_loss_tmo_s: Seconds | None = Field(default=None, ge=0)  # "off" (retry forever) passes
    max_reconnect_delay_s: Seconds | None = Field(default=None, gt=0)
    max_fast_io_fail_tmo_s: Seconds | None = Field(default=None, ge=0)  # "off" fails: I/O waits out the loss
    min_io_queues: Count | None = Field(default=None, ge=1)  # per controller
    persistent: bool = True  # discovery.conf/config.json + nvmf-autoconnect bring the array back
    max_transport_errors: Events | None = Field(default=0, ge=0)  # kernel log since boot; None: off
    model: Regex | None = None  # regex on the array's namespaces
    firmware: Regex | None = None
    capacity_gb: Gib | None = Field(default=None, gt=0)  # per namespace, decimal GB
    # the array's volatile write cache as its namespaces report it (NVMe VWC: the kernel's write_cache);
    # unset: recorded in the environment manifest, not judged
    write_cache: Literal["write back", "write through"] | None = None


# -- G1 fabric, placement and host tuning (issue 14) ----------------------------------------


class RoceExpect(Frozen):
    """RoCEv2 lossless setup of the storage interfaces: the BOM's `nics` with `rdma: true`."""

    priority: int = Field(default=3, ge=0, le=7)  # the storage traffic's priority: PFC and ECN on it
    trust: Literal["dscp", "pcp"] = "dscp"
    ecn: bool = True  # DCQCN: roce_np and roce_rp enabled on `priority`
    addresses: tuple[str, ...] = ()  # storage IPs that need a RoCE v2 GID; empty: any IPv4 GID
    cm_mode: Literal["RoCE v2", "IB/RoCE v1"] = "RoCE v2"  # rdma_cm's default GID type
    active_mtu: Literal[256, 512, 1024, 2048, 4096] = 4096  # the RoCE path MTU (netdev MTU >= 4200)
    max_rx_discards: Events = Field(default=0, ge=0)  # G2: NIC discards + buffer overruns in the baseline


class NumaExpect(Frozen):
    """Where storage NICs and GPUs sit: a GPU group far from its storage NIC crosses the socket."""

    nodes: Count | None = Field(default=None, ge=1)  # NUMA nodes the OS sees (sockets × NPS)
    max_remote_gpu_groups: Count = Field(
        default=0, ge=0
    )  # engine GPU groups with no storage NIC on their node


class TuningExpect(Frozen):
    """Host settings the engines need (AMD MI300X system optimization guide, ROCm docs)."""

    min_shm_gib: Gib | None = Field(default=None, gt=0)  # /dev/shm size
    kernel_cmdline: tuple[str, ...] = ()  # tokens on /proc/cmdline, e.g. iommu=pt
    numa_balancing: bool | None = None  # False: /proc/sys/kernel/numa_balancing reads 0
    user_groups: tuple[str, ...] = ()  # the SSH user's groups, e.g. [video, render] for /dev/kfd and /dev/dri


class Expectations(Frozen):
    """The bill of materials for a host (or a group of hosts)."""

    cpu: CpuExpect | None = None
    memory: MemoryExpect | None = None
    os: OsExpect | None = None
    nvme: NvmeExpect | None = None
    nics: tuple[NicExpect, ...] = ()
    gpus: GpuExpect | None = None
    nvmeof: NvmeofExpect | None = None
    tools: dict[ToolName, str] = Field(default_factory=dict)  # name -> ">= 3.28"
    max_clock_offset_ms: Millis | None = Field(default=None, gt=0)
    pcie_full_link: bool = True  # NVMe/NIC/GPU links must train at their capable speed/width
    roce: RoceExpect | None = None
    numa: NumaExpect | None = None
    tuning: TuningExpect | None = None

    @field_validator("tools")
    @classmethod
    def _tools(cls, v: dict[str, str]) -> dict[str, str]:
        for text in v.values():
            parse_constraint(text)
        return v

    def merged(self, override: Expectations) -> Expectations:
        """Group expectations overridden field by field by the host's own."""
        data = self.model_dump(exclude_unset=True)
        data.update(override.model_dump(exclude_unset=True))
        return Expectations.model_validate(data)


class Host(Frozen):
    """One machine of the lab and how to reach it."""

    address: str = Field(default="localhost", min_length=1, max_length=253)
    transport: Literal["ssh", "local"] = "ssh"
    port: int = Field(default=22, ge=1, le=65535)
    user: str | None = None
    key_file: str | None = None  # None: ssh-agent / ~/.ssh/config identities
    proxy_jump: ProxyJump | None = None  # "user@bastion:22"; ~/.ssh/config ProxyJump also honoured
    known_hosts: str | None = None  # default ~/.ssh/known_hosts
    trust_on_first_use: bool = False  # accept and record an unknown host key
    sudo: bool = False  # may run `sudo -n` (drop caches, nvme smart-log)
    connect_timeout_s: float = Field(default=15, gt=0, le=3600)
    roles: tuple[Role, ...] = ()
    groups: tuple[str, ...] = ()
    expect: Expectations = Field(default_factory=Expectations)

    @property
    def explicit_port(self) -> int | None:
        """The port the inventory names; None lets ~/.ssh/config's (or 22) apply (a transport HostRoute)."""
        return self.port if "port" in self.model_fields_set else None


ProfileName = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=100)]


# -- G3 per-phase placement (issue 13): where a phase's engine runs, when not as the deployment's first
# instance with its engine_args — R1 on one card at TP 1, R2's capacity levels at TP8 -----------------


class PhasePlacement(Frozen):
    """The environment (e.g. its GPUs) and engine arguments of one G3 phase's engine.

    They replace the first instance's environment and the deployment's ``engine_args``.
    """

    env: Environment = Field(default_factory=dict)
    engine_args: tuple[str, ...] = ()


class ColdReadProfiles(Frozen):
    """The serial and the parallel reader of one tier: engine profiles (workloads/engines/<name>.yaml).

    R1 ran on one card at TP 1 with Qwen2.5-32B: ``placement`` (default: no extra environment and
    no engine_args, so one device at TP 1), and ``model`` where it is not the deployment's.
    """

    serial: ProfileName
    parallel: ProfileName
    placement: PhasePlacement = Field(default_factory=PhasePlacement)
    model: str | None = Field(default=None, pattern=r"^/.+")  # a host path; None: the deployment's
    state_bytes_per_token: BytesPerToken | None = Field(default=None, gt=0)  # required with model

    @model_validator(mode="after")
    def _model_size(self) -> ColdReadProfiles:
        if self.model is not None and self.state_bytes_per_token is None:
            raise ValueError("state_bytes_per_token is required with the readers' own model")
        return self


class EngineDeployment(Frozen):
    """G3: one serving engine per engine host, its external KV tier on a candidate volume.

    Two engine profiles (``workloads/engines/<name>.yaml``) form the arms: the tier
    profile (ssd-restore, warm) and the recompute profile (same engine, no external tier).
    """

    hosts: tuple[str, ...] = ()  # empty: every host with the engine role
    tier_profile: ProfileName
    recompute_profile: ProfileName
    volume: str  # a scratch candidate volume: the KV tier lives under <path>/kvgate-g3/<host>/
    # R2/R3 as the seed measured them: the same tier on this scratch baseline volume (the seed's local
    # NVMe) against the candidate; None: their rows are not measurable. R9 and the checkpoint compare
    # against another baseline volume (the seed's NFS), never this one
    baseline_volume: str | None = None
    model: str = Field(default="tiny", pattern=r"^(tiny|/.+)$")  # "tiny": generated locally, or a host path
    state_bytes_per_token: BytesPerToken | None = Field(
        default=None, gt=0
    )  # bytes the tier stores per prompt token
    # the engine's interpreter; None: the controller's own (local), python3 (ssh). A relative path
    # with a "/" is relative to the inventory file (for a venv beside it on a local host)
    python: str | None = None
    port: int = Field(default=18000, ge=1024, le=65534)  # the first engine's; the others port_span apart
    # G3 R9 by the engine: volume name → path of a copy of the model on that volume (a lab model;
    # the tiny model is copied by kvgate). A volume without a copy: that engine load is INVALID
    model_copies: dict[str, str] = Field(default_factory=dict)
    # the engine instances on each host: a count, or one entry per instance with its extra
    # environment (e.g. {HIP_VISIBLE_DEVICES: "0,1,2,3"}); two or more: G3 also drives them all
    # together (whole machine, R3's TP4×2). Instance i: tier engine in slot 2i, recompute in 2i + 1
    instances: tuple[Environment, ...] = Field(default=({},), min_length=1, max_length=64)
    # R1 (LMCache's parallel-read patch): two tier profiles of the same engine and tier, its reader
    # serial in one and parallel in the other; G3 restores the same prompts cold with each
    cold_read: ColdReadProfiles | None = None
    # where the capacity arms' levels run (R2's TTFT row: TP8 on the whole node); None: as the first
    # instance, with engine_args. The whole-machine rounds always run on every instance
    capacity: PhasePlacement | None = None
    # kvgate's own capacity figure (the engine without its SSD tier against with it, the capacity
    # arms): bound to no reference and judged by no check, it costs half of a smoke G3 and hours at
    # full scale; false: not run, and the report says so
    capacity_figure: bool = True
    # appended to the launch command of every engine of this deployment: what the site's hardware
    # needs beyond the profile, e.g. ["--tensor-parallel-size", "4"] for R3's TP4 instances
    engine_args: tuple[str, ...] = ()
    # where the load generator runs: on the engine host (the lab network stays out of TTFT), or on
    # the control node, reaching each engine at its host's `address` (engines then listen on every
    # address of their host), when the network path is part of what the site wants measured
    loadgen: Literal["host", "controller"] = "host"

    @field_validator("instances", mode="before")
    @classmethod
    def _count_or_envs(cls, value: object) -> object:
        """A count N stands for N instances without extra environment."""
        if isinstance(value, bool) or not isinstance(value, int):
            return value
        if not 1 <= value <= 64:
            raise ValueError("a count of engine instances is 1..64")
        return tuple({} for _ in range(value))

    @property
    def instance_envs(self) -> tuple[dict[str, str], ...]:
        """One extra environment per engine instance."""
        return self.instances

    @property
    def port_span(self) -> int:
        """Ports between two of this deployment's engines: the widest range any of its placements opens."""
        placed = [p.engine_args for p in (self.capacity, self.cold_read and self.cold_read.placement) if p]
        return port_span(self.engine_args, *placed)

    def engine_port(self, slot: int) -> int:
        """The port of the engine in ``slot``: instance i in slot 2i, a recompute engine beside it: 2i + 1."""
        return engine_port(self.port, slot, self.port_span)

    @model_validator(mode="after")
    def _model_size(self) -> EngineDeployment:
        if (last := self.engine_port(2 * len(self.instance_envs) - 1)) > 65535:
            raise ValueError(
                f"port {self.port}: the last instance's recompute engine would be at {last}, past 65535"
            )
        if self.model != "tiny" and self.state_bytes_per_token is None:
            raise ValueError("state_bytes_per_token is required for a model other than 'tiny'")
        return self


# -- G3 R9 service load (issue 13): a model's engine started cold from its copy on each volume ------------


class ModelLoad(Frozen):
    """R9: one model served by one engine profile, started cold from its copy on a candidate and a baseline.

    The seed's R9 is service load on Ascend (DeepSeek-32B 691 s → 112 s, 70B 1399 s → 150 s, against
    NFS): the time to a ready endpoint, the weight load within it shown beside.
    """

    hosts: tuple[str, ...] = Field(min_length=1)
    profile: ProfileName  # workloads/engines/<name>.yaml, e.g. vllm-ascend
    copies: dict[str, str] = Field(min_length=2)  # volume name → the model's path on that volume
    python: str | None = None  # the engine's interpreter; None: python3 (ssh) or the controller's (local)
    env: Environment = Field(default_factory=dict)  # e.g. {ASCEND_RT_VISIBLE_DEVICES: "0,1,2,3"}
    engine_args: tuple[str, ...] = ()  # e.g. ["--tensor-parallel-size", "4"]
    port: int = Field(default=18300, ge=1024, le=65535)

    @field_validator("copies")
    @classmethod
    def _paths(cls, v: dict[str, str]) -> dict[str, str]:
        bad = [k for k, path in v.items() if not path.startswith("/")]
        if bad:
            raise ValueError(f"copies of {', '.join(bad)}: expected an absolute path on the host")
        return v


class Inventory(Frozen):
    """A whole lab: validated once on load (see `kvgate.configuration.inventory.load`)."""

    site: Name
    scale: Literal["full", "smoke"] = "full"  # workload sizes: the lab's, or seconds-long smoke runs
    hosts: dict[Name, Host] = Field(min_length=1)
    groups: dict[Name, Expectations] = Field(default_factory=dict)
    volumes: dict[Name, Volume] = Field(default_factory=dict)
    engines: dict[Name, EngineDeployment] = Field(default_factory=dict)  # G3 engine deployments
    model_loads: dict[Name, ModelLoad] = Field(default_factory=dict)  # G3 R9 service loads
    # G4's profile (workloads/g4/<name>.yaml) when the scale's does not fit the lab: the QEMU lab's
    # TCG guests serve a prompt token a second, so a smoke soak's 512-token prompts never finish
    g4_profile: ProfileName | None = None
    # hosts probed at once (default: all of them); a site whose control node or bastion cannot hold
    # that many SSH sessions sets a limit
    max_parallel_hosts: int | None = Field(default=None, ge=1, le=10_000)

    @model_validator(mode="after")
    def _references(self) -> Inventory:
        for name, host in self.hosts.items():
            for g in host.groups:
                if g not in self.groups:
                    raise ValueError(f"hosts.{name}.groups: group {g!r} is not defined under groups")
        for vname, vol in self.volumes.items():
            for h in vol.hosts:
                if h not in self.hosts:
                    raise ValueError(f"volumes.{vname}.hosts: host {h!r} is not defined under hosts")
            server = vol.nfs_server.host if vol.nfs_server else None
            if server is not None and server not in self.hosts:
                raise ValueError(
                    f"volumes.{vname}.nfs_server.host: host {server!r} is not defined under hosts"
                )
        for ename, dep in self.engines.items():
            self._check_engine(ename, dep)
        for mname, ml in self.model_loads.items():
            self._check_model_load(mname, ml)
        return self

    def _check_model_load(self, name: str, ml: ModelLoad) -> None:
        for h in ml.hosts:
            if h not in self.hosts:
                raise ValueError(f"model_loads.{name}.hosts: host {h!r} is not defined under hosts")
        kinds = set()
        for v in ml.copies:
            if v not in self.volumes:
                raise ValueError(f"model_loads.{name}.copies: volume {v!r} is not defined under volumes")
            if not self.volumes[v].scratch:
                why = "the engine's run directory goes there"
                raise ValueError(f"model_loads.{name}.copies: volume {v!r} is not scratch; {why}")
            kinds.add(self.volumes[v].kind)
        if kinds != {VolumeKind.CANDIDATE, VolumeKind.BASELINE}:
            raise ValueError(
                f"model_loads.{name}.copies: expected a copy on a candidate and on a baseline volume"
            )

    def model_load_volumes(self, name: str) -> tuple[str, str]:
        """(candidate, baseline): the volumes of the first copy of each kind of model load ``name``."""
        copies = self.model_loads[name].copies
        cand = next(v for v in copies if self.volumes[v].kind is VolumeKind.CANDIDATE)
        return cand, next(v for v in copies if self.volumes[v].kind is VolumeKind.BASELINE)

    def _check_engine(self, name: str, dep: EngineDeployment) -> None:
        vol = self.volumes.get(dep.volume)
        if vol is None:
            raise ValueError(f"engines.{name}.volume: volume {dep.volume!r} is not defined under volumes")
        if vol.kind is not VolumeKind.CANDIDATE:
            raise ValueError(f"engines.{name}.volume: {dep.volume!r} is a {vol.kind} volume, not a candidate")
        if not vol.scratch:
            raise ValueError(
                f"engines.{name}.volume: {dep.volume!r} is not scratch; the KV tier writes there"
            )
        for h in dep.hosts:
            if h not in self.hosts:
                raise ValueError(f"engines.{name}.hosts: host {h!r} is not defined under hosts")
        if dep.baseline_volume is not None:
            self._check_baseline(name, dep.baseline_volume)
        if dep.loadgen == "controller":
            for h in self.engine_hosts(name):
                if self.hosts[h].proxy_jump:
                    raise ValueError(
                        f"engines.{name}.loadgen: controller needs a direct route to host {h!r}, "
                        f"which is reached through proxy_jump {self.hosts[h].proxy_jump!r}; use loadgen: host"
                    )

    def _check_baseline(self, name: str, volume: str) -> None:
        vol, field = self.volumes.get(volume), f"engines.{name}.baseline_volume"
        if vol is None:
            raise ValueError(f"{field}: volume {volume!r} is not defined under volumes")
        if vol.kind is not VolumeKind.BASELINE:
            raise ValueError(f"{field}: {volume!r} is a {vol.kind} volume, not a baseline")
        if not vol.scratch:
            raise ValueError(f"{field}: {volume!r} is not scratch; the KV tier writes there")

    def loadgen_address(self, name: str, host: str) -> str | None:
        """Where the controller reaches deployment ``name``'s engines on ``host``; None: loadgen there."""
        if self.engines[name].loadgen == "host":
            return None
        h = self.hosts[host]
        return "127.0.0.1" if h.transport == "local" else h.address

    def engine_hosts(self, name: str) -> tuple[str, ...]:
        """The hosts an engine deployment runs on: its own list, or every host with the engine role."""
        dep = self.engines[name]
        return dep.hosts or tuple(h for h, host in self.hosts.items() if Role.ENGINE in host.roles)

    def expectations(self, host: str) -> Expectations:
        """The host's BOM: its groups' expectations in order, then its own."""
        result = Expectations()
        for g in self.hosts[host].groups:
            result = result.merged(self.groups[g])
        return result.merged(self.hosts[host].expect)

    def line_rate_bytes_per_s(self, host: str) -> float | None:
        """Sum of the BOM's RDMA NIC line rates on a host, in bytes/s (G2's and the planner's bound)."""
        nics = [n for n in self.expectations(host).nics if n.rdma and n.speed_mbps]
        return sum(n.speed_mbps * n.count for n in nics if n.speed_mbps) * 125_000 if nics else None

    def volumes_of(self, host: str) -> dict[str, Volume]:
        """Volumes mounted on a host (all storage clients by default)."""
        is_client = Role.STORAGE_CLIENT in self.hosts[host].roles
        return {n: v for n, v in self.volumes.items() if host in v.hosts or (not v.hosts and is_client)}


__all__ = [
    "CLUSTER",
    "COMPARATORS",
    "ColdReadProfiles",
    "EngineDeployment",
    "Expectations",
    "Host",
    "Inventory",
    "ModelLoad",
    "PhasePlacement",
    "Role",
    "Volume",
    "VolumeKind",
]
