"""Page 1 tells what each gate ran: G1 its hardware families and volumes, G2 its fio matrix; every gate
names its volumes with the site's description (a stand-in, a throttle, a filer)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from kvgate.base.criteria import Verdict
from kvgate.configuration.fio_matrix import load_profile
from kvgate.probes.evidence.blockdev import guest_disks
from kvgate.record import JudgementRecord
from kvgate.record.gate_order import repo_root
from kvgate.record.store import RunStore
from kvgate.report import render
from kvgate.report.model import CheckRow, load_run
from kvgate.report.summary import family_headline, summarize, threshold_headline, with_spread
from tests.integration import report_runs
from tests.integration.report_runs import build


def scope(run: Path) -> dict[str, str]:
    return dict(summarize(load_run(run)).scope)


def test_g1_says_it_has_no_profile_and_what_it_covered(tmp_path: Path) -> None:
    lines = scope(build(tmp_path, "g1"))
    assert lines["Profile"].startswith("none: G1 reads what was delivered against the inventory's bill")
    assert lines["Hardware families"] == "2: cpu, gpu"  # those its verdict's coverage counts
    assert lines["Volumes"] == "none declared"


def test_g1_page_1_says_why_a_family_was_not_judged(tmp_path: Path) -> None:
    heads = {h.what: h for h in summarize(load_run(build(tmp_path, "g1"))).headline}
    assert heads["gpu"].measured == "none ordered (gpus.count: 0)"
    # the value and the BOM's bound, not "1 of 1 match" (a reader asked for the values on the cover)
    cpu = heads["cpu threads"]
    assert (cpu.measured, cpu.against, cpu.position) == (
        "96",
        "the inventory's BOM: ≥ 64",
        "50 % above the floor",
    )


def test_g1_page_1_shows_a_familys_values_not_only_a_count() -> None:
    rows = [
        CheckRow("a/v.mount", "a", "volume[s].mount", Verdict.PASS, expected="must be yes", measured="yes"),
        CheckRow("a/v.free", "a", "volume[s].free", Verdict.PASS, expected="≥ 2 GiB", measured="62.9 GiB"),
    ]
    head = family_headline("", "volume[s]", rows)
    assert head.measured == "2 of 2 match"
    assert head.evidence == "mount yes (must be yes); free 62.9 GiB (≥ 2 GiB)"


def test_g1_of_a_bom_ordering_no_nvme_offers_no_acceptance(tmp_path: Path) -> None:
    """A reader found Accept offered for the demo's own box, whose BOM orders no NVMe and no GPU, while
    G2–G4 of the same machine said a smoke run is not offered for acceptance."""
    run = build(tmp_path, "g1")
    said = (
        "its bill of materials orders no NVMe drive and no NVMe-oF subsystem, so G1 proved these hosts "
        "match it, not the arrival of an SSD-tier system."
    )
    assert load_run(run).not_offered == said
    render(run, pdf=False)
    page = re.sub(r"<wbr>|</?span[^>]*>", "", (run / "report.html").read_text())
    assert "Accept with the exceptions" not in page
    assert page.count(f"Not offered for acceptance:</strong> {said}") == 2  # page 1 and the sign-off


def test_g2_shows_the_fio_matrix_it_ran_and_its_volumes(tmp_path: Path) -> None:
    fio = load_profile(repo_root() / "workloads" / "fio" / "smoke.yaml").model_dump(mode="json")
    meta = {
        "planned": [],
        "configuration": {"gate_profile": fio},  # as kvgate.orchestration.g2.fixtures records it
        "g2_rows": {  # a reader saw the knee at 64 I/Os in flight under a matrix of 16 at most
            "gpu-1/scratch": {"measurements": {}, "knee": None, "ceiling": None, "sweep": [["4m", 64, 6e9]]}
        },
        "volumes": {
            "scratch": {"kind": "candidate", "description": "a throttled loop device", "max_cv": 1.0}
        },
    }
    store = RunStore.create(tmp_path, site="lab-a", gate="g2", meta=meta)
    store.finish("complete")
    lines = scope(store.path)
    assert lines["Profile"] == "smoke: proves the pipeline end to end, not the storage's performance"
    assert "seqread-1m (read, bs 1m, 1 × QD 8)" in lines["fio matrix"]
    assert (
        "2 repeats, CV ≤ 50 %; sweep bs × jobs × QD 1m/4m/8m × 1/2 × 1/8 (12 cells), carried on along the "
        "readers' block size to cover the busiest of G2's own readers, each volume until its bandwidth "
        "stopped growing (I/Os in flight reached: 64 on gpu-1/scratch; its cells alone reach 16)"
        in lines["fio matrix"]
    )
    assert lines["fio matrix"].endswith(
        "3 s runs on 32m files, O_DIRECT, libaio; the inventory holds scratch to CV ≤ 100 %"
    )  # the volume's own bound, not only the profile's 50 %
    # and "Waivers and overrides" says the inventory loosened it (it said "No check was waived" alone)
    assert summarize(load_run(store.path)).relaxed == (
        "scratch: repeats' CV ≤ 100 % (volumes.<name>.expect.max_cv), where the profile smoke asks ≤ 50 %",
    )
    page = html.unescape(re.sub(r"<[^>]+>", "", render(store.path, pdf=False).html.read_text()))  # page 1 too
    assert "Bounds the inventory loosened: scratch: repeats' CV ≤ 100 %" in " ".join(page.split())
    assert lines["Volumes"] == "gpu-1/scratch (candidate): a throttled loop device"


def test_every_gate_names_the_inventorys_volumes_as_the_site_described_them(tmp_path: Path) -> None:
    volumes = {
        "fx100": {"kind": "candidate", "description": "XFS on the array's NVMe-oF namespace"},
        "nfs": {"kind": "baseline", "description": None},
    }
    store = RunStore.create(tmp_path, site="lab-a", gate="g4", meta={"planned": [], "volumes": volumes})
    store.finish("complete")
    assert scope(store.path)["Volumes"] == (
        "fx100 (candidate): XFS on the array's NVMe-oF namespace; nfs (baseline)"
    )


def test_preflight_says_it_has_no_profile_rather_than_not_recorded(tmp_path: Path) -> None:
    volumes = {"scratch": {"kind": "candidate", "description": None}}
    store = RunStore.create(
        tmp_path, site="lab-a", gate="preflight", meta={"planned": [], "volumes": volumes}
    )
    store.finish("complete")
    lines = scope(store.path)
    assert lines["Profile"].startswith("none: preflight probes, in minutes, what each gate's evidence needs")
    assert lines["Volumes"] == "scratch (candidate)"


def test_a_g1_family_is_attributed_to_the_hosts_that_judged_it() -> None:
    """The lab's G1 said '2 hosts nvme 7 of 7': all seven were the array's; the client orders none."""
    rows = [
        CheckRow("a/nvme.count", "a", "nvme.count", Verdict.PASS),
        CheckRow("a/nvme.temperature", "a", "nvme.temperature", Verdict.PASS),
        CheckRow("b/nvme.count", "b", "nvme.count", Verdict.SKIP, "inventory declares nvme.count: 0"),
    ]
    head = family_headline("", "nvme", rows)
    assert (head.where, head.measured) == ("a", "2 of 2 match")


def test_a_g2_rate_on_page_1_carries_its_repeats_spread(tmp_path: Path) -> None:
    """A reader found every page-1 figure without its spread; the CVs were three pages on."""
    view = load_run(build(tmp_path, "g2"))
    bw = CheckRow(
        "h/v.bw", "h", "volume[v].fio.seqread-1m.bw", Verdict.PASS, metric="seqread-1m.read_bw_bytes_per_s"
    )
    cv = CheckRow(
        "h/v.cv", "h", "volume[v].fio.seqread-1m.cv", Verdict.PASS, measured="9.4 %",
        metric="seqread-1m.read_bw_bytes_per_s_cv", measured_value=0.094,
    )  # fmt: skip
    p99 = CheckRow("h/v.p99", "h", "volume[v].fio.randread-4k.p99", Verdict.PASS, metric="randread-4k.p99_ns")
    assert with_spread(threshold_headline(bw), view, [bw, cv], bw).position.startswith("CV 9.4 %")
    assert with_spread(threshold_headline(p99), view, [p99, cv], p99).position == ""  # not a rate
    # a storage workload runs once: its position says so, not a blank a reader took for a lost spread
    kv = CheckRow("h/v.kv", "h", "volume[v].kv_restore.parallel.bw", Verdict.PASS,
                  metric="kv_restore.parallel.read_bw_bytes_per_s")  # fmt: skip
    assert with_spread(threshold_headline(kv), view, [kv, cv], kv).position == "one run: no spread"


def test_g2_page_1_sets_the_candidate_beside_the_baseline(tmp_path: Path) -> None:
    """The lab's G2 recorded the array slower than NFS at KV restore and said nothing of it."""
    volumes = {"array": {"kind": "candidate"}, "nfs": {"kind": "baseline"}}
    store = RunStore.create(tmp_path, site="lab", gate="g2", meta={"planned": [], "volumes": volumes})
    metric = "kv_restore.parallel.read_bw_bytes_per_s"
    for volume, value in (("array", 15.4e6), ("nfs", 22.6e6)):
        check = f"volume[{volume}].kv_restore.parallel.bw"
        store.record(
            JudgementRecord(
                id=f"h/{check}", host="h", check=check, verdict=Verdict.PASS, metric=metric,
                measured=value, unit="B/s", comparator=">", expected=0,
            )
        )  # fmt: skip
    store.finish("complete")
    (said,) = summarize(load_run(store.path)).versus
    assert said == "KV restore, parallel readers: 15.4 MB/s against 22.6 MB/s (the candidate behind)"


