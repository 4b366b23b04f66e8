"""The G1 plan from small inventories, evaluated on facts that the real collectors build
from recorded outputs of real machines (Replay answers each command with its recording)."""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from replay import HOST, Replay, ok, recorded

from kvgate.base.criteria import Verdict
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.inventory.schema import Inventory
from kvgate.orchestration.g1.checks import evaluate_facts
from kvgate.orchestration.g1.plan import manifest, plan, tools_wanted
from kvgate.probes import agentctl
from kvgate.probes.facts import (
    Collected,
    HostContext,
    HostFacts,
    collect_host,
    nics,
    nvme,
    nvmeof,
    odirect,
    pcie,
    rdma,
)
from kvgate.probes.hostevidence import HostEvidence
from kvgate.transport.base import quote
from kvgate.transport.local import LocalExecutor

# the connect lines (no error) that open a recorded NVMe/TCP kernel log, as the log probe prints them
CLEAN_KERNEL_LOG = "#source journalctl -k -b\n" + "".join(
    recorded("kernel-log/lore-nvme-tcp-reconnect.txt").splitlines(keepends=True)[:6]
)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A scratch directory and the O_DIRECT probe's real output on it (run by this python3)."""
    path = tmp_path_factory.mktemp("kvcache")
    out = subprocess.run(
        [sys.executable, "-c", odirect.PROBE, str(path), "write"], capture_output=True, text=True, check=True
    )
    return path, out.stdout


AGENT_HOME = "/home/kvgate"


@functools.cache
def counter_probe(volume_path: Path) -> dict[str, tuple[int, str, str]]:
    """The agent's answers for the counter probe: uploaded already, and the probe's real output here."""
    result = HostEvidence(LocalExecutor()).probe(str(volume_path), mib=8, scratch=True)
    agent = f"{AGENT_HOME}/.cache/kvgate/agent-{hashlib.sha256(agentctl.zipapp_bytes()).hexdigest()[:16]}.pyz"
    digest = hashlib.sha256(agentctl.zipapp_bytes()).hexdigest()
    return {
        'echo "$HOME"': (0, f"{AGENT_HOME}\n", ""),
        f"sha256sum {agent}": (0, f"{digest}  {agent}\n", ""),
        f"python3 {agent} evidence probe": (0, json.dumps({"result": result}), ""),
    }


def answers(volume_path: Path, probe_output: str) -> dict[str, tuple[int, str, str]]:
    """A gpu node with three local NVMe drives, one A100, two RoCE ports and an NVMe/TCP array."""
    return counter_probe(volume_path) | {
        "lscpu -J": ok("lscpu/debian12-kvm-epyc.json"),
        "cat /proc/meminfo": ok("meminfo/debian12-kvm.txt"),
        "cat /etc/os-release": ok("os-release/debian12.txt"),
        "uname -r": ok("os-release/uname-r-debian12-kvm.txt"),
        "lsblk ": ok("lsblk/debian12-kvm.json"),
        "nvme version": ok("tool-versions/nvme.txt"),
        nvme.TRANSPORT_PROBE: ok("sysfs-nvme/constructed-3-local.txt"),
        "nvme list -o json": ok("nvme/list/cachelib-wdc-sn720-samsung-pm983a.json"),
        "nvme smart-log /dev/nvme0n1": ok("nvme/smart-log/netdata-nvme-smart-log.json"),
        "nvme smart-log /dev/nvme1n1": ok("nvme/smart-log/netdata-nvme-smart-log-string.json"),
        "nvme smart-log /dev/nvme2n1": ok("nvme/smart-log/netdata-nvme-smart-log-float.json"),
        "nvme list-subsys -o json": ok("nvme/list-subsys/gonvme-session-info-valid.json"),
        quote(nvmeof.PROBE): ok("sysfs-nvmeof/constructed-3-local-2-tcp-ana.txt"),
        "cat /etc/nvme/discovery.conf": ok("nvme-config/constructed-discovery.conf"),
        "cat /etc/nvme/config.json": (1, "", "cat: /etc/nvme/config.json: No such file or directory"),
        "systemctl is-enabled nvmf-autoconnect.service": (0, "enabled\n", ""),
        "cat /etc/nvme/hostnqn": (
            0,
            "nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0047-3410-8051-b4c04f443533\n",
            "",
        ),
        nvmeof.KERNEL_LOG: (0, CLEAN_KERNEL_LOG, ""),
        pcie.PROBE: ok("sysfs-pcie/constructed-lab-full-link.txt"),
        nics.PROBE: ok("sysfs-nics/constructed-lab-roce.txt"),
        rdma.PROBE: ok("sysfs-rdma/constructed-roce-one-port-down.txt"),
        "nvidia-smi -q -x": ok("nvidia-smi/telegraf-a100-sxm4-80gb-v12.xml"),
        f"test -d {volume_path}": (0, "", ""),
        "findmnt -J -T": ok("findmnt/tmp-on-root-ext4.json"),
        "df -P -B1": ok("df/tmp-on-root-ext4.txt"),
        "python3 -c": (0, probe_output, ""),
        "chronyc -c tracking": ok("chronyc/atlas-system-agent-aws-tracking.csv"),
        "cd / && /usr/bin/fio --version": ok("tool-versions/fio.txt"),
        "cd / && /usr/bin/nvme --version": ok("tool-versions/nvme.txt"),
        "cd / && /usr/bin/python3 --version": ok("tool-versions/python3.txt"),
    }


