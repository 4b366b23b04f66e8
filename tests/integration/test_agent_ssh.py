"""The agent over a real SSH session to a loopback sshd: upload once, run detached, fetch the result."""

from __future__ import annotations

from pathlib import Path

import pytest
from sshd import HostFactory, SSHServer

from kvgate.configuration.inventory.schema import Volume
from kvgate.probes import agentctl
from kvgate.probes.scratch import checked
from kvgate.transport.ssh import SSHExecutor

pytestmark = pytest.mark.timeout(180)


def test_kv_restore_runs_over_ssh_and_the_upload_is_cached(
    tmp_path: Path, sshd_pair: tuple[SSHServer, SSHServer], ssh_host: HostFactory
) -> None:
    target = tmp_path / "kv"
    target.mkdir()
    spec = {
        "target_dir": str(target),
        "kv_bytes_per_token": 4096,
        "tokens_per_chunk": 256,
        "prefix_tokens": 2048,
        "requests": 4,
        "readers_per_request": [1, 4],
    }
    with SSHExecutor("node-a", ssh_host(sshd_pair[0])) as ex:
        first = agentctl.ensure_uploaded(ex)
        events: list[dict[str, object]] = []
        vol = Volume(path=str(tmp_path), kind="candidate", scratch=True)
        job = agentctl.start(ex, "kv-restore", spec, target=checked(ex, vol, str(target)))
        result = agentctl.wait(ex, job, events.append, timeout_s=120)
        assert agentctl.ensure_uploaded(ex) == first  # cached by content hash
    assert result["status"] == "ok"
    assert [r["readers_per_request"] for r in result["restores"]] == [1, 4]
    assert all(r["checksums_failed"] == 0 and r["checksums_verified"] > 0 for r in result["restores"])
    assert any(e.get("event") == "progress" for e in events)
    assert list(target.iterdir()) == []  # the agent removed its own run directory
