"""The acceptance report (HTML, PDF, JUnit) is rendered only from a stored run directory."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kvgate.base.criteria import Criterion, Measurement, Verdict, judge
from kvgate.base.errors import StoreError
from kvgate.configuration.waivers import Waiver, Waivers
from kvgate.record import JudgementRecord
from kvgate.record.store import RunStore
from kvgate.report import RenderedPaths, render
from kvgate.report.charts import figure, to_svg
from kvgate.report.html import render_html
from kvgate.report.junit import render_junit
from kvgate.report.model import load_run
from kvgate.report.pdf import write_pdf
from kvgate.report.svg import sanitize

HOSTILE = "<script>alert('x')</script>"
TABLE = {"columns": ["job", "MB/s"], "rows": [["seqread", HOSTILE]], "note": "4 repeats"}
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"><rect width="60" height="20"/></svg>'


def crit(rule: str, metric: str, comparator: str, expected: object, unit: str = "") -> Criterion:
    return Criterion(rule, metric, comparator, expected, unit=unit, source="BOM line 4")


WAIVERS = Waivers(waivers=(Waiver(rule="G1-FW-1", reason="firmware update scheduled", approver="J. Doe"),))


def add(store: RunStore, host: str, check: str, c: Criterion, value: object) -> None:
    evidence = (store.artifact(host, f"{check}.txt", f"{check} raw output"),)
    j = judge(c, Measurement(c.metric, value, c.unit, evidence))  # type: ignore[arg-type]
    final, waiver = WAIVERS.apply(host, check, j)
    store.record(JudgementRecord.from_judgement(host, check, final, waiver=waiver))


def build_run(root: Path, *, finish: bool = True) -> RunStore:
    """A realistic G1 run: every verdict, a waiver, a forced gate order, hostile text, sections."""
    planned = ["gpu-1/cpu.cores", "gpu-1/nvme.temp", "gpu-1/gpu.count", "gpu-2/fw", "gpu-2/mem", "gpu-2/ib"]
    planned += ["gpu-2/kernel", "gpu-2/late.check"]
    meta = {
        "inventory": {"path": "inventory/lab-a.yaml", "sha256": "ab" * 32},
        "argv": ["kvgate", "run", "g1", "--inventory", "inventory/lab-a.yaml"],
        "planned": planned if not finish else planned[:-1],
        "forced": [
            {"gate": "g1", "reason": "BOM re-check after RMA", "by": "jdoe", "at": "2026-01-01T00:00:00Z"}
        ],
        "hosts": {"gpu-1": {"address": "10.0.0.1", "transport": "ssh", "roles": ["gpu-node"]}},
    }
    store = RunStore.create(root, site="lab-a", gate="g1", meta=meta)
    add(store, "gpu-1", "cpu.cores", crit("G1-CPU-2", "cpu_cores", ">=", 64), 96)
    add(store, "gpu-1", "nvme.temp", crit("G1-NVME-4", "temp_c", "<=", 70, "C"), 81.5)
    add(store, "gpu-1", "gpu.count", crit("G1-GPU-1", "gpus", "==", 8), None)  # INVALID: not measured
    add(store, "gpu-2", "fw", crit("G1-FW-1", "fw", "version>=", "2.1"), "1.9")  # FAIL, waived
    odd = ("javascript:alert(1)",)  # never a link
    store.record(
        JudgementRecord(
            id="gpu-2/mem", host="gpu-2", check="mem", verdict=Verdict.SKIP, condition="n/a", evidence=odd
        )
    )
    err = f"ssh: host unreachable \x1b[31m{HOSTILE}"
    store.record(
        JudgementRecord(id="gpu-2/ib", host="gpu-2", check="ib", verdict=Verdict.ERROR, condition=err)
    )
    add(store, "gpu-2", "kernel", crit("G1-OS-1", "kernel", "matches", r"^6\."), "6.8.0-45")
    store.save_facts("gpu-1", {"cpu": {"cores": 96}})
    store.update_meta(
        manifest={"gpu-1": {"kernel": "6.8.0-45", "nvme": ["nvme0", "nvme1"]}, HOSTILE: {"k": HOSTILE}},
        tool_versions={"gpu-1": {"fio": "3.36", "nvidia-smi": "550.54"}},
        reference_notes=["R2: TTFT ↓26% (LMCache blog, 2025)"],
        sections=[
            {"title": "fio baseline", "template": "sections/table.html", "data": TABLE},
            {
                "title": "Restore chart",
                "template": "chart.html",
                "data": {"svg": SVG, "note": "ssd vs recompute"},
            },
        ],
    )
    if finish:
        store.finish("complete")
    return store


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> RenderedPaths:
    """One full render (PDF included: WeasyPrint takes a second or two) shared by the module."""
    return render(build_run(tmp_path_factory.mktemp("runs")).path)


@pytest.fixture(scope="module")
def html(rendered: RenderedPaths) -> str:
    """The report's text as a browser shows it: <wbr> and .nobr spans only say where a line may wrap."""
    return re.sub(r'<span class="nobr">([^<]*)</span>', r"\1", rendered.html.read_text().replace("<wbr>", ""))


