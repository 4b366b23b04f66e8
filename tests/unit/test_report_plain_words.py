"""A customer report says what a reader needs once, in words: G4's length against the seed's 72 h,
its headline figures by name, no advice repeated under every SKIP reason, no developer notes,
every cross-check id explained."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from test_g3_tables import inventory as g3_inventory
from test_g3_tables import result as g3_result
from test_report_tables import soak_window, soaked

from kvgate.base.config_file import repo_root
from kvgate.base.criteria import Verdict
from kvgate.base.units import MiB
from kvgate.configuration.gate_profiles.g4 import load_g4_profile
from kvgate.configuration.gateconfig import in_memory
from kvgate.orchestration.g3.plan import plan as g3_plan
from kvgate.orchestration.g3.report_rows import rows as g3_rows
from kvgate.orchestration.g4.report_rows import rows as g4_rows
from kvgate.record import JudgementRecord, RunStore, Section
from kvgate.report import render
from kvgate.report.g4_tables import spike_said
from kvgate.report.model import load_run
from kvgate.report.plots import charts
from kvgate.report.summary import summarize
from tests.integration.report_runs import build


def text(pdf: Path | None, *, last: int = 0) -> str:
    assert pdf is not None
    args = ["pdftotext", "-raw"] + (["-l", str(last)] if last else [])  # reading order: a cell stays whole
    out = subprocess.run([*args, str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return " ".join(out.split())


def test_g4_page_1_states_its_length_against_the_seeds_72_h_and_names_figures_in_words(
    tmp_path: Path,
) -> None:
    page1 = text(render(build(tmp_path, "g4")).pdf, last=1)
    assert "Soak length 2 min of the seed's 72 h: proves the pipeline, not 72 h of stability" in page1
    assert (
        "Load 4 requests in flight, 512-token prompts, 8 tokens out; 50 % of requests are turns on" in page1
    )
    assert "empty answers (HTTP 200, no token) — tiny" in page1
    assert "tiny.empty-responses 319" not in page1  # the id as a figure's name


def test_skip_advice_is_given_once_after_the_reasons(tmp_path: Path) -> None:
    whole = text(render(build(tmp_path, "g1")).pdf)
    assert "declare the item in the inventory" not in whole
    assert whole.count("once the inventory (or the gate profile) declares what its reason names") == 1
    assert "inventory declares gpus.count: 0 — 1 check" in whole  # the reason whole, once


def test_engine_profiles_carry_no_notes_to_kvgates_developers() -> None:
    profiles = sorted((repo_root() / "workloads" / "engines").glob("*.yaml"))
    assert len(profiles) > 10
    said = " ".join(" ".join(p.read_text().split()) for p in profiles)
    for developer_text in ("the report must say so", "verify with a probe"):
        assert developer_text not in said


def test_reference_notes_say_what_an_x_line_is(tmp_path: Path) -> None:
    run = build(tmp_path, "g3")
    note = (
        "X1-checkpoint-one-snapshot-baseline-bw (mismatch): one 65.6 GB snapshot saved in 178 s is 3.26 GB/s"
    )
    RunStore(run).update_meta(reference_notes=[note])
    whole = text(render(run).pdf)
    assert "a line named X1, X2, … is a cross-check between published figures of one experiment" in whole


def test_engine_command_lines_are_an_appendix_with_short_paths_and_the_limits_said_once(
    tmp_path: Path,
) -> None:
    r = g3_result()
    launches = {
        arm: e | {"argv": ["/opt/lab/.venv/bin/python3", "--model", "/var/tmp/m/tiny.gguf"]}
        for arm, e in r.engines.items()
    }
    store = RunStore.create(tmp_path, site="lab-a", gate="g3", meta={"planned": []})
    store.merge_meta(engines={"h/tiny": launches})
    store.merge_meta(g3_rows={"h/tiny": g3_rows(r, g3_plan(in_memory(g3_inventory())))})
    store.finish("complete")
    sections = load_run(store.path).sections
    assert sections[-1].title == "Appendix: G3 engine command lines"
    assert sections[-1].data["rows"][0][2] == "…/python3 --model …/tiny.gguf"
    notes = " ".join(str(s.data.get("note", "")) for s in sections)
    assert notes.count("keeps one prompt's state at a time") == 1  # the engine's limits, under "G3 arms" only


def test_a_capacity_figure_turned_off_is_said_under_the_arms(tmp_path: Path) -> None:
    r = g3_result()
    r.capacity_figure = False
    store = RunStore.create(tmp_path, site="lab-a", gate="g3", meta={"planned": []})
    store.merge_meta(g3_rows={"h/tiny": g3_rows(r, g3_plan(in_memory(g3_inventory())))})
    store.finish("complete")
    notes = " ".join(str(s.data.get("note", "")) for s in load_run(store.path).sections)
    assert (
        "capacity figure (the engine without its SSD tier against with it, bound to no reference) was not"
        in notes
    )
    assert "engines.<name>.capacity_figure: false" in notes


def test_the_seed_is_cited_as_an_article_not_by_its_file_name(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, site="lab-a", gate="g3", meta={"planned": []})
    source = "R2 (seed: 000_994578b198b8e21d.txt)"  # as gates/references.yaml names the document
    store.record(JudgementRecord(id="h/x", host="h", check="x", verdict=Verdict.PASS, source=source))
    store.finish("complete")
    html = render(store.path, pdf=False).html.read_text()
    assert "000_994578b198b8e21d" not in html
    assert "R2 (the seed article)" in html


@pytest.mark.parametrize(
    ("busiest", "said"),
    [
        (0, "Its first window's device I/O is the largest: the tier starts empty"),
        # a reader found that sentence, once said of every soak, beside a window 4 of 8.9 GB against 0.6
        (4, "The device moved the most in window 4 (40 MiB read and written; the first window 4 MiB)"),
        # a reader found a tier-less engine's first window explained by a tier it has not
        (-1, "This engine has no tier on the storage: that I/O is the integrity load's first files"),
    ],
)
def test_g4s_windows_say_which_moved_the_device_most(tmp_path: Path, busiest: int, said: str) -> None:
    windows = [soak_window(i) | ({"cache_dir_bytes": None} if busiest < 0 else {}) for i in range(6)]
    busiest = max(busiest, 0)
    windows[busiest]["device_read_bytes"] = 40 * MiB - windows[busiest]["device_write_bytes"]
    soak = soak_windows(tmp_path, windows)
    assert said in str(soak.data["note"])


def soak_windows(tmp_path: Path, windows: list[dict[str, object]]) -> Section:
    r, checks = soaked(windows)
    store = RunStore.create(tmp_path, site="lab-a", gate="g4", meta={"planned": []})
    store.artifact("gpu-1", "g4/tiny/windows.jsonl", "".join(json.dumps(w) + "\n" for w in windows))
    store.merge_meta(g4_rows={"gpu-1/tiny": g4_rows(r, checks)})
    store.finish("complete")
    (soak,) = [s for s in load_run(store.path).sections if s.title == "G4 soak windows"]
    return soak


def test_g4s_windows_say_what_the_engines_read_of_the_devices_reads(tmp_path: Path) -> None:
    """A reader saw the device's reads jump 17× in one window with nothing to say whose they were."""
    windows = [soak_window(i) | {"engine_read_bytes": MiB} for i in range(6)]
    windows[4]["device_read_bytes"] = 40 * MiB - windows[4]["device_write_bytes"]
    soak = soak_windows(tmp_path, windows)
    row = soak.data["rows"][4]
    assert row[soak.data["columns"].index("device MiB read / written (of which the engines read)")].endswith(
        "(engines read 1.0)"
    )
    assert "The engines themselves read 1.0 MiB of its " in str(soak.data["note"])


