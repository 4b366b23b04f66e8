"""The report's own hash: one changed byte anywhere in report.html or report.pdf is detected."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from kvgate.cli.command_line import main
from kvgate.record import write_manifest
from kvgate.record.store import RunStore
from kvgate.report import RenderedPaths, render
from kvgate.report.seal import PLACEHOLDER, SUMS, check_html, sha256, verify_report
from tests.integration.report_runs import build

HASH = re.compile(r'<meta name="kvgate-report-sha256" content="([0-9a-f]{64})">')


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> RenderedPaths:
    return render(build(tmp_path_factory.mktemp("runs"), "g3"))


def flipped(data: bytes, at: int) -> bytes:
    """``data`` with the byte at ``at`` changed to another printable ASCII byte."""
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


def test_the_report_shows_its_own_hash_and_it_verifies(rendered: RenderedPaths) -> None:
    text = rendered.html.read_text()
    (claimed,) = HASH.findall(text)
    assert text.count(claimed) == 2  # the meta element and the sign-off line
    assert PLACEHOLDER not in text
    assert sha256(text.replace(claimed, PLACEHOLDER).encode()) == claimed
    assert all(c.ok for c in verify_report(rendered.html))
    assert main(["verify-report", str(rendered.html)]) == 0


def test_one_changed_byte_anywhere_in_the_html_is_detected(rendered: RenderedPaths, tmp_path: Path) -> None:
    data = rendered.html.read_bytes()
    text = data.decode()
    claimed = HASH.findall(text)[0]
    sign_off = text.rindex(claimed)
    places = {
        "a figure": text.index("95"),  # R2's measured figure on page 1
        "the hash in the head": text.index(claimed),
        "the hash in the sign-off": sign_off,
        "the last byte": len(data) - 2,
    }
    for what, at in places.items():
        copy = tmp_path / "report.html"
        copy.write_bytes(flipped(data, at))
        assert not check_html(copy.read_text()).ok, what
        assert main(["verify-report", str(copy)]) == 2, what


def test_the_pdf_and_the_html_are_listed_in_report_sha256(rendered: RenderedPaths, tmp_path: Path) -> None:
    sums = (rendered.html.parent / SUMS).read_text().splitlines()
    assert [line.split("  ")[1] for line in sums] == ["report.html", "report.pdf", "junit.xml"]
    assert subprocess.run(["sha256sum", "-c", SUMS], cwd=rendered.html.parent, check=False).returncode == 0
    assert main(["verify-report", str(rendered.pdf)]) == 0
    copy = tmp_path / "report.pdf"
    pdf = rendered.pdf.read_bytes() if rendered.pdf else b""
    copy.write_bytes(flipped(pdf, len(pdf) // 2))
    (tmp_path / SUMS).write_text((rendered.html.parent / SUMS).read_text())
    (check,) = verify_report(copy)
    assert not check.ok
    assert "modified" in check.detail
    assert main(["verify-report", str(copy)]) == 2


def test_the_pdf_shows_the_hash_of_the_document_it_was_laid_out_from(rendered: RenderedPaths) -> None:
    assert rendered.pdf is not None
    text = subprocess.run(
        ["pdftotext", "-layout", str(rendered.pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert re.search(r"Report sha256 [0-9a-f]{64}", text)
    assert "kvgate verify-report report.pdf" in text.replace("\n", " ")  # how to check it, in one line
    # a reader ran sha256sum on the PDF and got another value, with nothing said why
    assert "so sha256sum of the PDF gives another value" in " ".join(text.split())


def test_a_file_with_nothing_to_verify_against_is_a_clear_error(tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    assert main(["verify-report", str(other)]) == 4
    assert main(["verify-report", str(tmp_path / "missing.html")]) == 4


def test_64_zeros_in_the_runs_own_text_stay_zeros_and_the_report_verifies(tmp_path: Path) -> None:
    """The placeholder is 64 zeros; a tool output holding them is hashed as it is, not overwritten."""
    run = build(tmp_path, "g1")
    store = RunStore.open(run)
    store.update_meta(manifest={"localhost": {"nguid": PLACEHOLDER}})
    write_manifest(run)
    text = render(run, pdf=False).html.read_text()
    assert PLACEHOLDER in text  # the recorded value, shown as recorded
    assert check_html(text).ok