def test_a_smoke_g2_takes_no_side_between_volumes_the_site_set_up(tmp_path: Path) -> None:
    """A reader found the demo's candidate 'ahead' of a baseline its own Volumes row says differs from it
    by a 20 MB/s throttle alone: at smoke scale the figures stand side by side, unjudged."""
    fio = load_profile(repo_root() / "workloads" / "fio" / "smoke.yaml").model_dump(mode="json")
    volumes = {"scratch": {"kind": "candidate"}, "baseline": {"kind": "baseline"}}
    meta = {"planned": [], "volumes": volumes, "configuration": {"gate_profile": fio}}
    store = RunStore.create(tmp_path, site="lab", gate="g2", meta=meta)
    metric = "seqread-1m.read_bw_bytes_per_s"
    for volume, value in (("scratch", 1.39e9), ("baseline", 2e7)):
        check = f"volume[{volume}].fio.seqread-1m.bw"
        store.record(
            JudgementRecord(
                id=f"h/{check}", host="h", check=check, verdict=Verdict.PASS, metric=metric,
                measured=value, unit="B/s", comparator=">", expected=0,
            )
        )  # fmt: skip
    store.finish("complete")
    assert summarize(load_run(store.path)).versus == (
        "sequential read (1 MiB blocks): 1.39 GB/s against 20 MB/s",
    )
    render(store.path, pdf=False)
    assert "so no side is taken" in (store.path / "report.html").read_text()


