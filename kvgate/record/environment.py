"""What run.json keeps of the environment: G1's manifest and tool versions per host, the waivers in force.

>>> HostManifest.model_validate({"host": "gpu-1", "cpu_cores": 64, "nics": ["eth0 up"]}).cpu_cores
64
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

Number = int | float  # int first: a count stays a count (the report prints what was stored)


class HostManifest(BaseModel):
    """One host's summary for the report's environment manifest (kvgate.orchestration.g1.plan.manifest).

    Its keys are typed; keys an earlier kvgate wrote beside them are kept as they were, for the report.
    """

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    host: str = ""
    cpu_model: str | None = None
    cpu_sockets: int | None = None
    cpu_cores: int | None = None
    cpu_threads: int | None = None
    mem_total_gib: Number | None = None
    os: str | None = None
    kernel: str | None = None
    nvme_devices: list[str] = []
    nvmeof_subsystems: list[str | None] = []
    nvmeof_paths: list[str] = []
    array_write_cache: list[str] = []  # each array namespace's volatile write cache, as the array reports it
    nics: list[str] = []
    rdma_ports: list[str] = []
    gpus: list[str] = []
    gpu_drivers: dict[str, str | None] = {}
    clock: str | None = None
    tools: dict[str, str | None] = {}
    missing_tools: list[str] = []


ToolVersions = dict[str, str | None]  # tool → its version (None: it printed none)


class WaiverRecord(BaseModel):
    """A waiver of the waivers file in force, as the run recorded it (kvgate.configuration.waivers.Waiver)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    rule: str | None = None
    check: str | None = None
    hosts: list[str] = ["*"]
    reason: str
    approver: str
    expires: str | None = None  # an ISO date
