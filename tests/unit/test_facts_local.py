"""Collectors run for real on this machine through LocalExecutor (no doubles, no recorded text)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvgate.base.errors import CommandFailed, Interrupted, ToolMissing, TransportError
from kvgate.configuration.inventory.schema import Volume
from kvgate.probes.facts import (
    FAMILIES,
    Collected,
    HostContext,
    HostFacts,
    collect_host,
    counters,
    mounts,
    odirect,
    tools,
)
from kvgate.probes.facts.base import ParseError, run_text
from kvgate.transport.base import CommandResult
from kvgate.transport.local import LocalExecutor


def volume(path: Path | str, *, scratch: bool) -> Volume:
    return Volume(path=str(path), kind="candidate", scratch=scratch)


def ctx(**volumes: Volume) -> HostContext:
    return HostContext(host="localhost", volumes=volumes, sudo=False)


@pytest.fixture(scope="module")
def this_host() -> HostFacts:
    return collect_host(
        LocalExecutor(), HostContext(host="localhost", volumes={}, sudo=False, tools=("chronyc",))
    )


def test_collect_host_covers_every_family_in_order() -> None:
    seen: list[str] = []
    facts = collect_host(LocalExecutor(), ctx(), on_family=seen.append)
    assert seen == list(FAMILIES)
    assert set(facts.families) == set(FAMILIES)


def test_this_machine_cpu_memory_os(this_host: HostFacts) -> None:
    assert this_host.family("cpu").facts["threads"] == os.cpu_count()
    phys_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")  # sysinfo(): the same MemTotal
    assert this_host.family("memory").facts["mem_total_bytes"] == phys_bytes
    release = dict(
        line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line
    )
    assert this_host.family("os").facts["id"] == release["ID"].strip('"')
    assert this_host.family("os").facts["kernel"] == os.uname().release


def test_this_machine_tool_versions(this_host: HostFacts) -> None:
    tools = this_host.family("tools").facts["tools"]
    if shutil.which("fio"):
        out = subprocess.run(["fio", "--version"], capture_output=True, text=True, check=True).stdout
        assert tools["fio"]["version"] in out
    assert tools["python3"]["version"].startswith("3.")


def test_absent_vendor_tools_are_reported_missing(this_host: HostFacts) -> None:
    gpus = this_host.family("gpus")
    absent = [t for t in ("nvidia-smi", "rocm-smi", "npu-smi") if shutil.which(t) is None]
    assert set(absent) <= set(gpus.missing_tools)
    assert "nvidia-smi" in absent  # this machine has no NVIDIA driver


def test_nvme_family_without_nvme_hardware(this_host: HostFacts) -> None:
    col = this_host.family("nvme")
    if shutil.which("nvme") is None:
        assert col.missing_tools == ["nvme"]
    elif not Path("/sys/class/nvme").exists():
        assert (col.facts["count"], col.facts["devices"], col.facts["subsystems"]) == (0, [], [])
        assert col.errors == {}


def test_a_family_never_ends_empty_handed(this_host: HostFacts) -> None:
    for name, col in this_host.families.items():
        assert col.facts or col.errors or col.missing_tools, name


def test_this_machine_tuning_and_placement(this_host: HostFacts) -> None:
    tuning = this_host.family("tuning").facts
    shm = os.statvfs("/dev/shm")
    assert tuning["shm_bytes"] == shm.f_blocks * shm.f_frsize
    assert tuning["cmdline"] == Path("/proc/cmdline").read_text().split()
    balancing = Path("/proc/sys/kernel/numa_balancing")
    if balancing.exists():
        assert tuning["numa_balancing"] == int(balancing.read_text())
    me = subprocess.run(["id", "-nG"], capture_output=True, text=True, check=True).stdout.split()
    assert tuning["groups"] == me
    nodes = len(list(Path("/sys/devices/system/node").glob("node[0-9]*")))
    assert this_host.family("numa").facts["nodes"] == (nodes or None)


def test_no_rdma_and_no_nvme_of_here_is_an_empty_answer_not_an_error(this_host: HostFacts) -> None:
    if not Path("/sys/class/infiniband").exists():
        assert this_host.family("roce").to_json() == {
            "facts": {"interfaces": {}},
            "missing_tools": [],
            "errors": {},
        }
    if not Path("/sys/class/nvme").exists():
        nvmeof = this_host.family("nvmeof")
        assert (nvmeof.facts, nvmeof.errors) == ({"controllers": [], "subsystems": []}, {})


def test_facts_round_trip_through_json(this_host: HostFacts) -> None:
    stored = json.loads(json.dumps(this_host.to_json()))
    assert HostFacts.from_json(stored).to_json() == this_host.to_json()
    assert "cpu/lscpu.txt" in this_host.artifacts()
    assert '"lscpu"' in this_host.artifacts()["cpu/lscpu.txt"]


def test_odirect_probe_passes_on_a_scratch_dir_and_cleans_up(tmp_path: Path) -> None:
    col = odirect.collect(LocalExecutor(), ctx(scratch=volume(tmp_path, scratch=True)))
    result = col.facts["volumes"]["scratch"]
    assert result["status"] == "passed"
    fs_block = os.statvfs(tmp_path).f_bsize
    assert result["fs_block_bytes"] == fs_block
    assert fs_block in [r["block_bytes"] for r in result["results"]]
    assert all(r["bytes_read"] == r["block_bytes"] for r in result["results"])
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def ramfs(tmp_path: Path) -> Iterator[Path]:
    """A ramfs mount: a filesystem without O_DIRECT support (root only)."""
    target = tmp_path / "ramfs"
    target.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(["mount", "-t", "ramfs", "ramfs", str(target)], check=False).returncode != 0
    ):
        pytest.skip("mounting ramfs needs root")
    try:
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=True)


def test_odirect_probe_reports_einval_where_the_filesystem_refuses(ramfs: Path) -> None:
    col = odirect.collect(LocalExecutor(), ctx(ram=volume(ramfs, scratch=True)))
    result = col.facts["volumes"]["ram"]
    assert result["ok"] is False
    assert {r["errno"] for r in result["results"]} == {"EINVAL"}
    assert {r["stage"] for r in result["results"]} == {"open"}
    assert "open failed: EINVAL (Invalid argument)" in result["status"]
    assert list(ramfs.iterdir()) == []  # O_CREAT made the file before O_DIRECT was refused; removed


def test_odirect_probe_agrees_with_the_kernel_on_tmpfs() -> None:
    """tmpfs accepts O_DIRECT since Linux 6.6; on older kernels open() fails with EINVAL."""
    shm = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        expected = _kernel_allows_odirect(shm)
        result = odirect.collect(LocalExecutor(), ctx(shm=volume(shm, scratch=True))).facts["volumes"]["shm"]
        assert result["ok"] is expected
        assert expected or "EINVAL" in result["status"]
        assert list(shm.iterdir()) == []
    finally:
        shutil.rmtree(shm)


def _kernel_allows_odirect(directory: Path) -> bool:
    probe = directory / "kernel-check"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600))
        return True
    except OSError:
        return False
    finally:
        probe.unlink(missing_ok=True)


def test_odirect_never_writes_to_a_non_scratch_volume(tmp_path: Path) -> None:
    empty, data = tmp_path / "empty", tmp_path / "data"
    empty.mkdir()
    data.mkdir()
    (data / "model.safetensors").write_bytes(os.urandom(8192))
    col = odirect.collect(
        LocalExecutor(), ctx(empty=volume(empty, scratch=False), data=volume(data, scratch=False))
    )
    assert col.facts["volumes"]["empty"]["status"] == odirect.NOT_SCRATCH
    read = col.facts["volumes"]["data"]
    assert (read["mode"], read["status"]) == ("read", "passed")
    assert read["results"][0]["file"].endswith("model.safetensors")
    assert [p.name for p in empty.iterdir()] == []
    assert [p.name for p in data.iterdir()] == ["model.safetensors"]


def test_a_missing_volume_path_is_an_error_not_a_crash(tmp_path: Path) -> None:
    gone = volume(tmp_path / "not-mounted", scratch=True)
    col = mounts.collect(LocalExecutor(), ctx(kv=gone))
    assert col.facts["volumes"]["kv"]["exists"] is False
    assert "does not exist" in col.errors["volume kv"]
    probe = odirect.collect(LocalExecutor(), ctx(kv=gone)).facts["volumes"]["kv"]
    assert probe["status"] == "stat failed: ENOENT (No such file or directory)"


def test_mounts_of_a_tmp_dir(tmp_path: Path) -> None:
    facts = mounts.collect(LocalExecutor(), ctx(kv=volume(tmp_path, scratch=True))).facts["volumes"]["kv"]
    assert facts["exists"] is True
    assert str(tmp_path).startswith(facts["target"])
    assert 0 < facts["free_bytes"] <= facts["size_bytes"]
    assert facts["fstype"]


def test_a_sub_probe_timeout_is_recorded() -> None:
    col = Collected()
    assert run_text(LocalExecutor(), col, "slow", "sleep 5", timeout_s=1) is None
    assert "did not finish within 1 s" in col.errors["slow"]


class DroppingExecutor(LocalExecutor):
    """The local machine, whose 'connection' drops (or whose run is Ctrl-C'd) after a number of commands."""

    def __init__(self, commands_before_drop: int, drop: Exception | None = None) -> None:
        super().__init__()
        self.left = commands_before_drop
        self.drop = drop or TransportError("localhost: connection dropped")

    def _execute(self, full: str, cmd: str, timeout_s: float | None) -> tuple[int, str, str]:
        self.left -= 1
        if self.left < 0:
            raise self.drop
        return super()._execute(full, cmd, timeout_s)


def test_a_dropped_connection_propagates() -> None:
    with pytest.raises(TransportError, match="connection dropped"):
        collect_host(DroppingExecutor(commands_before_drop=5), ctx())


@pytest.mark.parametrize("drop", [TransportError("connection dropped"), Interrupted("localhost", "probe")])
@pytest.mark.parametrize("commands_before_drop", range(6))
def test_a_link_lost_during_the_counter_probe_is_not_a_fact(
    commands_before_drop: int, drop: Exception, tmp_path: Path
) -> None:
    """Issue 27: a lost link or Ctrl-C during the counter probe of a volume was kept as that volume's
    final error (INVALID, never retried by --resume); it propagates like every other family's.
    Two volumes: six commands (scratch check, agent upload, probe; scratch check, probe)."""
    volumes = {"a": volume(tmp_path, scratch=True), "b": volume(tmp_path, scratch=True)}
    with pytest.raises(type(drop)):
        counters.collect(DroppingExecutor(commands_before_drop, drop), ctx(**volumes))


def _raises(exc: Exception) -> object:
    def collector(ex: object, c: HostContext) -> Collected:
        raise exc

    return collector


@pytest.mark.parametrize(
    ("exc", "recorded"),
    [
        (ParseError("lscpu", "JSON"), {"errors": {"family": "ParseError: lscpu: expected JSON"}}),
        (ToolMissing("localhost", "lscpu"), {"missing_tools": ["lscpu"]}),
        (
            CommandFailed(CommandResult("localhost", "lscpu -J", 1, "", "boom", 0.1)),
            {
                "errors": {
                    "family": "CommandFailed: localhost: `lscpu -J` exited 1 after 0.1 s\n"
                    "--- last lines of stderr:\nboom"
                }
            },
        ),
    ],
)
def test_one_family_failing_does_not_stop_the_others(
    monkeypatch: pytest.MonkeyPatch, exc: Exception, recorded: dict[str, object]
) -> None:
    monkeypatch.setitem(FAMILIES, "cpu", _raises(exc))
    facts = collect_host(LocalExecutor(), ctx())
    cpu = facts.family("cpu").to_json()
    assert {k: v for k, v in cpu.items() if v} == recorded
    assert facts.family("memory").facts["mem_total_bytes"] > 0


def test_probing_a_version_runs_nothing_a_path_could_shadow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: `sh version` ran a file called `version` from the current directory (as root on a lab)."""
    marker = tmp_path / "ran"
    for planted in ("version", "--version", "-V"):
        (tmp_path / planted).write_text(f"touch {marker}\n")
    (tmp_path / "bomtool").write_text(f"#!/bin/sh\ntouch {marker}\n")  # reached by a relative PATH entry
    (tmp_path / "bomtool").chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", f"{os.environ['PATH']}:.")
    names = ("sh", "bomtool")
    col = tools.collect(LocalExecutor(), HostContext(host="localhost", volumes={}, sudo=False, tools=names))
    assert not marker.exists()
    assert "no version string in the output of /" in col.errors["sh"]  # dash has no version option
    assert "bomtool" in col.missing_tools  # looked up from /: the relative entry no longer reaches it
    assert [tools.runnable(f) for f in ("/usr/bin/fio", "./bomtool", "echo", "/a/../b")] == [
        True,
        False,
        False,
        False,
    ]


def test_a_tool_that_is_not_a_command_name_is_never_looked_up() -> None:
    names = ("-rf", "../../bin/sh", "bin/sh", "/usr/../bin/sh", "a b")
    col = tools.collect(LocalExecutor(), HostContext(host="localhost", volumes={}, sudo=False, tools=names))
    assert all("is not a command name nor an absolute path" in col.errors[n] for n in names)
    assert col.facts["tools"]["python3"]["command"].startswith("/")  # run by its absolute path


def test_odirect_does_not_write_through_a_scratch_volume_that_resolves_into_the_system(
    tmp_path: Path,
) -> None:
    (tmp_path / "vol").symlink_to("/etc")
    col = odirect.collect(LocalExecutor(), ctx(etc=volume(tmp_path / "vol", scratch=True)))
    assert col.facts["volumes"]["etc"]["ok"] is None  # not probed at all: G1's check is INVALID, saying why
    assert "inside the system directory /etc" in col.facts["volumes"]["etc"]["status"]
    assert not [p for p in Path("/etc").iterdir() if p.name.startswith(".kvgate-odirect")]
