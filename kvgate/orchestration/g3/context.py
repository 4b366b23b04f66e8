"""What every arm of one deployment on one host shares: where it runs, its profile, and what the run found.

The protocol (:mod:`kvgate.orchestration.g3.protocol`) makes one ``DeploymentContext`` and hands it
to each arm (capacity, volumes, cold read, the tier loads); an arm reads it and never reaches back
into the protocol that called it. ``Setup`` is the deployment resolved before anything runs; the
context adds what the first engine and the work directory tell (the served model's id, the tokenizer's
tokens per word, the candidate volume's device) and the load generator's site.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.gate_profiles import G3Profile
from kvgate.configuration.inventory import engine_port
from kvgate.orchestration.g3 import client
from kvgate.probes.engines import EngineService, Placement
from kvgate.probes.evidence import Resolved
from kvgate.probes.hostevidence import HostEvidence
from kvgate.probes.scratch import ScratchDir
from kvgate.record import EngineLaunch
from kvgate.transport import Executor


@dataclass(frozen=True)
class Phase:
    """Where one phase's engines run and on what, when not as the deployment's first instance (R1)."""

    env: dict[str, str] = field(default_factory=dict)
    args: tuple[str, ...] = ()
    model: str | None = None  # None: the deployment's model
    state_bytes_per_token: int | None = None  # with ``model``


@dataclass(frozen=True)
class Setup:
    """One engine deployment on one host, resolved: profiles, interpreter, model, where, salt."""

    deployment: str
    tier: EngineProfile
    recompute: EngineProfile
    python: str
    model: str
    work: ScratchDir  # on the candidate volume (checked); the tier directories live below it
    port: int  # the first engine's; the others in slots port_span apart (EngineDeployment.engine_port)
    state_bytes_per_token: int
    sudo: bool
    salt: str  # unique to the run, host and deployment
    envs: tuple[dict[str, str], ...] = ({},)  # per engine instance; the per-instance arms run on the first
    engine_args: tuple[str, ...] = ()  # appended to every engine's launch command (inventory engine_args)
    readers: dict[str, EngineProfile] = field(default_factory=dict)  # R1: serial-read/parallel-read → profile
    read: Phase = field(default_factory=Phase)  # R1's readers: where, and on which model
    capacity: dict[str, EngineProfile] = field(default_factory=dict)  # dram-only/ssd-tier → profile
    capacity_env: dict[str, str] = field(default_factory=dict)  # the capacity levels' engine: its env …
    capacity_args: tuple[str, ...] = ()  # … and arguments (default: the first instance's, engine_args)
    capacity_figure: bool = (
        True  # inventory engines.<name>.capacity_figure: false, the capacity arms do not run
    )
    # inventory loadgen: controller — the engine host's address as the controller reaches it
    loadgen_address: str | None = None  # None: the load generator runs on the engine host
    # R2/R3: the deployment's baseline volume (name) and a work directory there (checked); None: not run
    baseline: tuple[str, ScratchDir] | None = None
    candidate: str = ""  # the candidate volume's name
    port_span: int = 2  # EngineDeployment.port_span: LMCache's API range of the widest TP it runs

    @property
    def work_dir(self) -> str:
        return self.work.path


class Sink(Protocol):
    """Where the protocol stores evidence as it goes and reports progress."""

    def save(self, name: str, text: str) -> str: ...
    def notify(self, event: str) -> None: ...
    def engine(self, arm: str, record: EngineLaunch) -> None: ...


@dataclass
class DeploymentContext:
    """One deployment on one host as its arms see it; the protocol fills in what it finds as it runs."""

    ex: Executor
    setup: Setup
    profile: G3Profile
    sink: Sink
    he: HostEvidence = field(init=False)
    site: client.LoadSite | None = None  # set when the protocol starts
    volume: Resolved | None = None  # the candidate work directory's device, once created
    model_id: str = ""  # the served model, from the first engine up
    tokens_per_word: float = 1.0  # the tokenizer's, calibrated on the first engine

    def __post_init__(self) -> None:
        self.he = HostEvidence(self.ex, python=self.setup.python, sudo=self.setup.sudo)

    @property
    def load_site(self) -> client.LoadSite:
        assert self.site is not None, "run() sets the load site up"
        return self.site

    def placement(self, name: str, slot: int, *, under: str | None = None) -> Placement:
        """Where engine ``name`` runs: its own run and cache directories (below ``under``, default the
        candidate's work directory), the port of its ``slot`` (instance i: 2i, a recompute engine: 1)."""
        base = f"{under or self.setup.work_dir}/{name}"
        return Placement(
            run_dir=f"{base}/run",
            model=self.setup.model,
            cache_dir=f"{base}/cache",
            port=engine_port(self.setup.port, slot, self.setup.port_span),
            python=self.setup.python,
            host="127.0.0.1" if self.setup.loadgen_address is None else "0.0.0.0",  # from the controller
        )

    def tokens(self, eng: EngineService, prompt: str) -> int | None:
        """The prompt's length in the engine's own tokens (its profile's tokenize); None: it counted none."""
        tok = eng.profile.tokenize
        return eng.count_tokens(tok.path, tok.field, prompt)