def junit_cases(xml: bytes) -> dict[str, ET.Element]:
    suite = ET.fromstring(xml).find("testsuite")
    assert suite is not None
    return {c.get("name", ""): c for c in suite.iter("testcase")}


def test_html_shows_gate_verdict_and_every_check(rendered: RenderedPaths, html: str) -> None:
    assert "<title>kvgate G1 acceptance report — lab-a</title>" in html
    box = r'class="verdict-box v-fail v-limited">\s*<div class="vb-label">Gate verdict</div>\s*'
    box += r'<div class="vb-verdict">'
    assert re.search(box + "FAIL<", html)
    assert "limited coverage: 4 of 7 hardware families" in html  # G1 covers the families it judged
    for cid in load_run(rendered.html.parent).record.planned:
        assert f">{cid}" in html
    assert "≥ 64" in html
    assert "≤ 70 C" in html
    assert "81.5 C" in html
    assert 'href="artifacts/gpu-1/nvme.temp.txt"' in html  # evidence links, relative to the run
    assert 'class="flagged v-fail"' in html
    assert 'class="flagged v-invalid"' in html
    assert "INCOMPLETE" not in html


def test_waivers_and_overrides_cannot_be_missed(html: str) -> None:
    assert re.search(r"relies on 1 waived check\s+and 1 gate-order override", html)
    assert "firmware update scheduled" in html
    assert "J. Doe" in html
    assert "BOM re-check after RMA" in html
    assert "jdoe" in html


def test_hostile_text_is_escaped_everywhere(html: str) -> None:
    assert "<script>" not in html
    assert html.count("&lt;script&gt;") >= 3  # condition, manifest host and value, section cell
    assert 'href="javascript' not in html
    assert "javascript:alert(1)" in html
    assert "\x1b" not in html
    assert "␛[31m" in html


def test_manifest_sections_and_notes_are_rendered(html: str) -> None:
    assert "6.8.0-45" in html
    assert "nvme0, nvme1" in html  # a list in words, not JSON
    assert "550.54" in html
    assert 'href="facts/gpu-1.json"' in html
    assert "R2: TTFT ↓26%" in html
    assert SVG in html
    assert "4 repeats" in html