def test_a_preflight_offers_no_acceptance(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, site="lab-a", gate="preflight", meta={"planned": []})
    store.finish("complete")
    render(store.path, pdf=False)
    page = re.sub(r"<wbr>|</?span[^>]*>", "", (store.path / "report.html").read_text())
    assert "Not offered for acceptance:</strong> a readiness check accepts nothing" in page
    assert "Accept with the exceptions" not in page


def test_a_difference_inside_the_repeats_spread_is_not_called_ahead(tmp_path: Path) -> None:
    """The demo's G2 called a write 1.82 against 1.34 GB/s 'the candidate ahead' beside a CV of 46 %."""
    volumes = {"scratch": {"kind": "candidate"}, "baseline": {"kind": "baseline"}}
    store = RunStore.create(tmp_path, site="lab", gate="g2", meta={"planned": [], "volumes": volumes})
    metric = "seqwrite-1m.write_bw_bytes_per_s"
    for volume, value, cv in (("scratch", 1.82e9, 0.12), ("baseline", 1.34e9, 0.46)):
        for check, m, v, unit in (
            (f"volume[{volume}].fio.seqwrite-1m.bw", metric, value, "B/s"),
            (f"volume[{volume}].fio.seqwrite-1m.cv", f"{metric}_cv", cv, "ratio"),
        ):
            store.record(
                JudgementRecord(
                    id=f"h/{check}", host="h", check=check, verdict=Verdict.PASS, metric=m,
                    measured=v, unit=unit, comparator=">", expected=0,
                )
            )  # fmt: skip
    store.finish("complete")
    (said,) = summarize(load_run(store.path)).versus
    assert said == (
        "sequential write (1 MiB blocks): 1.82 GB/s against 1.34 GB/s "
        "(within their repeats' spread: CV 12 % and 46 %)"
    )