TOOLS = {"lscpu", "lsblk", "nvme", "nvidia-smi", "findmnt", "python3", "chronyc", "fio"}


def bom(volume_path: Path, **overrides: Any) -> dict[str, Any]:
    """Expectations that the recorded machine meets; `overrides` replace top-level sections."""
    expect: dict[str, Any] = {
        "cpu": {"model": "AMD EPYC", "cores": 2, "sockets": 1},
        "memory": {"total_gib": 23.5},
        "os": {"id": "debian", "version": "^12$", "kernel": r"^6\."},
        "nvme": {"count": 3, "model": "SN720|MZ1LB960", "capacity_gb": 500},
        "nvmeof": {"subsystems": 1, "transport": "tcp", "min_live_paths": 1},
        "nics": [
            {"name": "^ens1f0np0$", "speed_mbps": 100000, "mtu": 9000, "driver": "mlx5_core", "rdma": True}
        ],
        "gpus": {"vendor": "nvidia", "count": 1, "model": "A100", "driver": ">= 535"},
        "tools": {"fio": ">= 3.28", "nvme": ">= 2.0"},
        "max_clock_offset_ms": 5,
    }
    expect.update(overrides)
    return {
        "site": "lab",
        "groups": {"gpu-nodes": expect},
        "hosts": {HOST: {"roles": ["gpu-node", "storage-client"], "groups": ["gpu-nodes"]}},
        "volumes": {
            "kvcache": {
                "path": str(volume_path),
                "kind": "candidate",
                "scratch": True,
                "fstype": "ext4",
                "mount_options": ["relatime"],
                "min_free_gib": 10,
            }
        },
    }


def run_g1(
    scratch: tuple[Path, str],
    *,
    tools: set[str] = TOOLS,
    replace: dict[str, tuple[int, str, str]] | None = None,
    **overrides: Any,
) -> dict[str, tuple[Verdict, str]]:
    """check id -> (verdict, condition) for the recorded gpu node against a BOM."""
    path, probe = scratch
    inv = Inventory.model_validate(bom(path, **overrides))
    ctx = HostContext(host=HOST, volumes=inv.volumes_of(HOST), sudo=True, tools=tools_wanted(inv, HOST))
    facts = collect_host(Replay({**answers(path, probe), **(replace or {})}, tools), ctx)
    return {
        c.check: (evaluate_facts(c, facts).verdict, evaluate_facts(c, facts).condition)
        for c in plan(in_memory(inv))
    }


