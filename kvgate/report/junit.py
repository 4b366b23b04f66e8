"""JUnit XML from the stored checks (not from pytest), so a resumed run's JUnit is complete.

One <testsuite> per gate, one <testcase> per check (classname "<gate>.<host>", name
the check id). FAIL and INVALID are <failure> (type says which), ERROR and checks
planned but never evaluated are <error>, SKIP and WAIVED are <skipped>. A gate that judged
fewer references than its profile binds adds one skipped case naming them; its "verdict"
property is the gate's verdict with its coverage ("PASS — limited coverage: 1 of 12 references").

Beside it, when the history holds a previous comparable run, a "<gate> trend" suite: one
<failure type="REGRESSION"> per figure that regressed against it (CI shows it in its tests
tab even when the gate passed), or one passing case saying none did.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from kvgate.base.criteria import Verdict
from kvgate.report.comparison import NONE, Comparison
from kvgate.report.model import CheckRow, RunView
from kvgate.report.parts import printable as clean


def outcome_element(row: CheckRow) -> ET.Element | None:
    """The child element that says how a check ended; None for PASS."""
    v = row.verdict
    if v is None:
        return ET.Element("error", message="not evaluated (run incomplete)", type="NOT_EVALUATED")
    if v is Verdict.PASS:
        return None
    if v is Verdict.WAIVED:
        w = row.waiver or {}
        msg = f"WAIVED: {w.get('reason', '?')} ({w.get('approver', '?')})"
        return ET.Element("skipped", message=clean(msg))
    tag = {
        Verdict.FAIL: "failure",
        Verdict.INVALID: "failure",
        Verdict.ERROR: "error",
        Verdict.SKIP: "skipped",
    }[v]
    el = ET.Element(tag, message=clean(row.condition), type=v.value)
    if tag != "skipped":
        el.text = clean(details(row))
    return el


def details(row: CheckRow) -> str:
    lines = [f"{row.label}: {row.condition}", f"rule: {row.rule}", f"expected: {row.expected}"]
    lines += [f"measured: {row.measured}", f"source: {row.source}", *(f"evidence: {e}" for e in row.evidence)]
    return "\n".join(lines)


def testcase(gate: str, row: CheckRow) -> ET.Element:
    case = ET.Element("testcase", classname=clean(f"{gate}.{row.host}"), name=clean(row.id))
    case.set("time", f"{row.duration_s:.3f}")
    child = outcome_element(row)
    if child is not None:
        case.append(child)
    return case


def coverage_case(view: RunView) -> list[ET.Element]:
    """A gate that judged fewer references than its profile binds (G1: hardware families than it checks):
    one skipped case naming them."""
    cover = view.outcome.coverage
    if not cover.limited:
        return []
    case = ET.Element("testcase", classname=clean(f"{view.gate}.coverage"), name=f"{cover.noun} judged")
    names = "; ".join(f"{ref}: {why}" for ref, why in cover.unjudged.items())
    message = f"limited coverage: {cover.text}; not judged: {names}"
    ET.SubElement(case, "skipped", message=clean(message))
    return [case]


def testsuite(view: RunView) -> ET.Element:
    cases = [testcase(view.gate, r) for r in view.all_rows] + coverage_case(view)
    tags = [c[0].tag if len(c) else "" for c in cases]
    suite = ET.Element("testsuite", name=clean(view.gate), tests=str(len(cases)))
    suite.set("failures", str(tags.count("failure")))
    suite.set("errors", str(tags.count("error")))
    suite.set("skipped", str(tags.count("skipped")))
    suite.set("time", f"{sum(r.duration_s for r in view.all_rows):.3f}")
    suite.set("timestamp", view.record.started_at or "")
    suite.append(properties(view))
    suite.extend(cases)
    return suite


def properties(view: RunView) -> ET.Element:
    props = ET.Element("properties")
    m, inv = view.record, view.record.inventory
    for name, value in (
        ("site", view.site),
        ("gate", view.gate),
        ("verdict", view.outcome.text),
        ("coverage", view.outcome.coverage.text),
        ("status", view.status),
        ("kvgate_version", m.kvgate_version),
        ("git_revision", m.git_revision),
        ("inventory_sha256", inv.sha256 if inv else ""),
    ):
        ET.SubElement(props, "property", name=name, value=clean(value))
    return props


def trend_suite(gate: str, comparison: Comparison) -> ET.Element:
    """The figures that regressed against the previous comparable run, each a failure."""
    regressed = [r for r in comparison.rows if r[5] == "regression"]
    suite = ET.Element("testsuite", name=clean(f"{gate} trend"), tests=str(max(1, len(regressed))))
    suite.set("failures", str(len(regressed)))
    suite.set("errors", "0")
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="compared_with", value=clean(comparison.previous))
    ET.SubElement(props, "property", name="regressions", value=str(len(regressed)))
    kind = clean(f"{gate}.trend")
    if not regressed:
        suite.append(
            ET.Element("testcase", classname=kind, name=clean(f"no regression against {comparison.previous}"))
        )
    for figure, before, now, change, noise, _ in regressed:
        case = ET.SubElement(suite, "testcase", classname=kind, name=clean(f"regression: {figure}"))
        text = f"{figure}: {before} → {now} ({change}), beyond its noise {noise}"
        text += f"; previous run {comparison.previous}"
        ET.SubElement(case, "failure", message=clean(text), type="REGRESSION").text = clean(text)
    return suite


def render_junit(view: RunView, comparison: Comparison = NONE) -> bytes:
    """The JUnit XML document for one run, with its trend suite when it was compared with another."""
    root = ET.Element("testsuites", name=clean(f"kvgate {view.gate} {view.site}"))
    root.append(testsuite(view))
    if comparison.previous:
        root.append(trend_suite(view.gate, comparison))
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"
