"""G4's device health and kernel log: deltas over the soak's snapshots, judged against the profile."""

from __future__ import annotations

from typing import Any

from kvgate.base.criteria import Verdict
from kvgate.configuration.gate_profiles.g4 import load_g4_profile
from kvgate.orchestration.g4 import health
from kvgate.orchestration.g4.plan import criteria, g4_check
from kvgate.orchestration.g4.soak import SoakResult
from kvgate.probes.facts.kernlog import parse_kernel_window
from kvgate.probes.facts.nic_counters import parse_nic_counters

FULL = load_g4_profile("full")


def snap(t: float, **smart: Any) -> dict[str, Any]:
    drive = {"media_errors": 0, "critical_warning": 0, "temperature_c": 40.0, "percentage_used": 3}
    drive |= {"error_log_entries": 10} | smart
    return {
        "time_unix_s": t,
        "smart": {"S1": drive},
        "nvme_said": "",
        "paths": {"nvme1/nvme1c1n1": "live/optimized", "nvme2/nvme2c2n1": "live/non-optimized"},
        "nic": {"pause": 100, "cnp": 5, "discard": 0, "out_of_buffer": 0},
    }


def verdicts(snaps: list[dict[str, Any]], log: dict[str, Any] | None = None) -> dict[str, Verdict]:
    log = log if log is not None else {"source": "journal", "since_unix_s": 0, "until_unix_s": 1, "lines": []}
    values, said = health.judged(snaps, log)
    r = SoakResult("h", "d", None, None)  # type: ignore[arg-type]  # only its inputs are judged here
    r.measurements, r.blocked = health.measurements(values, log, (), said), said
    crit = dict(criteria(FULL))
    out = {}
    for key in health.KEYS:
        check = g4_check("h", "d", f"soak[d].{key}", key, crit[key], ruled=None)
        out[key] = check.evaluate(r.inputs(key)).verdict
    return out


def test_a_healthy_soak_passes_every_health_check() -> None:
    assert set(verdicts([snap(0), snap(3600), snap(7200)]).values()) == {Verdict.PASS}


def test_a_critical_warning_raised_mid_soak_fails_though_it_cleared_by_the_end() -> None:
    v = verdicts([snap(0), snap(3600, critical_warning=4), snap(7200)])
    assert v["nvme-critical-warning"] is Verdict.FAIL


def test_media_errors_and_error_log_entries_added_during_the_soak_fail() -> None:
    v = verdicts([snap(0), snap(7200, media_errors=2, error_log_entries=12, temperature_c=75.0)])
    assert v["nvme-media-errors"] is Verdict.FAIL
    assert v["nvme-error-log"] is Verdict.FAIL
    assert v["nvme-temperature"] is Verdict.FAIL
    assert v["nvme-wear"] is Verdict.PASS


def test_nic_drops_and_a_path_flap_fail() -> None:
    flap = snap(3600)
    flap["paths"] = flap["paths"] | {"nvme1/nvme1c1n1": "connecting/inaccessible"}
    last = snap(7200)
    last["nic"] = last["nic"] | {"discard": 3, "out_of_buffer": 9}
    v = verdicts([snap(0), flap, last])
    assert v["paths"] is Verdict.FAIL  # down and back: two changes
    assert v["nic-discard"] is Verdict.FAIL
    assert v["nic-out-of-buffer"] is Verdict.FAIL
    assert v["nic-pause"] is Verdict.PASS


def test_a_host_without_nvme_or_nic_counters_skips_with_the_reason() -> None:
    bare = {"time_unix_s": 0.0, "smart": {}, "nvme_said": "nvme", "paths": {}, "nic": {}}
    _, said = health.judged(
        [bare, bare | {"time_unix_s": 60.0}], {"lines": [], "since_unix_s": 0, "until_unix_s": 1}
    )
    v = verdicts([bare, bare | {"time_unix_s": 60.0}])
    assert {v[k] for k in health.KEYS if k != "kernel-log"} == {Verdict.SKIP}
    assert v["kernel-log"] is Verdict.PASS
    assert said["nvme-media-errors"] == "no NVMe drive to read: nvme"
    assert said["nic-cnp"].startswith("no cnp counter on this host")


def test_kernel_lines_of_the_soak_fail_it_each_with_its_time_and_window() -> None:
    text = (
        "#source journal\n"
        "1796520000.500000 node-a kernel: nvme nvme1: I/O 12 QID 3 timeout, aborting\n"
        "1796520100.250000 node-a kernel: Out of memory: Killed process 123 (python3)\n"
        "1796520200.000000 node-a kernel: e1000: eth0 NIC Link is Up\n"
    )
    log = parse_kernel_window(text, since=1796519990.0, until=1796520300.0)
    windows = [{"index": 0, "start_unix_s": 1796519990.0, "end_unix_s": 1796520050.0}]
    windows.append({"index": 1, "start_unix_s": 1796520050.0, "end_unix_s": 1796520300.0})
    placed = health.with_windows(log, windows)
    assert [(x["kind"], x["window"]) for x in placed["lines"]] == [("NVMe", 0), ("OOM", 1)]
    assert verdicts([snap(0), snap(60)], placed)["kernel-log"] is Verdict.FAIL


def test_an_unreadable_kernel_log_is_invalid_never_pass() -> None:
    log = {"error": "ParseError: dmesg_restrict", "since_unix_s": 0, "until_unix_s": 1}
    assert verdicts([snap(0), snap(60)], log)["kernel-log"] is Verdict.INVALID


def test_nic_counters_of_mlx5_and_rdma_sysfs_are_summed_by_kind() -> None:
    text = (
        "ens1f0|     rx_pause_ctrl_phy: 10\n"
        "ens1f0|     tx_pause_ctrl_phy: 5\n"
        "ens1f0|     rx_pause_duration_phy: 999\n"
        "ens1f0|     rx_discards_phy: 1\n"
        "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_buffer|4\n"
        "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent|7\n"
        "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/rp_cnp_handled|3\n"
    )
    parsed = parse_nic_counters(text)
    assert parsed["totals"] == {"pause": 15, "discard": 1, "out_of_buffer": 4, "cnp": 10}
    assert parsed["devices"]["mlx5_0/1"] == {"out_of_buffer": 4, "cnp": 10}