def test_a_check_over_several_devices_shows_the_value_its_verdict_rests_on(scratch: tuple[Path, str]) -> None:
    """A customer's reader found 15 PASS rows of the lab's G1 with no measured value: each judged
    every device (its condition lists them all) and showed none."""
    path, probe = scratch
    inv = Inventory.model_validate(bom(path))
    ctx = HostContext(host=HOST, volumes=inv.volumes_of(HOST), sudo=True, tools=tools_wanted(inv, HOST))
    facts = collect_host(Replay(answers(path, probe), TOOLS), ctx)
    shown = {
        c.check: j.measurement.value if (j := evaluate_facts(c, facts)).measurement else "no measurement"
        for c in plan(in_memory(inv))
        if c.check in ("nvme.temperature", "nvme.media_errors")
    }
    temperatures = [
        float(t.split("=")[1].split()[0]) for t in run_g1(scratch)["nvme.temperature"][1].split("; ")
    ]
    assert shown["nvme.temperature"] == max(temperatures)  # ≤ 70 °C: the hottest drive
    assert shown["nvme.media_errors"] == 0


def test_a_matching_bom_passes_every_check(scratch: tuple[Path, str]) -> None:
    results = run_g1(scratch)
    failed = {k: v for k, v in results.items() if v[0] is not Verdict.PASS}
    assert failed == {}
    assert results["cpu.cores"][1] == "cpu_cores=2 ≥ 2"
    assert results["nvme.temperature"][1].startswith(
        "nvme0n1.temperature_c=36.85 °C ≤ 70 °C; nvme1n1.temperature_c"
    )
    assert results["nvme.count"][1] == "nvme_count=3 = 3 — local namespaces: nvme0n1, nvme1n1, nvme2n1"
    assert results["gpu.driver"][1] == "driver_version=535.54.03 ≥ 535"
    assert results["clock.offset"][1].startswith("abs_offset_ms=0.042 ms ≤ 5 ms")
    assert results["volume[kvcache].odirect"][1].startswith("odirect_ok=True = True — 512 B, 4096 B")
    # the counter sanity probe read 8 MiB O_DIRECT and this disk's counters saw it (issue 12)
    assert results["volume[kvcache].counters"][1].startswith("counters_moved_ratio=")


def test_the_plan_is_only_what_the_inventory_expects(scratch: tuple[Path, str]) -> None:
    inv = Inventory.model_validate(
        {"site": "s", "hosts": {"h": {"expect": {"cpu": {"cores": 64}, "pcie_full_link": False}}}}
    )
    assert [(c.check, c.rule, c.spec.family) for c in plan(in_memory(inv))] == [
        ("cpu.cores", "G1-CPU-2", "cpu")
    ]
    checks = {c.check for c in plan(in_memory(Inventory.model_validate(bom(scratch[0]))))}
    assert {
        "gpu.count",
        "nvme.media_errors",
        "nic[^ens1f0np0$].rdma",
        "volume[kvcache].odirect",
        "pcie.links",
    } <= checks
    assert not any(
        c.startswith("gpu")
        for c in {c.check for c in plan(in_memory(Inventory.model_validate(bom(scratch[0], gpus=None))))}
    )


def test_sources_say_where_each_expectation_was_written(scratch: tuple[Path, str]) -> None:
    data = bom(scratch[0])
    data["hosts"][HOST]["expect"] = {"memory": {"total_gib": 16}}
    sources = {c.check: c.criterion.source for c in plan(in_memory(Inventory.model_validate(data)))}
    assert sources["cpu.cores"] == "inventory: groups.gpu-nodes.cpu.cores"
    assert sources["memory.total"] == f"inventory: hosts.{HOST}.expect.memory.total_gib"
    assert sources["nvme.temperature"] == "inventory: groups.gpu-nodes.nvme.max_temperature_c (default)"
    assert sources["nic[^ens1f0np0$].speed"] == "inventory: groups.gpu-nodes.nics[0].speed_mbps"
    assert sources["volume[kvcache].free"] == "inventory: volumes.kvcache.min_free_gib"
    assert sources["pcie.links"] == "inventory: pcie_full_link (default)"


def test_wrong_core_count_fails_with_a_readable_condition(scratch: tuple[Path, str]) -> None:
    results = run_g1(scratch, cpu={"cores": 64})
    assert results["cpu.cores"] == (Verdict.FAIL, "cpu_cores=2 ≥ 64")