def test_a_deployment_without_a_tier_on_the_storage_is_said_to_prove_serving_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader found half of G4's PASSes and two of G3's five from the demo's vLLM, whose prefix cache
    lives in its own memory, listed beside the tiered engine's with nothing said."""
    tierless = report_runs.g3_rows()
    tierless[f"{report_runs.HOST}/tiny"]["deployment"] |= {"tier": "vllm-cpu-prefix", "external_tier": False}
    served = [report_runs.check(f"engine[tiny].warm.{c}", Verdict.PASS, rule="G3-KV-3") for c in "ab"]
    monkeypatch.setattr(report_runs, "g3_rows", lambda: tierless)
    monkeypatch.setitem(report_runs.CHECKS, "g3", lambda: [*report_runs.g3_checks(), *served])
    run = build(tmp_path, "g3")
    said = summarize(load_run(run)).serving_only
    assert said == (
        f"{report_runs.HOST}/tiny (vllm-cpu-prefix) keeps its KV cache in the engine's memory, with no tier "
        "on the storage: its 2 passed checks say nothing of a KV tier on the storage",
    )
    render(run, pdf=False)
    page = re.sub(r"<wbr>|</?span[^>]*>", "", (run / "report.html").read_text())
    assert "Serving only, not storage:</strong> " + said[0].replace("'", "&#39;") in page
    monkeypatch.undo()
    assert summarize(load_run(build(tmp_path / "tiered", "g3"))).serving_only == ()


def test_g2_page_1_says_when_its_reads_went_through_a_hypervisor(tmp_path: Path) -> None:
    """A reader found the demo's 'cold' 4.4 GB/s off a virtio disk likely the hypervisor's cache, with the
    caveat mid-sentence on page 1: a volume on a virtual machine's disk gets a box of its own."""
    guest = tmp_path / "guest"
    (guest / "proc").mkdir(parents=True)
    (guest / "proc/cpuinfo").write_text("processor\t: 0\nflags\t\t: fpu sse2 hypervisor lahf_lm\n")
    driver = guest / "sys/block/vda/device"
    driver.mkdir(parents=True)
    (driver / "driver").symlink_to("../../../bus/virtio/drivers/virtio_blk")
    said = guest_disks(("vda", "loop0"), str(guest / "sys"), str(guest / "proc"))
    assert (
        said
        == "a virtual machine's disk: vda (virtio_blk), loop0 (a loop device over a file of this guest's)"
    )
    (guest / "proc/cpuinfo").write_text("flags\t\t: fpu sse2 lahf_lm\n")
    assert guest_disks(("vda",), str(guest / "sys"), str(guest / "proc")) == ""  # bare metal

    row = {"measurements": {}, "knee": None, "ceiling": None, "sweep": [], "virtual": said}
    meta = {"planned": [], "volumes": {"scratch": {"kind": "candidate"}}, "g2_rows": {"h/scratch": row}}
    store = RunStore.create(tmp_path / "runs", site="lab", gate="g2", meta=meta)
    store.finish("complete")
    page = html.unescape(re.sub(r"<[^>]+>|\u200b", "", render(store.path, pdf=False).html.read_text()))
    assert "Read through a hypervisor: h/scratch: a virtual machine's disk: vda (virtio_blk)" in page
    assert "the figures measure the virtual disk as the hypervisor served it" in page


@pytest.mark.parametrize(
    ("cv", "said"),
    [
        (0.24, "; the largest CV measured on them, 24 %, is within it: no verdict needed the looser bound"),
        (0.7, "; 1 CV(s) passed only under the looser bound (the largest, "
              "h/volume[scratch].fio.seqread-1m.cv: 70 %)"),
    ],
)  # fmt: skip
def test_a_loosened_cv_bound_says_whether_a_verdict_needed_it(tmp_path: Path, cv: float, said: str) -> None:
    # a reader found the CV bound doubled on page 1 with no word on whether any figure needed it
    fio = load_profile(repo_root() / "workloads" / "fio" / "smoke.yaml").model_dump(mode="json")
    volumes = {"scratch": {"kind": "candidate", "max_cv": 1.0}}
    meta = {"planned": [], "configuration": {"gate_profile": fio}, "volumes": volumes}
    store = RunStore.create(tmp_path, site="lab-a", gate="g2", meta=meta)
    check = "volume[scratch].fio.seqread-1m.cv"
    store.record(
        JudgementRecord(
            id=f"h/{check}", host="h", check=check, verdict=Verdict.PASS, metric="seqread-1m.read_bw_cv",
            measured=cv, unit="", comparator="<=", expected=1.0,
        )
    )  # fmt: skip
    store.finish("complete")
    (relaxed,) = summarize(load_run(store.path)).relaxed
    assert relaxed.endswith(said)