def test_a_check_on_page_1_is_not_listed_again_among_the_passes(tmp_path: Path) -> None:
    summary = summarize(load_run(build(tmp_path, "g4")))
    assert "localhost/tiny.alive" in {h.check_id for h in summary.headline}
    assert [p.row.id for _, rows in summary.passes for p in rows] == []


def test_g3_page_1_names_the_engine_and_the_model_behind_its_figures(tmp_path: Path) -> None:
    page1 = text(render(build(tmp_path, "g3")).pdf, last=1)
    assert "Engines localhost/tiny: llama-cpp-disk, serving a Llama generated here" in page1
    # the stored deployment serves one request at a time: its TTFT is mostly queueing, and page 1 says so
    assert "one request at a time: the others wait, so its TTFT is mostly queueing" in page1


def test_a_family_that_passed_says_what_each_of_its_rules_holds(tmp_path: Path) -> None:
    whole = text(render(build(tmp_path, "g1")).pdf)
    assert "G1-CPU-4: inventory: hosts.localhost.expect.cpu.threads" in whole  # '≥ 64' held to what


def test_g2_page_1_says_what_its_storage_workloads_read_and_wrote(tmp_path: Path) -> None:
    page1 = text(render(build(tmp_path, "g2")).pdf, last=1)
    # a reader matched the smoke KV's 16.4 kB per token against G3's engines and found none: it says so
    assert (
        "KV restore: 8 requests at once, each the KV of 8,192 prompt tokens of smoke (synthetic: no G3 "
        "engine's model) (134 MB: 16.4 kB per token" in " ".join(page1.split())
    )
    assert "checkpoint: a 268 MB snapshot by 4 ranks (split over them), each file fsynced" in page1


