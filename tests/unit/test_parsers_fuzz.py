"""No parser raises anything but kvgate's own error, whatever a tool prints.

Each parser gets random text, random JSON built from the keys it reads, and its recorded
real outputs cut short or with a slice replaced by random text. Derandomized and bounded,
so the examples are the same on every run and the module stays a few seconds long;
KVGATE_FUZZ_EXAMPLES=2000 runs a deeper search by hand.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvgate.orchestration.g2.nic_counters import parse_ethtool_stats
from kvgate.probes.facts.amd import parse_amd_static, parse_amd_topology
from kvgate.probes.facts.base import ParseError
from kvgate.probes.facts.block import parse_lsblk
from kvgate.probes.facts.clock import parse_chronyc_tracking, parse_timedatectl
from kvgate.probes.facts.cpu import parse_lscpu
from kvgate.probes.facts.gpus import parse_npu_smi, parse_nvidia_smi, parse_rocm_smi
from kvgate.probes.facts.memory import parse_meminfo
from kvgate.probes.facts.mounts import parse_df, parse_findmnt
from kvgate.probes.facts.nics import parse_nics
from kvgate.probes.facts.numa import parse_numa
from kvgate.probes.facts.nvme import parse_list_subsys, parse_nvme_list, parse_smart_log, parse_transports
from kvgate.probes.facts.nvmeof import parse_config_json, parse_discovery_conf, parse_kernel_log
from kvgate.probes.facts.nvmeof import parse_probe as parse_nvmeof_probe
from kvgate.probes.facts.osinfo import parse_os_release, parse_uname
from kvgate.probes.facts.pcie import parse_pcie_links
from kvgate.probes.facts.rdma import parse_rdma
from kvgate.probes.facts.roce import parse_cm, parse_dcb_pfc, parse_ibv_devinfo, parse_mlnx_qos
from kvgate.probes.facts.roce import parse_probe as parse_roce_probe
from kvgate.probes.facts.tuning import parse_cmdline, parse_groups, parse_numa_balancing
from kvgate.probes.fio.parse import FioOutputError, parse_output

DATA = Path(__file__).parents[1] / "data" / "recorded"
FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=int(os.environ.get("KVGATE_FUZZ_EXAMPLES", "40")),  # raise it for a deeper local run
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@dataclass(frozen=True)
class Parser:
    """A parser, the error it may raise, its recorded outputs and the JSON keys it reads."""

    name: str
    parse: Callable[[str], Any]
    error: type[Exception]
    recorded: tuple[str, ...]  # globs under tests/data/recorded
    keys: tuple[str, ...] = ()  # empty: not a JSON format

    def texts(self) -> list[str]:
        paths = sorted({p for g in self.recorded for p in DATA.glob(g) if p.is_file()})
        return [p.read_text(errors="replace") for p in paths]


NVME_KEYS = ("Devices", "DevicePath", "NameSpace", "NSID", "ModelNumber", "SerialNumber", "Firmware")
NVME_KEYS += (
    "PhysicalSize",
    "MaximumLBA",
    "SectorSize",
    "Subsystems",
    "Controllers",
    "Namespaces",
    "Transport",
)
SMART_KEYS = ("critical_warning", "value", "temperature", "percent_used", "media_errors", "avail_spare")
SMART_KEYS += ("power_on_hours", "unsafe_shutdowns", "num_err_log_entries")
ROCM_KEYS = ("card0", "card1", "system", "Driver version", "Card series", "Card model", "Device Name")
ROCM_KEYS += ("PCI Bus", "VRAM Total Memory (B)", "Temperature (Sensor edge) (C)")
AMD_KEYS = ("gpu_data", "gpu", "asic", "market_name", "bus", "bdf", "vram", "size", "value", "unit")
AMD_KEYS += ("driver", "version", "vbios", "ifwi", "partition", "compute_partition", "partition_id", "numa")
AMD_KEYS += ("vram_size_mb", "link_type", "link_accessibility", "links", "link_status", "gpu_1")
FIO_KEYS = ("fio version", "jobs", "client_stats", "jobname", "hostname", "port", "error", "read", "write")
FIO_KEYS += ("mixed", "io_bytes", "bw_bytes", "bw", "iops", "total_ios", "runtime", "clat_ns", "bins")
FIO_KEYS += ("percentile", "job options", "global options", "group_reporting", "All clients", "99840")

PARSERS = [
    Parser("nvme list", parse_nvme_list, ParseError, ("nvme/list/*",), NVME_KEYS),
    Parser("nvme smart-log", parse_smart_log, ParseError, ("nvme/smart-log/*",), SMART_KEYS),
    Parser(
        "nvme list-subsys",
        parse_list_subsys,
        ParseError,
        ("nvme/list-subsys/*",),
        ("Subsystems", "Name", "NQN", "Paths", "Transport", "Address", "State", "HostNQN"),
    ),
    Parser("nvme transports", parse_transports, ParseError, ("sysfs-nvme/*",)),
    Parser(
        "lscpu",
        parse_lscpu,
        ParseError,
        ("lscpu/*",),
        ("lscpu", "field", "data", "children", "Model name:", "Socket(s):", "Core(s) per socket:", "CPU(s):"),
    ),
    Parser(
        "lsblk",
        parse_lsblk,
        ParseError,
        ("lsblk/*", "fio/lsblk-*"),
        ("blockdevices", "name", "kname", "children", "size", "rota", "log-sec", "type", "mountpoint"),
    ),
    Parser("nvidia-smi", parse_nvidia_smi, ParseError, ("nvidia-smi/*",)),
    Parser(
        "rocm-smi",
        parse_rocm_smi,
        ParseError,
        ("rocm-smi/*",),
        ROCM_KEYS,
    ),
    Parser("npu-smi", parse_npu_smi, ParseError, ("npu-smi/*",)),
    Parser("meminfo", parse_meminfo, ParseError, ("meminfo/*", "fio/proc-meminfo.txt")),
    Parser(
        "findmnt", parse_findmnt, ParseError, ("findmnt/*",), ("filesystems", "source", "target", "options")
    ),
    Parser("df", parse_df, ParseError, ("df/*",)),
    Parser("nics", parse_nics, ParseError, ("sysfs-nics/*",)),
    Parser("pcie", parse_pcie_links, ParseError, ("sysfs-pcie/*",)),
    Parser("rdma", parse_rdma, ParseError, ("sysfs-rdma/*",)),
    Parser("chronyc", parse_chronyc_tracking, ParseError, ("chronyc/*",)),
    Parser("timedatectl", parse_timedatectl, ParseError, ("timedatectl/*",)),
    Parser("os-release", parse_os_release, ParseError, ("os-release/debian12.txt",)),
    Parser("uname", parse_uname, ParseError, ("os-release/uname-*",)),
    Parser("fio", parse_output, FioOutputError, ("fio/*.json",), FIO_KEYS),
    # issue 14, G1 on the seed's platform
    Parser("mlnx_qos", parse_mlnx_qos, ParseError, ("mlnx_qos/*",)),
    Parser("dcb pfc", parse_dcb_pfc, ParseError, ("dcb/*",)),
    Parser("ibv_devinfo", parse_ibv_devinfo, ParseError, ("ibv_devinfo/*",)),
    Parser("roce probe", parse_roce_probe, ParseError, ("sysfs-roce/*",)),
    Parser("rdma_cm probe", parse_cm, ParseError, ("rdma_cm/*",)),
    Parser("nvme-of probe", parse_nvmeof_probe, ParseError, ("sysfs-nvmeof/*",)),
    Parser("kernel log", parse_kernel_log, ParseError, ("kernel-log/*",)),
    Parser("discovery.conf", parse_discovery_conf, ParseError, ("nvme-config/*.conf",)),
    Parser(
        "config.json",
        parse_config_json,
        ParseError,
        ("nvme-config/*.json",),
        ("hosts", "hostnqn", "subsystems", "nqn", "ports", "transport", "traddr"),
    ),
    Parser("numa probe", parse_numa, ParseError, ("sysfs-numa/*",)),
    Parser("amd-smi static", parse_amd_static, ParseError, ("amd-smi/*static*",), AMD_KEYS),
    Parser("amd-smi topology", parse_amd_topology, ParseError, ("amd-smi/*topology*",), AMD_KEYS),
    Parser("ethtool -S", parse_ethtool_stats, ParseError, ("ethtool/*",)),
    Parser("cmdline", parse_cmdline, ParseError, ("tuning/*cmdline*",)),
    Parser("numa_balancing", parse_numa_balancing, ParseError, ("tuning/*numa_balancing*",)),
    Parser("id", parse_groups, ParseError, ("tuning/*-id.txt",)),
]
IDS = [p.name for p in PARSERS]
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=12)
)


def shaped(keys: tuple[str, ...]) -> st.SearchStrategy[Any]:
    """JSON values whose objects mostly use the parser's own keys."""
    names = st.sampled_from(keys) | st.text(max_size=6)
    return st.recursive(
        LEAVES,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(names, inner, max_size=6),
        max_leaves=25,
    )


