"""A serving engine in a container on the lab's NVMe-oF head: a prompt's KV state restored from its tier.

The engine profile llama-cpp-disk-lab (llama-cpp-disk in podman on the client guest: its userland as
the image, llama-cpp-python's server from lab/engine_site.py), run by kvgate's EngineService over SSH
as G3 runs it, the tiny model staged beside it, its disk tier on the multipath head. One prompt populates
the tier; the engine is stopped, the client's page cache dropped, a new engine started, and the
same prompt restored. kvgate's two accountings of that restore, side by side on a real kernel:
the container's cgroup ``io.stat`` (the engine's own bytes, on the head) and the head's paths in
diskstats (the device's bytes); both at least the state the tier stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from labfixture import lab_vm  # noqa: F401 (the session fixture `lab`)
from labkvgate import INVENTORY, with_engine

from kvgate.configuration.engine_profile import engine_profile
from kvgate.configuration.gateconfig import load_config
from kvgate.probes.engines import EngineService, Placement
from kvgate.probes.engines.model_staging import MODEL_CACHE
from kvgate.probes.engines.tinymodel import TinyLlamaSpec, ensure_tiny_gguf
from kvgate.probes.evidence import Counts
from kvgate.probes.hostevidence import HostEvidence
from kvgate.transport import Executor, connect
from lab import labctl
from lab.guests import CLIENT

pytestmark = pytest.mark.timeout(3600)  # the site's build (~6 min), then TCG: ~1 prompt token a second

TIER = "/mnt/array/kvgate/engine-tier"  # on the NVMe/TCP multipath head
RUN = "/var/tmp/kvgate-engine-run"
PROMPT = " ".join(["storage", "memory", "engine", "token"] * 16)  # ~64 tokens: a minute of TCG prefill


def on_client(command: str, timeout: float = 300) -> str:
    done = labctl.ssh(CLIENT, command, timeout=timeout)
    assert done.returncode == 0, f"{command}: {done.stderr}"
    return done.stdout


@pytest.fixture
def client(lab: dict[str, object]) -> Iterator[Executor]:
    """The client guest with the engine's site, the tiny model and the guest-root image; kvgate's executor."""
    model = ensure_tiny_gguf(MODEL_CACHE)  # generated here once per spec; its name carries its digest
    with_engine({guest_model(model): model})
    on_client(f"rm -rf {TIER} {RUN} && mkdir -p {TIER} {RUN}")
    inv = load_config(INVENTORY).inventory.inventory
    ex = connect(CLIENT.name, inv.hosts[CLIENT.name])
    try:
        yield ex
    finally:
        ex.close()
        on_client(f"rm -rf {TIER} {RUN}")


def engine(ex: Executor) -> EngineService:
    """llama-cpp-disk-lab: podman, the guest's /usr and /etc and the engine's site read-only."""
    profile = engine_profile("llama-cpp-disk-lab")
    model = guest_model(ensure_tiny_gguf(MODEL_CACHE))
    return EngineService(ex, profile, Placement(run_dir=RUN, model=model, cache_dir=TIER, port=18200))


def guest_model(here: Path) -> str:
    return f"/opt/kvgate-models/{here.name}"


def complete(service: EngineService) -> dict[str, object]:
    body = json.dumps({"prompt": PROMPT, "max_tokens": 2, "temperature": 0})
    return dict(service.request("POST", "/v1/completions", body=body, timeout_s=1800).json())


def test_an_engine_in_a_container_restores_its_kv_from_the_nvmeof_head_counted_two_ways(
    client: Executor,
) -> None:
    he = HostEvidence(client, sudo=True)
    volume = he.resolve(TIER)
    with engine(client) as populate:
        first = complete(populate)
    stored = int(on_client(f"du -sb {TIER}/.cache/llama_cache | cut -f1"))
    tokens = first["usage"]["prompt_tokens"]  # type: ignore[index]
    assert stored >= tokens * TinyLlamaSpec().llama_cpp_state_bytes_per_token  # the prompt's state, saved
    assert he.drop().dropped
    with engine(client) as restore:
        before = he.snapshot(volume, engines=(restore.evidence_target,))
        again = complete(restore)
        after = he.snapshot(volume, engines=(restore.evidence_target,))
        log = restore.read_log()
    assert again["choices"] == first["choices"]  # type: ignore[index]  # the same greedy output
    counts = Counts.between(before, after)
    record = after["engines"][0]
    print(f"tier {stored} B for {tokens} tokens; {counts}; {record}")  # recorded in docs/lab-vm.md
    assert "cache hit" in log, log[-2000:]  # llama-cpp-python restored the state, not a new prefill
    assert counts.counted_on == "nvme0c0n1+nvme0c1n1"  # the head's two paths
    assert record["scope"] == "cgroup"
    assert record["where"].startswith("/machine.slice/libpod-")
    assert counts.engines_counted[0].endswith("io.stat, its reads of the volume's devices")
    assert counts.engine_read_bytes is not None
    assert counts.device_read_bytes is not None
    assert counts.engine_read_bytes >= 0.9 * stored  # the engine read its state back from the head
    assert counts.device_read_bytes >= counts.engine_read_bytes  # and the paths carried it