def test_g4s_page_1_says_when_another_reader_shared_the_device(tmp_path: Path) -> None:
    """A reader found the device reading 208 GB beside a two-minute soak, said nowhere on G4's page 1."""
    windows = [soak_window(i) | {"engine_read_bytes": MiB} for i in range(6)]
    soak_windows(tmp_path / "quiet", windows)
    quiet = summarize(load_run(next((tmp_path / "quiet").glob("lab-a/g4-*"))))
    assert quiet.shared_device == ""
    windows[2]["device_read_bytes"] = 900 * MiB  # far past the engines' 1 MiB and the integrity share
    soak_windows(tmp_path / "busy", windows)
    said = summarize(load_run(next((tmp_path / "busy").glob("lab-a/g4-*")))).shared_device
    assert said.startswith("in 1 of the 6 soak windows whose engines' reads are known the device read more ")
    assert "(the first, tiny window 2: the device read 900 MiB, the engines 1 MiB" in said


def test_g1s_page_1_says_what_it_could_not_read(tmp_path: Path) -> None:
    """A reader found the clock 'not read' and a NIC's 'speed n/a' only in G1's appendix."""
    manifest = {
        "localhost": {
            "clock": "not read: no chronyc; timedatectl: `timedatectl show` exited 1: No systemd",
            "nics": ["eth0 up speed n/a mtu 1400 virtio_net"],
            "kernel": "6.1.0-26",
        }
    }
    store = RunStore.create(tmp_path, site="lab-a", gate="g1", meta={"planned": [], "manifest": manifest})
    store.finish("complete")
    said = summarize(load_run(store.path)).unread
    assert said == (
        "clock on localhost (not read: no chronyc; timedatectl: `timedatectl show` exited 1: No systemd)",
        "nics on localhost (eth0 up speed n/a mtu 1400 virtio_net)",
    )


def test_g3s_page_1_says_how_fast_each_volume_restored(tmp_path: Path) -> None:
    """A reader found the demo's ↓85 % TTFT to be its baseline's 20 MB/s throttle, said nowhere near it."""
    run = build(tmp_path, "g3")
    assert summarize(load_run(run)).volume_restores == (
        "localhost/tiny: baseline-volume 0.1 GB/s, candidate-volume 0.5 GB/s",
    )
    page = " ".join(render(run, pdf=False).html.read_text().split())
    assert "What R2/R3's volume arms compared:</strong> the same tier restored" in page


