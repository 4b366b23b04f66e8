"""A real engine in a real container (issue 12): vLLM CPU under podman, as AMD and Ascend labs run it.

The image is the host's own userland: a 10 kB root of symlinks (``podman import``), with
/usr, /etc, the vLLM venv and its interpreter mounted read-only; kvgate mounts the model,
run and cache directories itself. No registry is reachable here, and none is needed.
Lifecycle (start, ready, a completion, crash detection, stop with no container left) and
the evidence: the engine's reads are the container's, with its EngineCore child inside.
This machine's io controller is on cgroup v1 (a hybrid host), so the count falls back to
the container init's session and says so; on a cgroup v2 host it is the container's
``io.stat`` (tests/unit/test_evidence.py).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ports import free_port_pair

from kvgate.configuration.engine_profile import PROFILE_DIR, Container, EngineProfile, load_profile
from kvgate.configuration.inventory.schema import Host
from kvgate.probes.engines import EngineService, Placement
from kvgate.probes.engines.errors import EngineCrashed
from kvgate.probes.engines.model_staging import _tiny_hf
from kvgate.probes.evidence.engines import engine_reads
from kvgate.probes.hostevidence import HostEvidence
from kvgate.transport.local import LocalExecutor

REPO = Path(__file__).resolve().parents[2]
VLLM_PYTHON = Path(os.environ.get("KVGATE_VLLM_PYTHON", REPO / ".venv-vllm" / "bin" / "python"))
# the venv where it really is (a worktree may link .venv-vllm): the path mounted and run inside
VENV = Path(os.path.realpath(VLLM_PYTHON.parents[1]))
IMAGE = "localhost/kvgate-hostroot:test"
HYBRID = "cgroups in hybrid mode not supported"
pytestmark = [
    pytest.mark.engine,
    pytest.mark.timeout(1500),
    pytest.mark.skipif(not VLLM_PYTHON.exists(), reason=f"vLLM not installed at {VLLM_PYTHON}: make engine"),
    pytest.mark.skipif(shutil.which("podman") is None, reason="podman is not installed"),
]


def host_root_image(tmp: Path) -> None:
    """A root of merged-/usr symlinks and empty mount points, imported as an image."""
    root = tmp / "root"
    for d in ("etc", "proc", "sys", "dev", "tmp", "root", "run", "usr", "var/tmp"):
        (root / d).mkdir(parents=True)
    for link in ("bin", "sbin", "lib", "lib64"):
        (root / link).symlink_to(f"usr/{link}")
    with tarfile.open(tmp / "root.tar", "w") as tar:
        tar.add(root, arcname=".")
    subprocess.run(["podman", "import", str(tmp / "root.tar"), IMAGE], check=True, capture_output=True)


def options() -> list[str]:
    """Mounts of the host's userland, and limits within this process's (a container may not raise them)."""
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
    interpreter = Path(os.path.realpath(VLLM_PYTHON)).parents[1]
    mounts = ["/usr:/usr:ro", "/etc:/etc:ro", f"{interpreter}:{interpreter}:ro", f"{VENV}:{VENV}:ro"]
    return [
        *("--ulimit", f"nofile={nofile[0]}:{nofile[1]}", "--ulimit", "nproc=4096:4096", "--shm-size", "2g"),
        *(a for m in mounts for a in ("-v", m)),
    ]


def probe() -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["podman", "run", "--rm", *options(), IMAGE, "true"],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )


def hugetlb_off_cgroup_v2() -> bool:
    """Move hugetlb, the one controller this host leaves on cgroup v2, to its own v1 hierarchy.

    crun runs on a hybrid host only with no controller on v2. Done once, as root, only
    for that exact refusal; it changes no limit of any process.
    """
    controllers = Path("/sys/fs/cgroup/unified/cgroup.controllers")
    if os.geteuid() != 0 or not controllers.exists() or controllers.read_text().split() != ["hugetlb"]:
        return False
    Path("/sys/fs/cgroup/hugetlb").mkdir(exist_ok=True)
    mount = ["mount", "-t", "cgroup", "-o", "hugetlb", "cgroup", "/sys/fs/cgroup/hugetlb"]
    return subprocess.run(mount, check=False, capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def podman_image(tmp_path_factory: pytest.TempPathFactory) -> str:
    host_root_image(tmp_path_factory.mktemp("image"))
    ran = probe()
    if ran.returncode != 0 and HYBRID in ran.stderr and hugetlb_off_cgroup_v2():
        ran = probe()
    if ran.returncode != 0:
        pytest.skip(f"podman cannot run a container on this host: {ran.stderr.strip()[-300:]}")
    return IMAGE


@pytest.fixture
def ex() -> Iterator[LocalExecutor]:
    executor = LocalExecutor()
    yield executor
    executor.close()


def containerized(image: str) -> EngineProfile:
    profile = load_profile(PROFILE_DIR / "vllm-cpu-recompute.yaml")
    container = Container(runtime="podman", image=image, options=options())
    return profile.model_copy(update={"container": container})


def containers_named(name: str) -> str:
    listed = ["podman", "ps", "-a", "--filter", f"name={name}", "--format", "{{.Names}}"]
    return subprocess.run(listed, capture_output=True, text=True, check=True).stdout.strip()


def watch(engine: EngineService) -> None:
    """Check the engine every 0.2 s for a minute (the client exits once the runtime reaped the container)."""
    for _ in range(300):
        engine.ensure_alive()
        time.sleep(0.2)


def test_vllm_in_a_container_serves_is_counted_crashes_loudly_and_leaves_nothing(
    ex: LocalExecutor, podman_image: str, tmp_path: Path
) -> None:
    model = tmp_path / "model"
    shutil.copytree(_tiny_hf(LocalExecutor(), Host(transport="local"), str(VLLM_PYTHON)), model)
    weights = (model / "model.safetensors").stat().st_size
    assert HostEvidence(ex).drop().dropped  # the engine must read its weights from the disk
    placement = Placement(
        run_dir=str(tmp_path / "run"),
        model=str(model),
        cache_dir=str(tmp_path / "cache"),
        port=free_port_pair(),
        python=str(VENV / "bin" / VLLM_PYTHON.name),
    )
    engine = EngineService(ex, containerized(podman_image), placement)
    with engine:
        name = engine.container_name
        assert name
        assert containers_named(name) == name
        body = json.dumps({"prompt": "storage memory engine token " * 20, "max_tokens": 4, "temperature": 0})
        answer = engine.request("POST", "/v1/completions", body=body, timeout_s=300).json()
        assert answer["usage"]["prompt_tokens"] > 20
        init, scope = engine.evidence_target
        assert (scope, init != engine.pid) == ("cgroup", True)  # the container's init, not the podman client
        reads = engine_reads(init, scope)
        print(
            f"\ncontainer {name}: {reads['read_bytes']} B read over {reads['processes']} processes; {reads}"
        )
        assert reads["processes"] >= 2  # the API server and its EngineCore, both inside
        assert reads["read_bytes"] >= weights
        if reads["scope"] == "session":  # this hybrid host: said, not hidden
            assert "has no io.stat" in reads["fallback"]
        subprocess.run(["podman", "kill", name], check=True, capture_output=True)
        with pytest.raises(EngineCrashed):
            watch(engine)
    assert engine.pid is None
    assert containers_named(name) == ""  # --rm: gone with its engine