def test_media_errors_on_one_drive_fail_the_check(scratch: tuple[Path, str]) -> None:
    bad = recorded("nvme/smart-log/netdata-nvme-smart-log.json").replace(
        '"media_errors": 0', '"media_errors": 3'
    )
    results = run_g1(scratch, replace={"nvme smart-log /dev/nvme1n1": (0, bad, "")})
    verdict, condition = results["nvme.media_errors"]
    assert verdict is Verdict.FAIL
    assert "nvme1n1.media_errors=3 = 0" in condition
    assert "nvme0n1.media_errors=0 = 0" in condition


def test_a_downgraded_link_fails_and_is_named(scratch: tuple[Path, str]) -> None:
    results = run_g1(scratch, replace={pcie.PROBE: ok("sysfs-pcie/constructed-lab-one-downgraded.txt")})
    verdict, condition = results["pcie.links"]
    assert verdict is Verdict.FAIL
    assert condition.startswith("downgraded_links=1 = 0 — nvme nvme1 (0000:02:00.0): x2 < x4")
    assert "idle GPU link at 2.5 of 32 GT/s" in condition


def test_nic_speed_and_rdma_port_state_fail_per_interface(scratch: tuple[Path, str]) -> None:
    nic = {"name": "^ens1f[01]np[01]$", "count": 2, "speed_mbps": 100000, "rdma": True}
    results = run_g1(scratch, nics=[nic])
    assert results["nic[^ens1f[01]np[01]$].count"][0] is Verdict.PASS
    verdict, condition = results["nic[^ens1f[01]np[01]$].speed"]
    assert verdict is Verdict.FAIL
    assert "ens1f1np1.speed_mbps=25000 Mb/s ≥ 100000 Mb/s" in condition
    verdict, condition = results["nic[^ens1f[01]np[01]$].rdma"]
    assert verdict is Verdict.FAIL
    assert "ens1f1np1.rdma_port_state=DOWN = ACTIVE" in condition


def test_declared_absent_hardware_is_skipped(scratch: tuple[Path, str]) -> None:
    results = run_g1(scratch, nvme={"count": 0}, gpus={"count": 0}, nvmeof={"subsystems": 0})
    assert results["nvme.count"] == (
        Verdict.SKIP,
        "nvme_count: not applicable — inventory declares nvme.count: 0",
    )
    assert results["gpu.count"][0] is Verdict.SKIP
    assert results["nvmeof.subsystems"][0] is Verdict.SKIP
    assert "nvme.media_errors" not in results


def test_a_required_tool_that_is_missing_fails(scratch: tuple[Path, str]) -> None:
    results = run_g1(scratch, tools=TOOLS - {"nvme", "nvidia-smi"}, nvme={"count": 2})
    assert results["nvme.count"] == (
        Verdict.FAIL,
        "nvme-cli not installed on host: cannot verify nvme.count=2",
    )
    assert results["nvme.media_errors"][0] is Verdict.FAIL
    assert results["gpu.count"] == (
        Verdict.FAIL,
        "nvidia-smi not installed on host: cannot verify gpu.count=1",
    )
    assert results["tool[nvme].version"][0] is Verdict.FAIL


def test_a_failed_sub_probe_is_invalid_with_its_error(scratch: tuple[Path, str]) -> None:
    failing = {
        "nvme smart-log /dev/nvme2n1": (
            1,
            "",
            "NVMe status: Invalid Log Page: The log page indicated is invalid",
        ),
        "chronyc -c tracking": (1, "", "506 Cannot talk to daemon"),
    }
    results = run_g1(scratch, replace=failing)
    verdict, condition = results["nvme.media_errors"]
    assert verdict is Verdict.INVALID
    assert (
        "nvme2n1.media_errors: smart-log nvme2n1: `nvme smart-log /dev/nvme2n1 -o json` exited 1" in condition
    )
    assert "Invalid Log Page" in condition
    assert results["clock.offset"][0] is Verdict.INVALID
    assert "506 Cannot talk to daemon" in results["clock.offset"][1]


def test_nvme_cli_1x_paths_without_state_cannot_pass(scratch: tuple[Path, str]) -> None:
    old = {"nvme list-subsys -o json": ok("nvme/list-subsys/nvme-cli-doc-rdma-multipath.json")}
    results = run_g1(scratch, replace=old, nvmeof={"subsystems": 2, "transport": "rdma", "min_live_paths": 2})
    assert results["nvmeof.subsystems"] == (Verdict.PASS, "rdma_subsystems=2 ≥ 2 — nvmf-test, nvmf-test2")
    verdict, condition = results["nvmeof.live_paths"]
    assert verdict is Verdict.INVALID
    assert "path state not reported" in condition