def test_g4s_windows_table_marks_its_warm_up(tmp_path: Path) -> None:
    """A reader could not tell window 0 was the warm-up the trends leave out."""
    windows = [soak_window(i) for i in range(4)]
    r, checks = soaked(windows)
    profile = load_g4_profile("smoke").model_dump(mode="json")  # warmup_windows: 1
    meta = {"planned": [], "configuration": {"gate_profile": profile}}
    store = RunStore.create(tmp_path, site="lab-a", gate="g4", meta=meta)
    store.artifact("gpu-1", "g4/tiny/windows.jsonl", "".join(json.dumps(w) + "\n" for w in windows))
    store.merge_meta(g4_rows={"gpu-1/tiny": g4_rows(r, checks)})
    store.finish("complete")
    (soak,) = [s for s in load_run(store.path).sections if s.title == "G4 soak windows"]
    assert [row[1] for row in soak.data["rows"]] == ["0 (warm-up)", "1", "2", "3"]


def test_a_soak_window_whose_tpot_collapsed_is_marked(tmp_path: Path) -> None:
    # a reader found tiny-vllm's window 3 at TPOT p50 0.00383 ms beside 1.47–2.03 ms, with nothing said
    windows = [soak_window(i) for i in range(6)]
    windows[3]["summary"] = {**windows[3]["summary"], "p50_tpot_ms": 0.00383}
    soak = soak_windows(tmp_path, windows)
    column = soak.data["columns"].index("TPOT p50 ms")
    cells = [row[column] for row in soak.data["rows"]]
    assert cells[3] == "0.00383 (collapsed: tokens read in bursts)"
    assert not any("collapsed" in c for i, c in enumerate(cells) if i != 3)


def test_g4_page_1_says_when_the_tiers_hits_came_from_memory_not_the_storage(tmp_path: Path) -> None:
    # a reader found tiny-llama's hit trend "held" while its engines read 0–1 MiB a window from the device
    windows = [soak_window(i) | {"engine_read_bytes": 300 << 10} for i in range(6)]
    r, checks = soaked(windows)
    store = RunStore.create(tmp_path, site="lab-a", gate="g4", meta={"planned": []})
    store.artifact("gpu-1", "g4/tiny/windows.jsonl", "".join(json.dumps(w) + "\n" for w in windows))
    store.merge_meta(g4_rows={"gpu-1/tiny": g4_rows(r, checks)})
    store.finish("complete")
    (said,) = summarize(load_run(store.path)).from_memory
    assert said == (
        "tiny on gpu-1: its tier served 54,000 prompt tokens from cache over 6 windows while its engines "
        "read 1.8 MiB from the device"
    )
    read = [
        w | {"engine_read_bytes": 40 << 20} for w in windows
    ]  # 240 MiB: the tier was read from the device
    store2 = RunStore.create(tmp_path / "b", site="lab-a", gate="g4", meta={"planned": []})
    store2.artifact("gpu-1", "g4/tiny/windows.jsonl", "".join(json.dumps(w) + "\n" for w in read))
    store2.merge_meta(g4_rows={"gpu-1/tiny": g4_rows(r, checks)})
    store2.finish("complete")
    assert summarize(load_run(store2.path)).from_memory == ()


