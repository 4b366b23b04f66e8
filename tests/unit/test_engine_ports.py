"""No engine control API open to the lab network, and the report says which engine ports were open.

Before, every LMCache profile enabled LMCache's internal API server without a host: LMCache binds it
to 0.0.0.0 by default (``internal_api_server_host`` in lmcache/v1/config.py), and it clears caches and
runs scripts for anyone on the lab network. Now a profile that enables it must bind it to loopback
(kvgate calls it on the host, over the SSH session), and each engine launch records the TCP ports its
processes listened on, which G3's engine table shows.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kvgate.base.errors import ConfigError
from kvgate.configuration.engine_profile import PROFILE_DIR, load_profile, load_profiles
from kvgate.configuration.engine_templates import DataFile
from kvgate.probes.engines.hostcall import listening
from kvgate.record import EngineLaunch
from kvgate.report.engine_tables import listening_cell
from kvgate.transport.local import LocalExecutor


def test_every_profile_that_enables_lmcaches_api_server_binds_it_to_loopback() -> None:
    enabled = 0
    for profile in load_profiles().values():
        for spec in profile.files.values():
            if isinstance(spec, DataFile) and spec.data.get("internal_api_server_enabled"):
                enabled += 1
                assert spec.data.get("internal_api_server_host") == "127.0.0.1", profile.name
    assert enabled >= 3, "vllm-lmcache and R1's two readers enable it"


@pytest.mark.parametrize("host", [None, "0.0.0.0", "10.0.0.5"])
def test_a_profile_with_lmcaches_api_server_open_to_the_network_is_refused(
    tmp_path: Path, host: str | None
) -> None:
    data = yaml.safe_load((PROFILE_DIR / "vllm-lmcache.yaml").read_text())
    config = data["files"]["lmcache.yaml"]["data"]
    config.pop("internal_api_server_host")
    if host is not None:
        config["internal_api_server_host"] = host
    (tmp_path / "open.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as err:
        load_profile(tmp_path / "open.yaml")
    assert "internal_api_server_host: 127.0.0.1" in str(err.value), err.value
    assert "open.yaml" in str(err.value)


@pytest.fixture
def listener() -> Iterator[tuple[int, int, int]]:
    """A process group of its own listening on one loopback and one every-interface port."""
    script = (
        "import socket, sys, time\n"
        "a = socket.socket(); a.bind(('127.0.0.1', 0)); a.listen()\n"
        "b = socket.socket(); b.bind(('0.0.0.0', 0)); b.listen()\n"
        "c = socket.socket(); c.bind(('127.0.0.1', 0))  # bound, not listening: not open\n"
        "print(a.getsockname()[1], b.getsockname()[1], flush=True); time.sleep(60)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, start_new_session=True
    ) as proc:
        assert proc.stdout is not None
        first, second = map(int, proc.stdout.readline().split())
        yield proc.pid, first, second
        os.killpg(proc.pid, 9)


def test_the_ports_an_engines_process_group_listens_on_are_read_from_the_host(
    listener: tuple[int, int, int],
) -> None:
    pgid, loopback, wide = listener
    with socket.socket() as other:  # a listener outside the group is not the engine's
        other.bind(("127.0.0.1", 0))
        other.listen()
        found = listening(LocalExecutor(), sys.executable, pgid)
    assert found == sorted([f"127.0.0.1:{loopback}", f"0.0.0.0:{wide}"])


def test_the_engine_table_names_the_ports_open_to_every_interface() -> None:
    launch = EngineLaunch.model_validate(
        {
            "profile": "p", "kind": "vllm", "host": "h", "argv": ["x"], "env": {}, "workdir": "/w",
            "files": {}, "version": "v", "pid": 1, "log_path": "/w/l", "started_at": "t", "ready_s": 1.0,
            "serves_concurrently": True, "listening": ["0.0.0.0:8000", "127.0.0.1:18000"],
        }
    )  # fmt: skip
    assert listening_cell(launch) == "0.0.0.0:8000, 127.0.0.1:18000; open to every interface: 0.0.0.0:8000"
    assert listening_cell(launch.model_copy(update={"listening": None})) == "not read"
