"""Engine profiles: how to launch, probe, reset and scrape one serving engine, as data.

A profile is a YAML file under ``workloads/engines/``; a site adds its own engine, of a
family kvgate has not seen too, without code: the profile says what kvgate needs to know of it
(its package, its tokenizer, where it counts its cache hits, which tiny model it serves).
Templates may use these placeholders, filled in at launch:

    {python} {model} {port} {host} {cache_dir} {run_dir}

Files written into the run directory (``files:``) have plain names; a config in a
data format is declared as data (``{format: yaml, data: {...}}``) and a JSON
argument as ``{json: {...}}``, both serialized at launch, so a volume path can
never change their structure (kvgate.configuration.engine_templates).

>>> p = load_profile(PROFILE_DIR / "llama-cpp-disk.yaml")
>>> p.kind, p.package, p.tiny_model, p.tokenize.path, p.serves_concurrently
('llama-cpp', 'llama_cpp', 'gguf', '/extras/tokenize', False)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from kvgate.base.config_file import Frozen, Shipped, load_model, repo_root
from kvgate.base.errors import ConfigError
from kvgate.configuration.engine_series import selector
from kvgate.configuration.engine_templates import (
    PLACEHOLDERS,
    Arg,
    DataFile,
    FileName,
    FileSpec,
    as_file,
    check_plain,
    check_template,
    check_values,
    fill,
    holes,
    render_arg,
)
from kvgate.configuration.inventory import API_PORT_OFFSET, Environment, Regex, tensor_parallel

PROFILE_DIR = repo_root() / "workloads" / "engines"
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


class Tokenize(Frozen):
    """How to count a prompt's tokens with the engine's own tokenizer (response: {"tokens": [...]})."""

    path: str = Field(pattern="^/")
    field: str = "input"


class HttpCall(Frozen):
    """One HTTP call on the engine host, e.g. ``POST /reset_prefix_cache``."""

    method: str = Field(default="GET", pattern="^(GET|POST|PUT|DELETE)$")
    path: str = Field(pattern="^/")
    body: str = ""
    timeout_s: float = Field(default=10.0, gt=0)
    # the call goes to the engine's port + this: 0 is the engine itself; LMCache's internal API server's
    # worker 0 listens at {api_port} + 1 (API_PORT_OFFSET + 1), where its config puts it
    port_offset: int = Field(default=0, ge=0, le=API_PORT_OFFSET + 64)
    # called once per tensor-parallel rank, at port_offset + rank (LMCache runs one worker, with its
    # own CPU tier and API server, per rank)
    each_rank: bool = False


class Container(Frozen):
    """Run the engine in a container, as AMD (ROCm) and Ascend labs ship vLLM and SGLang.

    kvgate runs ``<runtime> run --rm --network host`` attached, with the model (read-only),
    the run and cache directories mounted at their own paths and the profile's environment
    passed in; the profile's ``launch`` is the command inside the image. The engine's reads
    are counted on the container's cgroup (kvgate.probes.evidence.engines), not on the client process.
    """

    runtime: Literal["docker", "podman"] = "docker"
    image: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._/:@-]*$")
    options: list[str] = Field(default_factory=list)  # devices, groups, --shm-size, --ipc=host …

    @field_validator("options")
    @classmethod
    def _option_holes(cls, v: list[str]) -> list[str]:
        return [check_plain(o) for o in v]


class CacheTier(Frozen):
    """Where the engine's external KV tier lives and how it behaves."""

    kv_dir: str = Field(description="template of the directory the KV files land in (under {cache_dir})")
    capacity_bytes: int | None = Field(default=None, ge=0)
    description: str

    @field_validator("kv_dir")
    @classmethod
    def _known_holes(cls, v: str) -> str:
        return check_template(v)


ProfileName = str  # a profile's file stem under workloads/engines (checked where it is loaded)


class CapacityArms(Frozen):
    """G3's capacity arms (R2/R3): how this engine runs without its SSD tier, and with it.

    ``dram_only``: the same engine with its HBM/DRAM prefix cache on and no SSD tier (the seed's
    baseline for its capacity gains); ``ssd_tier``: the profile that runs the arm with the tier
    (None: this one), for an engine whose own tier profile cannot hold a document set.
    """

    dram_only: ProfileName = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    ssd_tier: ProfileName | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9._-]*$")


