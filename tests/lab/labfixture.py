"""The QEMU lab for tests/lab: booted once per session (or reused when it already runs).

Imported by each lab test module (`from labfixture import lab_vm`): a conftest.py here would share
the module name `conftest` with tests/integration's under --doctest-modules.

A lab that cannot start is a test FAILURE naming why, never a skip: these tests are the only
proof that kvgate reads real NVMe-oF, ANA, multipath and kernel NFS server state.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lab import labctl


@pytest.fixture(scope="session", name="lab")
def lab_vm() -> Iterator[dict[str, object]]:
    was_running = bool(labctl.running())
    try:
        state = labctl.up()
    except Exception as exc:  # any cause of a failed boot is reported as the lab's failure
        pytest.fail(f"the QEMU lab did not start (make lab; docs/lab-vm.md): {type(exc).__name__}: {exc}")
    yield state
    if not was_running:  # leave a lab someone else booted (`make lab`) as it was
        labctl.down()
