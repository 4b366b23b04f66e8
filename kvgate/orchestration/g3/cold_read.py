"""G3 cold read with a serial and with a parallel tier reader (R1: TTFT 4.1×, read bandwidth 5.3×).

R1 is a software patch: LMCache reading a request's chunks from disk in parallel
instead of one after another, on the same card, tier and storage. A deployment
names both readers as engine profiles (``engines.<x>.cold_read: {serial, parallel}``)
and where they run as the seed ran them: one card, TP 1 (``placement``: its environment
and arguments, not the deployment's), on R1's model where it names one; the gate profile
says how to load them (``cold_read:``, about 10k-token prompts at 16 in flight at full
scale). A reader with more than one tensor-parallel rank is several readers, so the plan
refuses it. Per trial (its own salt), for each reader in turn:

- a fresh engine of that profile on a fresh tier directory gets C prompts at
  concurrency C (populate: nothing is cached, so its outputs are computed); its
  tier directory must grow by what the prompts' state bytes predict;
- restart, drop the page cache, the same C prompts again: **serial-read** or
  **parallel-read** at ``@c<C>``, bracketed by the candidate volume's device read
  bytes, the engine's process-tree read bytes and its hit tokens — the cold proof of
  the ssd-restore arm, INVALID with the numbers when it fails.

The restored outputs must equal the populate outputs (near-ties aside, as
everywhere in G3). Read bandwidth of a load: the engine's own read bytes (its process
tree's) over the time from the load's start to its last first token, when every restore
is done (LoadTrial.read_bw_gb_per_s); the device's bytes prove the load cold and show
another reader of the device. The same definition for both readers, so their ratio is R1's.
"""

from __future__ import annotations

from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.gate_profiles import READ_ARMS
from kvgate.orchestration.g3.context import DeploymentContext
from kvgate.orchestration.g3.load_arms import LoadTrial, load_trial, output_mismatches
from kvgate.orchestration.g3.tier_loads import TierLoads
from kvgate.probes.loadgen import Comparison


def populate_arm(arm: str) -> str:
    """Where the populate load of a reader's trials is kept (its outputs are the expected ones)."""
    return f"{arm} populate"


class _NoCounters:
    """A populate load is not measured: no counters bracket it."""

    hit_tokens: int | None = None
    device_read_bytes: int | None = None
    server_ttft_mean_s: float | None = None


class ColdReadRun(TierLoads):
    """The cold-read trials of one deployment on one host (see the module docstring)."""

    phase, artifacts, warm = "cold read", "cold-read", False

    def __init__(self, ctx: DeploymentContext, readers: dict[str, EngineProfile]) -> None:
        cr = ctx.profile.cold_read
        assert cr is not None
        assert tuple(readers) == READ_ARMS
        super().__init__(
            ctx,
            ctx.setup.read,
            concurrency=cr.concurrency,
            trials=cr.trials,
            prompt_tokens=cr.prompt_tokens or ctx.profile.prompt_tokens,
            usage=all(p.streams_usage for p in readers.values()),
        )
        self.readers = readers

    def run(self) -> dict[str, list[LoadTrial]]:
        """Arm → trials: the two readers, and each reader's populate loads."""
        for t in range(self.trials_n):
            salt = f"{self.setup.salt}/cold-read/trial-{t}"
            for arm, profile in self.readers.items():
                doc = self.tier_cycle(profile, arm, f"read-{t}-{arm}", t, salt, tokens=None)
                populated = load_trial(
                    populate_arm(arm),
                    self.concurrency,
                    t,
                    salt,
                    doc=doc,
                    bracket=_NoCounters(),
                    min_hit=0,
                    client=self.ctx.profile.client,
                )
                self.out.setdefault(populate_arm(arm), []).append(populated)
        return self.out


def run_cold_read(ctx: DeploymentContext, readers: dict[str, EngineProfile]) -> dict[str, list[LoadTrial]]:
    """Every trial of the cold-read phase; arm → trials."""
    return ColdReadRun(ctx, readers).run()


def read_mismatches(trials: dict[str, list[LoadTrial]]) -> Comparison:
    """Each reader's restored outputs against its populate outputs."""
    return sum(
        (output_mismatches(trials, expected_arm=populate_arm(arm), arms=(arm,)) for arm in READ_ARMS),
        Comparison(),
    )


def measured_arms(trials: dict[str, list[LoadTrial]]) -> dict[str, list[LoadTrial]]:
    """The readers' measured loads (the populate loads are evidence, not arms)."""
    return {a: ts for a, ts in trials.items() if a in READ_ARMS}