class EngineProfile(Frozen):
    """A serving engine as data: argv template, env, endpoints, tier, caveats."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    # the engine's family: what gate profiles key their per-engine settings by (G3's volumes.engine)
    # and what the report calls it; kvgate's code keys nothing by it
    kind: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    # the Python package an engine on the host must import (checked before a start); None: it runs
    # in a container, whose image holds it
    package: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$")
    # `model: tiny` in the inventory: the Llama kvgate generates, as GGUF (llama.cpp) or in Hugging
    # Face's format (vLLM); None: the inventory must name the model
    tiny_model: Literal["gguf", "hf"] | None = None
    tokenize: Tokenize  # its tokenizer endpoint: prompts are sized in the engine's own tokens
    description: str
    launch: list[Arg] = Field(min_length=1)
    env: Environment = Field(default_factory=dict)
    workdir: str = "{run_dir}"
    files: dict[FileName, FileSpec] = Field(default_factory=dict, description="name -> file, put in run_dir")
    version_cmd: list[str] = Field(default_factory=list)
    ready: HttpCall
    metrics: HttpCall | None = None
    # Prometheus counter of prompt tokens served from cache instead of computed: the external
    # tier's hits on a tier profile, the DRAM prefix cache's on a warm-only one. None: unknown.
    # A selector may name labels: 'vllm:prompt_tokens_cached_by_source_total{source="disk"}'
    hit_counter: str | None = None
    # the counter for the warm arm (state still resident, e.g. in the GPU prefix cache, which the
    # external tier's counter does not count); None: hit_counter
    warm_hit_counter: str | None = None
    # for an engine without a hit counter (llama-cpp-python): the log format whose lines say the prompt
    # tokens it restored and its prompts' size (kvgate.probes.agent.engine_log.FORMATS); None: none
    hit_log: Literal["llama-cpp"] | None = None
    # Prometheus histogram of the engine's own time to first token, in seconds (vLLM:
    # vllm:time_to_first_token_seconds, from the request's arrival): reported beside the client's
    ttft_histogram: str | None = None
    # its inter-token latency and per-request time per output token histograms, in seconds (vLLM:
    # vllm:inter_token_latency_seconds, vllm:request_time_per_output_token_seconds; SGLang has the
    # first): beside the client's ITL and TPOT for every load (kvgate.probes.engines.latency)
    itl_histogram: str | None = None
    tpot_histogram: str | None = None
    # regex on the engine log whose group 1 is the weight-load time in seconds (model loading
    # separated from the rest of start-up); None: the engine does not log it
    weights_log: Regex | None = None
    reset: list[HttpCall] = Field(default_factory=list)
    # how G3 makes a populated tier cold before a restore: `restart` the engine (its GPU and CPU caches
    # go with the process; the tier must find its files again on start), or `reset`: call the `reset`
    # endpoints, which empty the GPU and CPU caches and keep the SSD tier (stock LMCache forgets its disk
    # index on restart, LMCache #1175). Either way the page cache is dropped and the evidence decides.
    cold_by: Literal["restart", "reset"] = "restart"
    cache: CacheTier | None = None
    container: Container | None = None  # None: the engine runs on the host, under setsid
    capacity_arms: CapacityArms | None = None  # None: G3's capacity bindings are not measurable on it
    serves_concurrently: bool
    # the streamed completion ends with a `usage` chunk (stream_options.include_usage); False
    # (llama-cpp-python): G3 counts output tokens from the chunks and prompt tokens with the tokenizer
    streams_usage: bool = True
    # the request field this engine honours to generate exactly max_tokens (kvgate.probes.loadgen.run
    # FIXED_OUTPUT), so an answer without a token is a fault, never the model's own EOS; None: none
    fixed_output: Literal["ignore_eos", "min_tokens"] | None = "ignore_eos"
    ready_timeout_s: float = Field(default=600.0, gt=0)
    stop_timeout_s: float = Field(default=30.0, gt=0)
    notes: str = ""

    @field_validator("launch", "version_cmd")
    @classmethod
    def _argv_holes(cls, v: list[Arg]) -> list[Arg]:
        return [check_plain(a) if isinstance(a, str) else a for a in v]

    @field_validator("env")
    @classmethod
    def _env_holes(cls, v: dict[str, str]) -> dict[str, str]:
        return {k: check_plain(t) for k, t in v.items()}

    @field_validator("files", mode="before")
    @classmethod
    def _text_files(cls, v: Any) -> Any:
        return {k: as_file(k, f) for k, f in v.items()} if isinstance(v, dict) else v

    @field_validator("weights_log")
    @classmethod
    def _one_group(cls, v: str | None) -> str | None:
        """Compiled on load; its one group is the seconds (a second group would make each match a tuple)."""
        if v is not None and re.compile(v).groups != 1:
            raise ValueError("expected a regular expression with exactly one group: the seconds")
        return v

    @field_validator("hit_counter", "warm_hit_counter")
    @classmethod
    def _selector(cls, v: str | None) -> str | None:
        if v is not None:
            selector(v)  # a ValueError names the field in the ConfigError
        return v

    def counter(self, *, resident: bool = False) -> tuple[str, dict[str, str]] | None:
        """The hit counter's series selector for a cold (or, ``resident``, a warm) load; None: none."""
        text = (self.warm_hit_counter or self.hit_counter) if resident else self.hit_counter
        return selector(text) if text and self.metrics else None

    @model_validator(mode="after")
    def _package_unless_contained(self) -> EngineProfile:
        if self.package is None and self.container is None:
            raise ValueError(
                "package: the Python package the host imports, unless the engine runs in a container"
            )
        return self

    @model_validator(mode="after")
    def _cold_by_reset_needs_endpoints(self) -> EngineProfile:
        if self.cold_by == "reset" and not self.reset:
            raise ValueError("cold_by: reset needs the reset endpoints that empty the GPU/CPU caches")
        return self

    @model_validator(mode="after")
    def _control_api_on_loopback(self) -> EngineProfile:
        """LMCache's internal API server listens on every interface by default and clears caches or runs
        scripts for anyone who asks: a profile that enables it binds it to loopback."""
        for name, spec in self.files.items():
            data = spec.data if isinstance(spec, DataFile) else None
            if (
                data
                and data.get("internal_api_server_enabled")
                and (data.get("internal_api_server_host") not in LOOPBACK)
            ):
                bound = data.get("internal_api_server_host", "0.0.0.0 (LMCache's default)")
                raise ValueError(
                    f"files.{name}: LMCache's internal API server is enabled on {bound}: "
                    "set internal_api_server_host: 127.0.0.1 (kvgate calls it on the host)"
                )
        return self

    @field_validator("workdir")
    @classmethod
    def _workdir_holes(cls, v: str) -> str:
        return check_template(v)

    def render(self, values: Mapping[str, str]) -> Launch:
        """Fill every template with the placement's values; data files and JSON arguments are serialized."""
        check_values(values, self.name)
        return Launch(
            argv=tuple(render_arg(a, values) for a in self.launch),
            env={k: fill(t, values) for k, t in self.env.items()},
            workdir=fill(self.workdir, values),
            files={name: spec.render(values) for name, spec in self.files.items()},
            version_argv=tuple(fill(a, values) for a in self.version_cmd),
            container=None if self.container is None else self._containerized(values),
        )

    def _containerized(self, values: Mapping[str, str]) -> tuple[str, ...]:
        """The runtime's arguments before the image: mounts, host network, the profile's options."""
        assert self.container is not None
        mounts = [
            f"{values['model']}:{values['model']}:ro",
            *(f"{values[d]}:{values[d]}" for d in ("run_dir", "cache_dir")),
        ]
        return (
            self.container.runtime,
            "run",
            "--rm",
            "--network",
            "host",
            *(a for m in mounts for a in ("-v", m)),
            *(fill(o, values) for o in self.container.options),
        )


