"""pytest plugin: inventory, run store, per-(host, check) parametrization and recording.

Registered by the root ``conftest.py``. Gate suites under ``gates/`` say *what* is
checked; this plugin turns a plan (inventory → checks) into one test per check,
records every verdict in the run store as it happens, and maps lab failures to
pytest ERROR and out-of-spec values to FAILED.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import pytest

from kvgate.base.criteria import Judgement, Verdict
from kvgate.base.errors import KvgateError, LabError
from kvgate.configuration.gateconfig import GateConfig
from kvgate.configuration.inventory import LoadedInventory
from kvgate.judgement import Plan
from kvgate.judgement import family as plan_family
from kvgate.orchestration.gate_plans import plans, record_g3_reach
from kvgate.orchestration.session import GateSession
from kvgate.record import PREFLIGHT, JudgementRecord, RunStore, no_checks
from kvgate.transport import CANCEL

pytest_plugins = [
    "kvgate.orchestration.gatefixtures",
    "kvgate.orchestration.g2.fixtures",
    "kvgate.orchestration.g2.nic_fixtures",
    "kvgate.orchestration.g3.fixtures",
    "kvgate.orchestration.g4.fixtures",
    "kvgate.orchestration.preflight.fixtures",
]

SESSION = pytest.StashKey[GateSession]()


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("kvgate", "kvgate acceptance gates")
    g.addoption("--inventory", default="inventory/local.yaml", help="inventory YAML (default: %(default)s)")
    g.addoption("--run-dir", default="results", help="root of run directories (default: %(default)s)")
    g.addoption("--resume", default=None, metavar="RUN", help="resume this run directory")
    g.addoption("--waivers", default=None, metavar="FILE", help="waivers YAML")
    g.addoption(
        "--force-gate-order", default=None, metavar="REASON", help="run without a passed earlier gate"
    )


def pytest_configure(config: pytest.Config) -> None:
    for line in (
        "checks(plan=fn, judged_on=fixture, judge=fn): parametrize `check` from plan(gate config)",
        "gate(name): the gate a test module belongs to",
    ):
        config.addinivalue_line("markers", line)
    config.stash[SESSION] = GateSession(config)
    CANCEL.reset()


def pytest_keyboard_interrupt() -> None:
    """Ctrl-C: end the commands worker threads are running and start no new one."""
    CANCEL.cancel()


def _session(config: pytest.Config) -> GateSession:
    return config.stash[SESSION]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("checks")
    if marker is None or "check" not in metafunc.fixturenames:
        return
    plan: Callable[[Any], list[Any]] = marker.kwargs["plan"]  # a lone callable arg would decorate
    checks = plan(_session(metafunc.config).gate_config())
    metafunc.parametrize("check", checks, ids=[f"{c.host}/{c.check}" for c in checks])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gates = {m.args[0] for item in items for m in item.iter_markers("gate")}
    if not gates:
        return
    if len(gates) > 1:
        raise pytest.UsageError(f"one gate per run, got {sorted(gates)}")
    sess = _session(config)
    gate = gates.pop()
    in_plan_order(items, gate, sess.gate_config())
    planned = [check_id(i) for i in items if check_id(i)]
    if not planned:  # every plan was empty: nothing to run, and nothing to call PASS
        raise pytest.UsageError(no_checks(gate, sess.option("inventory")))
    sess.gate = gate
    if config.option.collectonly:  # listing the catalogue: no run directory, no gate-order check
        return
    store = sess.open_store(planned)
    if gate == PREFLIGHT:
        record_g3_reach(store, sess.gate_config())
    done = store.finished_ids()
    keep = [i for i in items if check_id(i) not in done]
    if skipped := [i for i in items if check_id(i) in done]:
        config.hook.pytest_deselected(items=skipped)
    items[:] = keep
    sess.hosts_pending = {check_id(i).partition("/")[0] for i in keep if check_id(i)}


def in_plan_order(items: list[pytest.Item], gate: str, config: GateConfig) -> None:
    """Run the checks in their plan's order (the gate module lists them family by family)."""
    order = {c.id: i for i, c in enumerate(c for plan in plans(gate) for c in plan(config))}
    items.sort(key=lambda i: order.get(check_id(i), len(order)))


def check_id(item: pytest.Item) -> str:
    """'<host>/<check>' for parametrized check tests, '' otherwise."""
    callspec = getattr(item, "callspec", None)
    check: Any = callspec.params.get("check") if callspec else None
    # an empty plan parametrizes with pytest's NOTSET placeholder: no check
    return f"{check.host}/{check.check}" if hasattr(check, "host") else ""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    cid = check_id(item)
    sess = _session(item.config)
    if cid and report.failed and cid not in sess.recorded and sess.store is not None:
        # the lab (a fixture) or a bug stopped the check before a verdict: ERROR, never PASS
        exc = call.excinfo.value if call.excinfo else None
        reason = str(exc) if isinstance(exc, KvgateError) else f"internal error: {call.excinfo!r}"
        host, _, check = cid.partition("/")
        sess.store.record(
            JudgementRecord(id=cid, host=host, check=check, verdict=Verdict.ERROR, condition=reason)
        )
        sess.recorded.add(cid)
    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    sess = _session(session.config)
    sess.close(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)


# -- fixtures every gate uses ---------------------------------------------------------------


@pytest.fixture(scope="session")
def gate_session(request: pytest.FixtureRequest) -> GateSession:
    return _session(request.config)


@pytest.fixture(scope="session")
def inventory(gate_session: GateSession) -> LoadedInventory:
    return gate_session.loaded()


@pytest.fixture(scope="session")
def run_store(gate_session: GateSession) -> RunStore:
    if gate_session.store is None:
        raise LabError("no run store: this test is not part of a gate (missing pytest.mark.gate)")
    return gate_session.store


Judge = Callable[[Any, Any], Judgement]


def _evaluate(check: Any, evidence: Any) -> Judgement:
    j: Judgement = check.evaluate(evidence)
    return j


def family(plan: Plan, *rules: str, judged_on: str, judge: Judge = _evaluate) -> pytest.MarkDecorator:
    """A gate test is one family of checks: ``check`` runs over the plan's checks of ``rules``.

    Its ``verdict`` is ``judge(check, <the fixture named judged_on>)`` (default ``check.evaluate``).

    >>> from kvgate.orchestration.g2.plan import plan
    >>> family(plan, "G2-KV-*", judged_on="volume_measurements").kwargs["judged_on"]
    'volume_measurements'
    """
    return pytest.mark.checks(plan=plan_family(plan, *rules), judged_on=judged_on, judge=judge)


@pytest.fixture
def verdict(check: Any, request: pytest.FixtureRequest, gate_session: GateSession) -> Judgement:
    """The check judged on its evidence, waivers applied and stored; the test body asserts it."""
    marker = request.node.get_closest_marker("checks")
    if marker is None or "judged_on" not in marker.kwargs:
        raise TypeError(f"{request.node.nodeid}: `verdict` needs a test marked by family()")
    evidence = request.getfixturevalue(marker.kwargs["judged_on"])
    j = marker.kwargs["judge"](check, evidence)
    return gate_session.record(check.host, check.check, j)


def expect(j: Judgement) -> None:
    """Turn a verdict into the pytest outcome: FAIL/INVALID fail, SKIP skips, WAIVED xfails."""
    if j.verdict is Verdict.SKIP:
        pytest.skip(j.condition)
    if j.verdict is Verdict.WAIVED:
        pytest.xfail(f"WAIVED: {j.condition}")
    assert j.verdict is Verdict.PASS, f"{j.verdict}: {j.condition}"