def test_g3_page_1_says_which_of_the_seeds_figures_do_not_hold(tmp_path: Path) -> None:
    # a reader found the seed's checkpoint bandwidths off by up to 89 % said only on page 13; the next read
    # its 5 failed readings (two pairs of them other readings of the same figures) as 5 wrong figures
    notes = [
        "X1-checkpoint-one-snapshot-baseline-bw (mismatch): one 65.6 GB snapshot saved in 178 s …",
        "R2-ttft-p50-tp8 (unsupported): stated ↓26–32%; …",
        "R1-cold-read-bw-conc16 (consistent): …",
    ]
    store = RunStore.create(tmp_path, site="lab-a", gate="g3", meta={"planned": [], "reference_notes": notes})
    store.finish("complete")
    assert summarize(load_run(store.path)).seed_checked == (
        "1 cross-check of its figures against the numbers published with them does not hold "
        "(X1-checkpoint-one-snapshot-baseline-bw): notes on the seed, not verdicts of this run; some are "
        "other readings of the same figures, so this counts readings, not wrong figures; 1 of its ranges "
        "no published figure reproduces "
        "(R2-ttft-p50-tp8)"
    )


def test_a_tier_less_soaks_chart_caption_draws_no_tier(tmp_path: Path) -> None:
    # a reader found "the tier is shown as a share of its capacity" under a chart with no tier panel
    windows = [soak_window(i) | {"cache_dir_bytes": None} for i in range(6)]
    soak_windows(tmp_path, windows)
    (chart,) = [c for c in charts(load_run(next(tmp_path.glob("*/g4-*")))) if c.title.startswith("Soak over")]
    assert chart.caption.endswith("Shaded: warm-up. This engine has no tier on the storage.")


def test_g4_pass_rows_that_page_1_qualifies_say_so_beside_their_figures(tmp_path: Path) -> None:
    # a reader weighed hit retention (hits from the page cache) and cache capacity (cap never reached) as
    # plain green PASS rows, their caveats a box above them
    windows = [soak_window(i) | {"engine_read_bytes": 300 << 10} for i in range(6)]
    r, checks = soaked(windows)
    store = RunStore.create(tmp_path, site="lab-a", gate="g4", meta={"planned": []})
    store.artifact("gpu-1", "g4/tiny/windows.jsonl", "".join(json.dumps(w) + "\n" for w in windows))
    store.merge_meta(g4_rows={"gpu-1/tiny": g4_rows(r, checks)})
    for key, rule, metric, value in (
        ("hit-retention", "G4-HIT-1", "hit_ratio_retention", 0.96),
        ("cache-capacity", "G4-CAP-1", "cache_peak_ratio", 0.966),
    ):
        check = f"soak[tiny].{key}"
        store.record(
            JudgementRecord(
                id=f"gpu-1/{check}", host="gpu-1", check=check, verdict=Verdict.PASS, rule=rule,
                metric=metric, measured=value, unit="x", expected=0.5,
                comparator=">=" if key == "hit-retention" else "<=",
            )
        )  # fmt: skip
    store.finish("complete")
    said = {h.what: h.position for h in summarize(load_run(store.path)).headline}
    assert said["cache hit ratio, last windows ÷ first — tiny"].endswith(
        "; the hits came from the page cache, not the storage"
    )
    capacity = next(p for w, p in said.items() if "tiny" in w and not w.startswith("cache hit ratio"))
    assert capacity.endswith("; below its cap: eviction at the cap not exercised")


def test_a_window_whose_ttft_p99_spiked_is_marked_and_said_on_page_1(tmp_path: Path) -> None:
    # a reader found the demo's last window at p99 4.16 s, 45× the others', in a chart only, while page 1
    # said the soak's TTFT p50 went 0.0442 → 0.0429
    windows = [soak_window(i) for i in range(6)]
    windows[5]["summary"] = windows[5]["summary"] | {"p99_ttft_ms": 45 * 3106.4, "completed": 18}
    soak = soak_windows(tmp_path, windows)
    p99 = soak.data["columns"].index("TTFT p99 s")
    assert [row[p99] for row in soak.data["rows"]][-2:] == ["3.11", "140 (spike: 45× the median)"]
    (said,) = spike_said("tiny on gpu-1", windows)
    assert said == (
        "tiny on gpu-1, window 5: TTFT p99 140 s, 45× its windows' median 3.11 s, "
        "with 18 requests completed against a median of 40"
    )
    assert spike_said("tiny on gpu-1", windows[:5]) == []