@dataclass(frozen=True)
class Launch:
    """A profile rendered for one placement: exactly what runs on the host."""

    argv: tuple[str, ...]
    env: dict[str, str]
    workdir: str
    files: dict[str, str]
    version_argv: tuple[str, ...]
    container: tuple[str, ...] | None = None  # the container runtime's run command, up to the image


def load_profile(path: Path) -> EngineProfile:
    """Load and validate one profile; errors name the file and the field."""
    profile = load_model(path, EngineProfile)
    if profile.name != path.stem:
        raise ConfigError(str(path), "name", f"must match the file name {path.stem!r}, got {profile.name!r}")
    return profile


# ``engine_profile(name)``: a shipped profile, read once (configuration.gateconfig checks the names first)
engine_profile = Shipped(PROFILE_DIR, load_profile)


def load_profiles(directory: Path = PROFILE_DIR) -> dict[str, EngineProfile]:
    """Every ``*.yaml`` profile in a directory, by name."""
    return {p.stem: load_profile(p) for p in sorted(directory.glob("*.yaml"))}


__all__ = [
    "PLACEHOLDERS",
    "PROFILE_DIR",
    "CacheTier",
    "CapacityArms",
    "EngineProfile",
    "HttpCall",
    "Launch",
    "Tokenize",
    "fill",
    "holes",
    "load_profile",
    "load_profiles",
    "tensor_parallel",
]
