"""G2 fabric check: the storage NICs' discard, pause and CNP counters across the baseline.

`ethtool -S` and the RDMA device's hw_counters are read on every storage interface (the
BOM's `nics` with `rdma: true`) before G2's first fio job and after its last; a discard
or buffer overrun in between FAILs, with every counter that moved shown. Pause frames
and CNPs are shown, not judged: a lossless fabric under load pauses and marks by design.

Counter names differ by driver (from real `ethtool -S` outputs, PROVENANCE.md):

- mlx5_core: judged rx_discards_phy, rx_out_of_buffer; PFC rx_prioN_pause, tx_prioN_pause;
  shown rx_prioN_discards, tx_pause_ctrl_phy, tx_global_pause (802.3x pause, not PFC).
- bnxt_en: judged rx_total_discard_pkts; PFC rx_pfc_ena_frames_priN (and tx_);
  shown rx_discard_packets_cosN, rx_stat_discard.
- ice: judged rx_dropped.nic; PFC rx_priority_N_xoff.nic (and tx_).
- i40e (two recorded ports: RHEL 8.5 and 8.8 drivers): judged port.rx_dropped, later
  renamed port.rx_discards; PFC port.rx_priority_N_xoff, later port.rx_priority_N_xoff_rx.

CNPs and RDMA receive-queue overruns are RDMA counters, not ethtool's: mlx5's
hw_counters `np_cnp_sent`, `rp_cnp_handled` and `out_of_buffer` (judged).

Any other driver: the kernel's own counters of every interface, /sys/class/net/<if>/statistics
(struct rtnl_link_stats64 in include/uapi/linux/if_link.h): judged rx_missed_errors (dropped by
the device for want of buffers), rx_fifo_errors and rx_over_errors (receive FIFO overruns); shown
rx_dropped, which also counts frames the stack did not want (L2 filtering, unknown protocols).
The verdict says that these generic counters, and which of them, were read.

>>> parse_ethtool_stats("NIC statistics:\\n     rx_discards_phy: 12\\n     rx_prio3_pause: 7\\n")
{'rx_discards_phy': 12, 'rx_prio3_pause': 7}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from kvgate.base.criteria import Criterion, Inputs, Judgement, Measurement, Verdict
from kvgate.base.errors import LabError
from kvgate.configuration.gateconfig import GateConfig
from kvgate.configuration.inventory import Role
from kvgate.judgement import Check
from kvgate.probes.facts import ParseError, int_or_none
from kvgate.transport import Executor

JUDGED = {  # a driver's marker counter -> the discard/overrun counters judged for it
    "rx_discards_phy": ("rx_discards_phy", "rx_out_of_buffer", "rdma:out_of_buffer"),
    "rx_total_discard_pkts": ("rx_total_discard_pkts", "rdma:out_of_buffer"),
    "rx_dropped.nic": ("rx_dropped.nic", "rdma:out_of_buffer"),
    "port.rx_dropped": ("port.rx_dropped", "rdma:out_of_buffer"),  # i40e; renamed port.rx_discards later
    "port.rx_discards": ("port.rx_discards", "rdma:out_of_buffer"),
}
GENERIC = ("sys:rx_missed_errors", "sys:rx_fifo_errors", "sys:rx_over_errors")  # where the driver is unknown
SHOWN = re.compile(
    r"prio\d_pause$|pfc_ena_frames_pri\d$|priority_\d_xoff(_[rt]x)?(\.nic)?$|pause_ctrl_phy$|global_pause$"
    r"|prio\d_discards$|discard_packets_cos\d$|rx_stat_discard$|^rdma:|^sys:"
)
RDMA_COUNTERS = ("np_cnp_sent", "rp_cnp_handled", "out_of_buffer")
KERNEL_COUNTERS = ("rx_missed_errors", "rx_fifo_errors", "rx_over_errors", "rx_dropped")
SNAPSHOT = (  # a driver without ethtool statistics still has the kernel's
    "ethtool -S %s 2>/dev/null || echo 'NIC statistics:'; for c in " + " ".join(RDMA_COUNTERS) + "; do "
    "for f in /sys/class/net/%s/device/infiniband/*/ports/*/hw_counters/$c; do "
    '[ -e "$f" ] && echo "     rdma:$c: $(cat "$f")"; done; done; '
    "for c in " + " ".join(KERNEL_COUNTERS) + "; do f=/sys/class/net/%s/statistics/$c; "
    '[ -e "$f" ] && echo "     sys:$c: $(cat "$f")"; done; true'
)


def parse_ethtool_stats(text: str) -> dict[str, int]:
    """`name: value` counters of `ethtool -S` (per-queue names like '[0]: rx_discards' kept whole)."""
    if "NIC statistics:" not in text:
        raise ParseError("ethtool -S", "a 'NIC statistics:' header and 'name: value' lines", text)
    body = text.split("NIC statistics:", 1)[1]
    out = {}
    for line in body.splitlines():
        name, _, value = line.strip().rpartition(":")
        number = int_or_none(value)
        if name and number is not None:
            out[name.strip()] = number
    return out


def judged_counters(counters: dict[str, int]) -> tuple[str, ...] | None:
    """The discard/overrun counters of the driver these counters come from, else the kernel's generic
    ones that were read; None: neither."""
    driver = next((names for marker, names in JUDGED.items() if marker in counters), None)
    generic = tuple(n for n in (*GENERIC, "rdma:out_of_buffer") if n in counters)
    return driver or (generic if set(generic) & set(GENERIC) else None)


def driver_known(counters: dict[str, int]) -> bool:
    """Whether the counters name one of the drivers whose own discard counters G2 judges."""
    return any(marker in counters for marker in JUDGED)


NicCheck = Check[None]  # subject: the BOM's interface name pattern


def evaluate_nic(
    check: NicCheck, deltas: dict[str, dict[str, int]], evidence: tuple[str, ...] = ()
) -> Judgement:
    """Worst interface wins; an interface whose driver is unknown is INVALID with its counters."""
    if check.ruled is not None:
        return check.evaluate()
    found = {n: d for n, d in sorted(deltas.items()) if re.search(check.subject, n)}
    if not found:
        return Judgement(Verdict.INVALID, f"no interface matches /{check.subject}/", check.criterion)
    parts = [_one(check, name, delta, evidence) for name, delta in found.items()]
    verdict = min((p.verdict for p in parts), key=[Verdict.FAIL, Verdict.INVALID, Verdict.PASS].index)
    return Judgement(verdict, "; ".join(p.condition for p in parts), check.criterion)


def _one(check: NicCheck, name: str, delta: dict[str, int], evidence: tuple[str, ...]) -> Judgement:
    names = judged_counters(delta)
    if names is None:
        why = (
            f"{name}: no discard counter known for this driver, nor the kernel's ({len(delta)} counters read)"
        )
        return Judgement(Verdict.INVALID, why, check.criterion)
    c = check.criterion
    metric = f"{name}.{c.metric}"
    part = replace(check, criterion=Criterion(c.rule, metric, c.comparator, c.expected), key=metric)
    j = part.evaluate(
        Inputs({metric: Measurement(metric, sum(delta.get(n, 0) for n in names), "", evidence)})
    )
    moved = [f"{n} +{v}" for n, v in delta.items() if v and (n in names or SHOWN.search(n))]
    read = (
        "" if driver_known(delta) else f" (driver's counters unknown: the kernel's {', '.join(names)} read)"
    )
    return Judgement(
        j.verdict,
        f"{j.condition}{read} — {', '.join(moved) or 'no discard, pause or CNP counter moved'}",
        part.criterion,
    )


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """after − before per counter both snapshots have (a counter reset shows as negative, kept)."""
    return {k: after[k] - before[k] for k in after if k in before}


def nic_plan(config: GateConfig) -> list[NicCheck]:
    """One check per storage client and BOM RDMA NIC pattern: discards ≤ roce.max_rx_discards (0)."""
    inventory, out = config.inventory.inventory, []
    for host in inventory.hosts:
        if Role.STORAGE_CLIENT not in inventory.hosts[host].roles:
            continue
        e = inventory.expectations(host)
        limit = e.roce.max_rx_discards if e.roce else 0
        source = "inventory: roce.max_rx_discards" + ("" if e.roce else " (default)")
        for nic in (n for n in e.nics if n.rdma):
            crit = Criterion("G2-NIC-1", "rx_discards", "<=", limit, source=source)
            check = f"nic[{nic.name}].discards"
            out.append(Check(host=host, check=check, criterion=crit, spec=None, subject=nic.name))
    return out


@dataclass
class Snapshot:
    """One host's counters per storage interface, and the raw text they came from."""

    counters: dict[str, dict[str, int]] = field(default_factory=dict)
    raw: dict[str, str] = field(default_factory=dict)


def snapshot(ex: Executor, patterns: tuple[str, ...]) -> Snapshot:
    """ethtool -S, RDMA hw_counters and the kernel's statistics of every interface matching a pattern."""
    names = ex.run("ls /sys/class/net", check=True, timeout_s=15).stdout.split()
    snap = Snapshot()
    for name in (n for n in names if any(re.search(p, n) for p in patterns)):
        res = ex.run(SNAPSHOT, name, name, name, check=True, timeout_s=30)
        snap.raw[name] = res.stdout
        try:
            snap.counters[name] = parse_ethtool_stats(res.stdout)
        except ParseError as exc:
            raise LabError(f"{ex.host}: {name}: {exc}") from exc
    return snap


def deltas(before: Snapshot, after: Snapshot) -> dict[str, dict[str, int]]:
    """Per interface, what moved between the two snapshots."""
    return {n: delta(before.counters[n], c) for n, c in after.counters.items() if n in before.counters}


def patterns_of(checks: list[NicCheck], host: str) -> tuple[str, ...]:
    return tuple(c.subject for c in checks if c.host == host)