def survives(parser: Parser, text: str) -> None:
    """The parser returns, or raises its own error; anything else fails the test."""
    with contextlib.suppress(parser.error):
        parser.parse(text)


@pytest.mark.parametrize("parser", PARSERS, ids=IDS)
def test_every_parser_has_recorded_outputs(parser: Parser) -> None:
    assert parser.texts(), f"no recorded output for {parser.name}"


@pytest.mark.parametrize("parser", PARSERS, ids=IDS)
@FUZZ
@given(text=st.text(max_size=400))
def test_random_text(parser: Parser, text: str) -> None:
    survives(parser, text)


@pytest.mark.parametrize("parser", [p for p in PARSERS if p.keys], ids=[p.name for p in PARSERS if p.keys])
@FUZZ
@given(data=st.data())
def test_random_json_of_the_right_shape(parser: Parser, data: st.DataObject) -> None:
    top = data.draw(
        st.dictionaries(st.sampled_from(parser.keys), shaped(parser.keys), min_size=1, max_size=4)
    )
    survives(parser, json.dumps(top))
    survives(parser, json.dumps([top]))


@pytest.mark.parametrize("parser", PARSERS, ids=IDS)
@FUZZ
@given(data=st.data())
def test_recorded_outputs_cut_short(parser: Parser, data: st.DataObject) -> None:
    text = data.draw(st.sampled_from(parser.texts()))
    survives(parser, text[: data.draw(st.integers(0, len(text)))])


@pytest.mark.parametrize("parser", PARSERS, ids=IDS)
@FUZZ
@given(data=st.data())
def test_recorded_outputs_with_a_slice_replaced(parser: Parser, data: st.DataObject) -> None:
    text = data.draw(st.sampled_from(parser.texts()))
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, min(len(text), start + 40)))
    survives(parser, text[:start] + data.draw(st.text(max_size=20)) + text[end:])


EXTREMES = ("9" * 5000, "-1", "-2147483648", "18446744073709551615", "1e400", "NaN", "-0", "0x1002", "")


@pytest.mark.parametrize("parser", PARSERS, ids=IDS)
@FUZZ
@given(data=st.data())
def test_recorded_outputs_with_a_number_blown_up(parser: Parser, data: st.DataObject) -> None:
    text = data.draw(st.sampled_from(parser.texts()))
    numbers = list(re.finditer(r"[0-9]+", text))
    if numbers:
        m = data.draw(st.sampled_from(numbers))
        text = text[: m.start()] + data.draw(st.sampled_from(EXTREMES)) + text[m.end() :]
    survives(parser, text)
