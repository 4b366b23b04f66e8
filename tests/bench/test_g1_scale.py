"""A control node that scales to a rack (issue 27): G1 over 1, 16 and 64 real sshd hosts.

Each host is a network namespace with its own sshd (tests/integration/netns.py), all on this
machine. Targets, judged by the median over interleaved rounds and its 95 % interval (met,
not met or undecided; an undecided one runs more rounds within a budget):

- kvgate's own CPU seconds per host at 64 hosts ≤ those at 1 host, with and without the PDF
  (the CLI process's rusage: collection, judging, HTML and PDF);
- select() calls per command ≤ 20 in every run (the SSH executor waits on its channel).

Recorded, not judged: the wall time of 16 and 64 hosts over 1 host, beside the lab's own CPU
(the sshd processes and the commands they ran for kvgate). On a shared 2-core machine the
lab's CPU bounds the wall time; kvgate's share of all CPU says how much of it is kvgate's.

Run: ``make bench`` (as root: it creates network namespaces ``kvs-…``), or this file alone:
``.venv/bin/pytest tests/bench/test_g1_scale.py --benchmark-only -p no:cacheprovider``.
Results: docs/benchmarks.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from scale import SIZES, Campaign
from scale_lab import Rack

pytestmark = pytest.mark.timeout(3600)  # ~20 min of rounds here, then at most 10 min more


@pytest.fixture(scope="module")
def rack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rack]:
    with Rack.create(tmp_path_factory.mktemp("rack"), max(SIZES)) as rack:
        yield rack


def test_g1_scales_to_64_hosts(benchmark: Any, rack: Rack, capsys: pytest.CaptureFixture[str]) -> None:
    campaign = Campaign()
    benchmark.pedantic(
        campaign.run, args=(lambda hosts, pdf: rack.run_g1(hosts, pdf=pdf),), rounds=1, iterations=1
    )
    benchmark.extra_info.update(campaign.record())
    with capsys.disabled():
        print(f"\n{campaign.table()}")
    failed = [f"{name}: {v}" for name, v in campaign.verdicts().items() if v.verdict != "met"]
    assert not failed, "\n".join(failed)
