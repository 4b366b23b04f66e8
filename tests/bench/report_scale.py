"""Stored runs at lab scale for the rendering benchmarks: G1 over N hosts, a soak of N hosts × 72 h."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kvgate.base.criteria import Verdict
from kvgate.record import JudgementRecord
from kvgate.record.store import RunStore

G1_CHECKS = [
    ("cpu.threads", "G1-CPU-4", "cpu_threads", 192, 128, ">=", ""),
    ("memory.total", "G1-MEM-1", "mem_total_gib", 2015.6, 2000, ">=", "GiB"),
    ("os.id", "G1-OS-1", "os_id", "ubuntu", "ubuntu", "==", ""),
    ("os.kernel", "G1-OS-2", "kernel", "6.8.0-45-generic", r"^6\.8", "matches", ""),
    ("gpu.count", "G1-GPU-1", "gpus", 8, 8, "==", ""),
    ("gpu.driver", "G1-GPU-2", "driver", "550.54.15", "550.54", "version>=", ""),
    ("nvme.count", "G1-NVME-1", "nvme_count", 8, 8, "==", ""),
    ("nvme.temp", "G1-NVME-4", "temp_c", 41.0, 70, "<=", "C"),
    ("nic.rdma", "G1-NIC-1", "rdma_ports", 8, 8, "==", ""),
    ("nic.speed", "G1-NIC-2", "speed_mbps", 400000, 400000, ">=", "Mb/s"),
    ("nvmeof.subsystems", "G1-NVMF-1", "subsystems", 2, 2, "==", ""),
    ("tool.fio", "G1-TOOL-1", "fio_version", "3.36", "3.33", "version>=", ""),
    ("tool.python3", "G1-TOOL-2", "python_version", "3.11.7", "3.10", "version>=", ""),
]


def g1_run(root: Path, hosts: int) -> Path:
    names = [f"gpu-node-{i:02d}" for i in range(1, hosts + 1)]
    meta = {
        "inventory": {"path": "inventory/lab.yaml", "sha256": "ab" * 32},
        "planned": [f"{h}/{c[0]}" for h in names for c in G1_CHECKS],
        "hosts": {
            h: {"address": h, "transport": "ssh", "roles": ["gpu-node", "storage-client"]} for h in names
        },
        "manifest": {
            h: {"kernel": "6.8.0-45-generic", "bios": "2.3.4", "nvme": [f"nvme{i}" for i in range(8)]}
            for h in names
        },
        "tool_versions": {h: {"fio": "3.36", "nvme": "2.8", "python3": "3.11.7"} for h in names},
    }
    store = RunStore.create(root, site="lab", gate="g1", meta=meta)
    for host in names:
        for check, rule, metric, measured, expected, comparator, unit in G1_CHECKS:
            path = store.artifact(host, f"{check}.txt", f"{check} output of {host}\n" * 20)
            store.record(
                JudgementRecord(
                    id=f"{host}/{check}",
                    host=host,
                    check=check,
                    verdict=Verdict.PASS,
                    condition=f"{metric}={measured}",
                    rule=rule,
                    metric=metric,
                    measured=measured,
                    expected=expected,
                    comparator=comparator,
                    unit=unit,
                    source=f"inventory: hosts.{host}.expect",
                    evidence=(path,),
                )
            )
    store.finish("complete")
    return store.path


def soak_run(root: Path, hosts: int, *, hours: int = 72, sample_s: int = 10) -> Path:
    """A G4 run of ``hosts`` deployments soaked ``hours`` at ``sample_s`` samples, as the gate stores it."""
    from kvgate.report.g4_tables import MAX_ROWS, VERDICT_COLUMNS, WINDOW_COLUMNS

    names = [f"gpu-node-{i:02d}" for i in range(1, hosts + 1)]
    from kvgate.configuration.gate_profiles.g4 import load_g4_profile

    profile = load_g4_profile("full")  # 72 h in 600-second windows: the charts draw its drift bounds
    meta = {
        "inventory": {"path": "inventory/lab.yaml", "sha256": "ab" * 32},
        "planned": [],
        "configuration": {"gate_profile": profile.model_dump(mode="json")},
    }
    store = RunStore.create(root, site="lab", gate="g4", meta=meta)
    windows, verdicts = [], []
    for host in names:
        samples = "".join(
            f'{{"t": {t}, "ttft_ms": 41.5, "rss_mib": 3083}}\n' for t in range(0, hours * 3600, sample_s)
        )
        store.artifact(host, "g4/tiny/samples.jsonl", samples)
        series = (soak_window(i, profile.window_s) for i in range(hours * 3600 // profile.window_s))
        store.artifact(host, "g4/tiny/windows.jsonl", "".join(json.dumps(w) + "\n" for w in series))
        for w in range(MAX_ROWS):
            windows.append(
                [
                    f"{host}/tiny",
                    str(w),
                    f"2026-01-0{1 + w // 24}T{w % 24:02d}:00:00Z",
                    "600/0",
                    "0",
                    "41.5",
                    "97.2",
                    "12.1",
                    "88.4",
                    "40.9 / 44.0",
                    "3083",
                    "1024",
                    "2048 / 1024",
                    "0.93",
                    "same",
                ]
            )
        for check in ("coverage", "failed-requests", "empty-responses", "ttft-drift", "memory-growth"):
            rec = JudgementRecord(
                id=f"{host}/soak.{check}",
                host=host,
                check=f"soak.{check}",
                verdict=Verdict.PASS,
                condition="ok",
                rule="G4-RUN-1",
                metric=check,
                measured=1.0,
                expected=0.9,
                comparator=">=",
                unit="x",
            )
            store.record(rec)
            verdicts.append([f"{host}/tiny", check, "1 x", ">= 0.9 x", "workloads/g4/full.yaml", "PASS"])
    sections = [
        {
            "title": "G4 soak windows",
            "template": "table.html",
            "data": {"columns": WINDOW_COLUMNS, "rows": windows},
        },
        {
            "title": "G4 verdicts",
            "template": "table.html",
            "data": {"columns": VERDICT_COLUMNS, "rows": verdicts},
        },
    ]
    store.update_meta(sections=sections)
    store.finish("complete")
    return store.path


def soak_window(index: int, window_s: int) -> dict[str, Any]:
    """One window as G4 stores it (the keys of a real demo window), TTFT and RSS drifting slowly."""
    start = 1_796_400_000.0 + index * window_s
    drift = 1 + index / 20_000
    return {
        "event": "window",
        "index": index,
        "start_unix_s": start,
        "end_unix_s": start + window_s,
        "requests": 600,
        "reuse_requests": 350,
        "summary": {
            "completed": 600,
            "failed": 0,
            "error_counts": {},
            "output_throughput_tok_per_s": 97.2 / drift,
            "p50_ttft_ms": 41.5 * drift,
            "p90_ttft_ms": 88.4 * drift,
            "p99_ttft_ms": 120.0 * drift,
            "total_input_tokens": 600 * 1024,
        },
        "empty_responses": 0,
        "short_responses": 0,
        "reuse_ttft_p50_ms": 40.9 * drift,
        "fresh_ttft_p50_ms": 44.0 * drift,
        "rss_kib": 3083 * 1024 * drift,
        "cache_dir_bytes": min(index, 300) * (64 << 20),
        "hit_tokens": 571_000,
        "canary": [{"prompt_tokens": 1024}, {"prompt_tokens": 1024}],
    }
