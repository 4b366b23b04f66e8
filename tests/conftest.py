"""Process setup for kvgate's own test suite (the gates' pytest runs do not load it)."""

import signal
from collections.abc import Iterator

import pytest

# A suite started in the background without job control (`nohup make test &`, `( … & )`) inherits
# SIGINT ignored, and Python keeps it so: the Ctrl-C tests, which deliver SIGINT to kvgate in this
# process and to its CLI in child processes, would fail for the way they were launched. Python's
# own handler comes back here; a child exec'd from this process starts with SIGINT's default again.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failure's reason is printed when it happens, not only in the summary: a run stopped by CI's
    time limit never reaches its summary, and its output is often all that is kept of it."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    terminal = item.config.pluginmanager.get_plugin("terminalreporter")
    if report.failed and terminal is not None:
        terminal.write_line("")
        terminal.write_sep("!", f"{report.when} failed: {report.nodeid}")
        for line in report.longreprtext.splitlines()[-25:]:
            terminal.write_line(line)