def test_pdf_is_the_same_document(rendered: RenderedPaths) -> None:
    assert rendered.pdf is not None
    assert rendered.pdf.read_bytes().startswith(b"%PDF")
    text = subprocess.run(
        ["/usr/bin/pdftotext", str(rendered.pdf), "-"], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert "FAIL" in text
    assert "kvgate G1 acceptance report" in text
    flat = re.sub(r"\s+", "", text)  # narrow table cells wrap long ids
    view = load_run(rendered.pdf.parent)
    for row in view.all_rows:  # flagged ones by id; passes by check and host (one row for all hosts)
        assert row.id in flat if row.flagged else (row.check in flat and row.host in flat)
    assert re.search(r"Page 2 of \d+", text)  # page numbers in the margin


def test_junit_counts_follow_the_stored_verdicts(rendered: RenderedPaths) -> None:
    suite = ET.parse(rendered.junit).getroot().find("testsuite")
    assert suite is not None
    counts = {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")}
    assert counts == {
        "tests": "8",
        "failures": "2",
        "errors": "1",
        "skipped": "3",
    }  # + hardware families judged
    cases = junit_cases(rendered.junit.read_bytes())
    assert cases["gpu-1/nvme.temp"].get("classname") == "g1.gpu-1"
    assert cases["gpu-1/gpu.count"][0].get("type") == "INVALID"
    assert cases["gpu-2/fw"][0].get("message") == "WAIVED: firmware update scheduled (J. Doe)"
    assert "␛[31m" in (cases["gpu-2/ib"][0].get("message") or "")  # ESC cannot go into XML


def test_incomplete_run_says_so_and_lists_missing_checks(tmp_path: Path) -> None:
    store = build_run(tmp_path, finish=False)
    view = load_run(store.path)
    page = render_html(view, rendered_at="now")
    assert (view.status, view.missing, view.verdict) == ("incomplete", ("gpu-2/late.check",), Verdict.FAIL)
    assert "INCOMPLETE" in page
    assert "1 planned check without a verdict" in page
    assert "run status is &#39;running&#39;" in page
    assert "<code>gpu-2/late.check</code>" in page
    missing = junit_cases(render_junit(view))["gpu-2/late.check"][0]
    assert (missing.tag, missing.get("message")) == ("error", "not evaluated (run incomplete)")


def test_not_evaluated_is_never_pass(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, site="s", gate="g2", meta={"planned": ["h/a", "h/b"]})
    store.record(JudgementRecord(id="h/a", host="h", check="a", verdict=Verdict.PASS, condition="ok"))
    view = load_run(store.path)
    assert (view.verdict, view.hosts[0].outcome.verdict, view.counts["NOT EVALUATED"]) == (
        Verdict.ERROR,
        Verdict.ERROR,
        1,
    )


def test_rerender_is_deterministic_except_timestamps(rendered: RenderedPaths) -> None:
    again = load_run(rendered.html.parent)
    stamp = re.compile(r"Rendered \S+|[0-9a-f]{64}")  # the time, so the report's own hash too
    first = rendered.html.read_text()
    assert stamp.sub("", render_html(again, rendered_at="later")) == stamp.sub("", first)
    assert render_junit(again) == rendered.junit.read_bytes()


@pytest.mark.parametrize(
    ("section", "error"),
    [
        ({"title": "t", "template": "../report.html", "data": {}}, "sections[0].template: expected one of"),
        ({"title": "t", "template": "nope.html", "data": {}}, "sections[0].template: expected one of"),
        ({"title": "t", "template": "chart.html", "data": {"svg": "<svg><script>x</script></svg>"}}, "svg"),
        ({"template": "table.html"}, "sections[0].title: required field is missing"),  # run.json is checked
        (
            {"title": "t", "template": "table.html", "data": {"rows": []}},
            "sections[0].data.columns: required",
        ),
    ],
)
def test_bad_sections_are_refused(tmp_path: Path, section: dict[str, object], error: str) -> None:
    store = edited_sections(tmp_path, section)  # run.json edited by hand after the run
    with pytest.raises(StoreError, match=re.escape(error)):
        render_html(load_run(store.path), rendered_at="now")


def edited_sections(tmp_path: Path, section: dict[str, object]) -> RunStore:
    """A run whose run.json was edited by hand after the run to hold ``section``."""
    store = RunStore.create(tmp_path, site="s", gate="g2", meta={})
    meta = json.loads((store.path / "run.json").read_text()) | {"sections": [section]}
    (store.path / "run.json").write_text(json.dumps(meta))
    return store


def test_not_a_run_directory_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"no run\.json"):
        load_run(tmp_path)


def test_render_without_pdf_removes_a_stale_one(tmp_path: Path) -> None:
    store = build_run(tmp_path)
    (store.path / "report.pdf").write_bytes(b"%PDF from an earlier render")
    paths = render(store.path, pdf=False)
    assert paths.pdf is None
    assert not (store.path / "report.pdf").exists()
    assert "FAIL" in paths.html.read_text()
    assert ET.parse(paths.junit).getroot().tag == "testsuites"


def test_a_symlink_planted_as_a_temporary_file_is_not_written_through(tmp_path: Path) -> None:
    """Before: report.html.tmp (and junit.xml.tmp, report.pdf.tmp, run.json.tmp) were opened and followed."""
    store = build_run(tmp_path / "runs")
    victims = {}
    for name in ("report.html", "junit.xml", "report.pdf", "run.json"):
        victims[name] = tmp_path / f"victim-{name}"
        victims[name].write_text("not kvgate's")
        (store.path / f"{name}.tmp").symlink_to(victims[name])
    store.update_meta(reference_notes=["re-rendered"])
    render(store.path)
    assert all(v.read_text() == "not kvgate's" for v in victims.values())
    assert "re-rendered" in (store.path / "report.html").read_text()
    assert not [p.name for p in store.path.iterdir() if p.name.startswith(".")]  # no temporary left


HOSTILE_SVGS = [
    '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="1" height="1"/></svg>',
    '<svg><a href="javascript:alert(1)"><text x="1" y="1">x</text></a></svg>',
    '<svg><foreignObject><img xmlns="http://www.w3.org/1999/xhtml" src="x" onerror="alert(1)"/>'
    "</foreignObject></svg>",
    '<svg xmlns:x="http://www.w3.org/1999/xlink"><image x:href="file:///etc/hostname"/></svg>',
    '<svg><rect width="1" height="1" style="fill:url(http://example.com/x)"/></svg>',
    '<svg><rect width="1" height="1" fill="url(file:///etc/hostname)"/></svg>',
    '<!DOCTYPE svg [<!ENTITY x "y">]><svg><text>&x;</text></svg>',
]


@pytest.mark.parametrize("svg", HOSTILE_SVGS)
def test_a_chart_from_a_stored_run_is_rebuilt_from_an_allow_list(tmp_path: Path, svg: str) -> None:
    section = {"title": "t", "template": "chart.html", "data": {"svg": svg}}
    store = edited_sections(tmp_path, section)
    with pytest.raises(StoreError, match=r"data\.svg"):
        render_html(load_run(store.path), rendered_at="now")


def test_kvgates_own_chart_passes_the_allow_list_unchanged() -> None:
    with figure() as (fig, ax):
        ax.plot([1, 8], [1.0, 3.0], label="gpu-1/scratch")
        ax.plot([1], [2.0], label="<b>odd</b>")
        ax.legend()
        svg = to_svg(fig)
    assert ET.fromstring(svg).tag == "{http://www.w3.org/2000/svg}svg"
    assert sanitize(svg) == svg  # what kvgate draws, the allow-list keeps as drawn
    assert "&lt;b&gt;odd&lt;/b&gt;" in svg
    assert "<b>" not in svg


def pdf_text(path: Path) -> str:
    return subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout


def test_the_pdf_reads_nothing_from_outside_the_run(tmp_path: Path) -> None:
    """Before, WeasyPrint fetched any file:// link: images drawn and attachments embedded into the PDF."""
    run_dir, outside = tmp_path / "run", tmp_path / "etc"
    run_dir.mkdir()
    outside.mkdir()
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="40"><text x="5" y="20">{}</text></svg>'
    (outside / "secret.svg").write_text(svg.format("OUTSIDESECRET"))
    (outside / "hostname").write_text("OUTSIDESECRET\n")
    (run_dir / "chart.svg").write_text(svg.format("INSIDERUN"))
    (run_dir / "escape.svg").symlink_to(outside / "secret.svg")
    html = (
        f'<html><head><link rel="attachment" href="file://{outside}/hostname"></head><body><p>report</p>'
        f'<img src="file://{outside}/secret.svg"><img src="chart.svg"><img src="escape.svg">'
        '<img src="http://127.0.0.1:9/x.svg"><a rel="attachment" href="../etc/hostname">evidence</a>'
        "</body></html>"
    )
    with open(run_dir / "report.pdf", "wb") as out:
        write_pdf(html, run_dir=run_dir, target=out)
    text = pdf_text(run_dir / "report.pdf")
    assert "INSIDERUN" in text
    assert "OUTSIDESECRET" not in text
    listed = subprocess.run(
        ["pdfdetach", "-list", str(run_dir / "report.pdf")], capture_output=True, text=True, check=True
    )
    assert listed.stdout.startswith("0 embedded files"), listed.stdout