def test_a_dead_path_fails_min_live_paths(scratch: tuple[Path, str]) -> None:
    results = run_g1(scratch, nvmeof={"subsystems": 1, "transport": "tcp", "min_live_paths": 2})
    verdict, condition = results["nvmeof.live_paths"]
    assert verdict is Verdict.FAIL
    assert "live_paths=1 ≥ 2 — nvme0 live, nvme1 deleting" in condition


def test_no_measurable_pcie_link_is_never_a_pass(scratch: tuple[Path, str]) -> None:
    results = run_g1(scratch, replace={pcie.PROBE: ok("sysfs-pcie/debian12-kvm.txt")})
    assert results["pcie.links"][0] is Verdict.INVALID


def test_a_family_that_was_not_collected_is_invalid(scratch: tuple[Path, str]) -> None:
    inv = Inventory.model_validate(bom(scratch[0]))
    check = next(c for c in plan(in_memory(inv)) if c.check == "cpu.cores")
    assert evaluate_facts(check, HostFacts(host=HOST)).verdict is Verdict.INVALID


def test_stored_facts_rejudge_the_same(scratch: tuple[Path, str]) -> None:
    path, probe = scratch
    inv = Inventory.model_validate(bom(path, cpu={"cores": 64}))
    ctx = HostContext(host=HOST, volumes=inv.volumes_of(HOST), sudo=True, tools=tools_wanted(inv, HOST))
    facts = collect_host(Replay(answers(path, probe), TOOLS), ctx)
    stored = HostFacts.from_json(json.loads(json.dumps(facts.to_json())))
    for check in plan(in_memory(inv)):
        assert evaluate_facts(check, stored).condition == evaluate_facts(check, facts).condition


def test_manifest_is_a_flat_summary(scratch: tuple[Path, str]) -> None:
    path, probe = scratch
    ctx = HostContext(host=HOST, volumes={}, sudo=True, tools=("fio",))
    m = manifest(collect_host(Replay(answers(path, probe), TOOLS), ctx))
    assert (m["cpu_model"], m["cpu_cores"], m["mem_total_gib"], m["kernel"]) == (
        "AMD EPYC",
        2,
        23.5,
        "6.18.44-fc-v1147",
    )
    assert m["nvme_devices"][0] == "nvme0n1 WDC CL SN720 SDAQNTW-512G-1020 fw 10105120 0.51 TB (pcie)"
    assert m["gpus"] == ["nvidia NVIDIA A100-SXM4-80GB 0000:01:00.0 80.0 GiB"]
    assert m["tools"] == {"fio": "3.33", "nvme": "2.3", "python3": "3.11.7"}
    assert "rocm-smi" in m["missing_tools"]
    assert m["nics"][1] == "ens1f0np0 up 100000 Mb/s mtu 9000 mlx5_core"
    assert m["nvmeof_paths"] == [
        "nvme3 tcp traddr=10.230.1.1,trsvcid=4420,src_addr=10.230.1.11 live optimized",
        "nvme4 tcp traddr=10.230.1.2,trsvcid=4420,src_addr=10.230.1.11 live non-optimized",
    ]


def test_the_environment_says_why_the_clock_was_not_read() -> None:
    """The demo's appendix printed 'clock —': no chronyc, and timedatectl without systemd."""
    none = Collected(
        missing_tools=["chronyc"], errors={"timedatectl": "`timedatectl show` exited 1: No systemd\nbus"}
    )
    synced = Collected(facts={"source": "timedatectl", "offset_ms": None, "synchronised": True})
    chrony = Collected(facts={"source": "chrony", "offset_ms": 0.042, "synchronised": True})
    shown = [manifest(HostFacts(host=HOST, families={"clock": c}))["clock"] for c in (none, synced, chrony)]
    assert shown == [
        "not read: no chronyc; timedatectl: `timedatectl show` exited 1: No systemd",
        "timedatectl: synchronised (no offset)",
        "chrony offset 0.042 ms",
    ]
