"""SSHExecutor against real OpenSSH servers on 127.0.0.1: commands, streams, timeouts, keys, files."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sshd import HostFactory, SSHServer, descendants, free_port

from kvgate.base.errors import CommandTimeout, HostKeyError, TransportError
from kvgate.configuration.inventory.schema import Host
from kvgate.transport import CommandResult, connect
from kvgate.transport import ssh as ssh_module
from kvgate.transport.fanout import failed, fan_out
from kvgate.transport.liveness import DEAD_AFTER_S
from kvgate.transport.local import LocalExecutor
from kvgate.transport.ssh import SSHExecutor

pytestmark = pytest.mark.timeout(120)

Pair = tuple[SSHServer, SSHServer]


def server_port(ex: SSHExecutor) -> int:
    """The sshd port the executor really reached (last field of $SSH_CONNECTION)."""
    return int(ex.run("echo $SSH_CONNECTION").check().stdout.split()[3])


def fingerprint(server: SSHServer) -> str:
    """``SHA256:...`` of the server's host key, as ssh-keygen prints it."""
    out = subprocess.run(
        ["ssh-keygen", "-lf", str(server.dir / "host_ed25519_key.pub")],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()[1]


def processes_with(marker: str) -> list[int]:
    """Pids whose command line contains ``marker``."""
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker in cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                pids.append(int(cmdline.parent.name))
        except OSError:
            continue
    return [p for p in pids if p != os.getpid()]


def test_run_on_both_servers(sshd_pair: Pair, ssh_host: HostFactory) -> None:
    for name, server in zip(("a", "b"), sshd_pair, strict=True):
        with SSHExecutor(name, ssh_host(server)) as ex:
            result = ex.run("echo out; echo err >&2; exit 3")
            assert (result.host, result.exit_status) == (name, 3)
            assert (result.stdout, result.stderr) == ("out\n", "err\n")
            assert 0 < result.duration_s < 5
            assert server_port(ex) == server.port


def test_sessions_read_no_rc_file_of_the_login_user(sshd_pair: Pair, ssh_host: HostFactory) -> None:
    # A stale `pyenv rehash` lock behind root's ~/.bashrc once made every CI session wait 60 s:
    # a session must start in the fixture's own HOME, with no rc file on its path.
    server = sshd_pair[0]
    with SSHExecutor("a", ssh_host(server)) as ex:
        home = ex.run("echo $HOME; ls -A $HOME", check=True).stdout.split()
        assert home == [str(server.dir / "home")]


def test_arguments_reach_the_remote_command_literally(sshd_pair: Pair, ssh_host: HostFactory) -> None:
    args = ["a b", "it's", '"dq"', "$HOME", "x; echo pwned", "`id`", "*", "tab\there", ""]
    with SSHExecutor("a", ssh_host(sshd_pair[0])) as ex:
        result = ex.run("printf '[%%s]\\n'" + " %s" * len(args), *args, check=True)
        assert result.stdout.splitlines() == [f"[{a}]" for a in args]
        env = ex.run("printenv KV", env={"KV": "a b;$x'\""}, check=True)
        assert env.stdout == "a b;$x'\"\n"


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "script",
    [
        # stderr first: a reader that drains stdout before stderr stalls here
        "head -c 5000000 /dev/zero | tr '\\0' e >&2; head -c 5000000 /dev/zero | tr '\\0' o",
        "for i in $(seq 5000); do printf '%%0999d\\n' 0; printf '%%0999d\\n' 1 >&2; done",  # %% : a template
    ],
    ids=["stderr-first", "interleaved"],
)
def test_megabytes_on_both_streams(sshd_pair: Pair, ssh_host: HostFactory, script: str) -> None:
    with SSHExecutor("a", ssh_host(sshd_pair[0])) as ex:
        result = ex.run(script, timeout_s=50, check=True)
    assert (len(result.stdout), len(result.stderr)) == (5_000_000, 5_000_000)
    assert set(result.stdout) <= {"o", "0", "\n"}
    assert set(result.stderr) <= {"e", "0", "1", "\n"}


@pytest.mark.parametrize("script", ["true", "echo out; echo err >&2", "sleep 0.5; echo late"])
def test_a_command_waits_on_its_channel_without_spinning(
    sshd_pair: Pair, ssh_host: HostFactory, script: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """select() wakes on data, EOF or a poll period, never in a loop (issue 27: 614–4,617 per command).

    The bound counts wake-ups, not seconds, so a busy machine (a slower command) cannot fail it.
    """
    calls = 0
    real_select = ssh_module.select.select

    def counted(*args: Any) -> Any:
        nonlocal calls
        calls += 1
        return real_select(*args)

    with SSHExecutor("a", ssh_host(sshd_pair[0])) as ex:
        ex.run("true").check()  # connected
        monkeypatch.setattr(ssh_module.select, "select", counted)
        results = [ex.run(script).check() for _ in range(10)]
    seconds = sum(r.duration_s for r in results)
    assert calls <= 10 * 5 + 2 * seconds / ssh_module.POLL_S, f"{calls} select() calls in 10 commands"


def test_exit_255_is_the_command_status(sshd_pair: Pair, ssh_host: HostFactory) -> None:
    with SSHExecutor("a", ssh_host(sshd_pair[0])) as ex:
        assert ex.run("exit 255").exit_status == 255
        assert ex.run("true").ok  # the connection is still fine


def test_timeout_kills_the_remote_command(sshd_pair: Pair, ssh_host: HostFactory) -> None:
    marker = f"sleep 30.{random.randrange(10**6):06d}"
    start = time.monotonic()
    with SSHExecutor("a", ssh_host(sshd_pair[0])) as ex, pytest.raises(CommandTimeout) as info:
        ex.run(marker, timeout_s=2)
    assert time.monotonic() - start < 10
    assert info.value.timeout_s == 2
    assert marker in str(info.value)
    deadline = time.monotonic() + 3
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_with(marker) == []


def test_client_deadline_when_output_never_closes(sshd_pair: Pair, ssh_host: HostFactory) -> None:
    """A detached child keeps the channel open: the local deadline (timeout + 10 s) still fires."""
    marker = f"sleep 40.{random.randrange(10**6):06d}"
    start = time.monotonic()
    try:
        with SSHExecutor("a", ssh_host(sshd_pair[0])) as ex, pytest.raises(CommandTimeout):
            ex.run(f"setsid {marker} & echo started", timeout_s=1)
        assert 10 <= time.monotonic() - start < 15
    finally:
        for pid in processes_with(marker):
            os.kill(pid, 9)


def test_unknown_host_key_is_refused(sshd_pair: Pair, ssh_host: HostFactory, tmp_path: Path) -> None:
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    server = sshd_pair[0]
    with pytest.raises(HostKeyError) as info:
        SSHExecutor("a", ssh_host(server, known_hosts=str(empty))).run("true")
    message = str(info.value)
    for expected in (fingerprint(server), str(empty), f"[127.0.0.1]:{server.port}", "ssh-keyscan"):
        assert expected in message
    assert "trust_on_first_use: true" in message
    assert empty.read_text() == ""


@pytest.mark.parametrize(("tofu", "hashed"), [(False, False), (True, False), (False, True)])
def test_changed_host_key_is_refused(
    sshd_pair: Pair, ssh_host: HostFactory, tmp_path: Path, tofu: bool, hashed: bool
) -> None:
    a, b = sshd_pair
    forged = tmp_path / "known_hosts_forged"
    # line 1: the other server, line 2: a's name with b's key
    forged.write_text(f"{b.known_hosts_name} {b.host_key_line}\n{a.known_hosts_name} {b.host_key_line}\n")
    if hashed:  # HashKnownHosts yes: names are salted hashes, line numbers must still be found
        subprocess.run(["ssh-keygen", "-q", "-H", "-f", str(forged)], check=True, capture_output=True)
        assert a.known_hosts_name not in forged.read_text()
    with pytest.raises(HostKeyError) as info:
        SSHExecutor("a", ssh_host(a, known_hosts=str(forged), trust_on_first_use=tofu)).run("true")
    message = str(info.value)
    assert "CHANGED" in message
    assert "man-in-the-middle" in message
    assert f"{forged}:2" in message
    assert fingerprint(a) in message
    assert fingerprint(b) in message
    assert forged.read_text().count("\n") == 2  # nothing recorded


def test_trust_on_first_use_records_the_key(sshd_pair: Pair, ssh_host: HostFactory, tmp_path: Path) -> None:
    a = sshd_pair[0]
    fresh = tmp_path / "new" / "known_hosts"
    with SSHExecutor("a", ssh_host(a, known_hosts=str(fresh), trust_on_first_use=True)) as ex:
        assert ex.run("true").ok
    assert fresh.read_text() == f"{a.known_hosts_name} {a.host_key_line}\n"
    with SSHExecutor("a", ssh_host(a, known_hosts=str(fresh))) as ex:
        assert ex.run("true").ok  # now a known host, no TOFU needed


def test_connection_refused_names_the_host(ssh_host: HostFactory, sshd_pair: Pair) -> None:
    port = free_port()
    host = ssh_host(sshd_pair[0], port=port)
    start = time.monotonic()
    with pytest.raises(TransportError) as info:
        SSHExecutor("dead", host).run("true")
    assert time.monotonic() - start < 3
    assert not isinstance(info.value, HostKeyError)
    assert f"host dead (root@127.0.0.1:{port})" in str(info.value)
    assert "refused" in str(info.value)


def test_wrong_key_is_an_authentication_failure(sshd_pair: Pair, ssh_host: HostFactory) -> None:
    a, b = sshd_pair
    with pytest.raises(TransportError, match=r"root@127\.0\.0\.1.*authentication failed"):
        SSHExecutor("b", ssh_host(b, key_file=str(a.client_key))).run("true")


def test_killed_sshd_means_transport_error(sshd_pair: Pair, ssh_host: HostFactory) -> None:
    a = sshd_pair[0]
    with SSHExecutor("a", ssh_host(a)) as ex:
        assert ex.run("true").ok
        a.kill()
        with pytest.raises(TransportError, match=r"host a .*connection lost.*refused"):
            ex.run("true")


def test_connection_dropped_mid_command_is_not_an_exit_status(sshd_pair: Pair, ssh_host: HostFactory) -> None:
    a = sshd_pair[0]
    killer = threading.Timer(0.5, a.kill)
    with SSHExecutor("a", ssh_host(a)) as ex:
        assert ex.run("kill -9 $$").exit_status == -1  # a signal death is not a lost connection
        killer.start()
        with pytest.raises(TransportError, match="lost while running `sleep 20`"):
            ex.run("sleep 20")
    killer.join()


def test_a_frozen_server_is_connection_lost_within_seconds(sshd_pair: Pair, ssh_host: HostFactory) -> None:
    """sshd stopped (SIGSTOP) mid-command: TCP stays up, no SSH packet comes. Not 'was killed' at 40 s."""
    a = sshd_pair[0]
    assert a.proc is not None
    frozen = [a.proc.pid]

    def freeze() -> None:
        frozen.extend(descendants(a.proc.pid) if a.proc else [])
        for pid in frozen:
            os.kill(pid, signal.SIGSTOP)

    timer = threading.Timer(1, freeze)
    try:
        with SSHExecutor("a", ssh_host(a)) as ex:
            start = time.monotonic()
            timer.start()
            with pytest.raises(
                TransportError, match="lost while running `sleep 30`: nothing heard from the host"
            ):
                ex.run("sleep 30", timeout_s=40)
            assert DEAD_AFTER_S <= time.monotonic() - start < DEAD_AFTER_S + 6
            with pytest.raises(
                TransportError
            ) as info:  # sshd still frozen: its port accepts, it says nothing
                ex.run("true")
            assert "connection lost (nothing heard from the host for" in str(info.value)
            assert "reconnecting once failed: " in str(info.value)
            assert "sshd does not answer (hung or overloaded?)" in str(info.value)
    finally:
        timer.cancel()
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)


def test_restarted_sshd_reconnects_once(sshd_pair: Pair, ssh_host: HostFactory) -> None:
    a = sshd_pair[0]
    with SSHExecutor("a", ssh_host(a)) as ex:
        before = ex.run("echo $SSH_CONNECTION").check().stdout.split()[1]
        a.restart()
        after = ex.run("echo $SSH_CONNECTION").check().stdout.split()[1]
    assert before != after  # a new TCP connection (new client port)


def test_proxy_jump_through_a_to_b(sshd_pair: Pair, ssh_host: HostFactory) -> None:
    a, b = sshd_pair
    a.authorize(b.client_key)  # the lab's one key opens both hosts
    with SSHExecutor("b", ssh_host(b, proxy_jump=f"root@127.0.0.1:{a.port}")) as ex:
        assert server_port(ex) == b.port
        assert f"via root@127.0.0.1:{a.port}" in ex.label
        a.kill()  # b itself is fine, but the only way to it went through a
        with pytest.raises(
            TransportError, match=rf"jump host root@127\.0\.0\.1:{a.port}: connection refused"
        ):
            ex.run("true")


def test_ssh_config_is_honoured_and_inventory_wins(
    sshd_pair: Pair, known_hosts: Path, tmp_path: Path
) -> None:
    a, b = sshd_pair
    a.authorize(b.client_key)
    config = tmp_path / "ssh_config"
    config.write_text(
        f"Host lab-b\n  HostName 127.0.0.1\n  Port {b.port}\n  User root\n  IdentityFile {b.client_key}\n"
        f"  ProxyJump 127.0.0.1:{a.port}\n"
        f"Host 127.0.0.1\n  User root\n  IdentityFile {b.client_key}\n"  # the jump host's own entry
        f"Host lab-direct\n  HostName 127.0.0.1\n  Port {b.port}\n  User nobody\n"
    )
    via_config = Host(address="lab-b", known_hosts=str(known_hosts))
    with SSHExecutor("b", via_config, ssh_config=config) as ex:
        assert server_port(ex) == b.port
        assert " via " in ex.label
    explicit = Host(address="lab-direct", port=a.port, user="root", key_file=str(a.client_key))
    with SSHExecutor(
        "a", explicit.model_copy(update={"known_hosts": str(known_hosts)}), ssh_config=config
    ) as ex:
        assert server_port(ex) == a.port
        assert ex.run("id -un").stdout == "root\n"


def test_put_get_roundtrip(sshd_pair: Pair, ssh_host: HostFactory, tmp_path: Path) -> None:
    payload = os.urandom(1 << 20)
    local = tmp_path / "payload.bin"
    local.write_bytes(payload)
    remote = str(tmp_path / "remote" / "deep" / "payload.bin")  # parents do not exist yet
    back = tmp_path / "back" / "payload.bin"
    with SSHExecutor("a", ssh_host(sshd_pair[0])) as ex:
        ex.put(local, remote)
        ex.get(remote, back)
        remote_sum = ex.run("sha256sum %s", remote, check=True).stdout.split()[0]
        with pytest.raises(FileNotFoundError):
            ex.get(remote + ".missing", tmp_path / "missing")
    assert hashlib.sha256(back.read_bytes()).hexdigest() == hashlib.sha256(payload).hexdigest() == remote_sum


def test_a_server_without_sftp_is_said_so_and_keeps_its_connection(
    sshd_pair: Pair, ssh_host: HostFactory, tmp_path: Path
) -> None:
    """Issue 27: it was "connection lost: SSHException: Channel closed", after a needless reconnect."""
    server = sshd_pair[0]
    server.config.write_text(server.config.read_text().replace("Subsystem sftp internal-sftp\n", ""))
    server.restart()
    (tmp_path / "f").write_text("x")
    with SSHExecutor("a", ssh_host(server)) as ex:
        ex.run("true").check()
        with pytest.raises(TransportError, match="refused the sftp subsystem"):
            ex.put(tmp_path / "f", str(tmp_path / "remote-f"))
        assert ex.run("true").ok
    assert server.log.read_text().count("Accepted publickey") == 1


def test_close_is_idempotent_and_next_run_reconnects(sshd_pair: Pair, ssh_host: HostFactory) -> None:
    ex = SSHExecutor("a", ssh_host(sshd_pair[0]))
    assert ex.run("true").ok
    ex.close()
    ex.close()
    assert ex.run("echo again").stdout == "again\n"
    ex.close()


def test_fan_out_keeps_live_results_when_one_host_is_dead(sshd_pair: Pair, ssh_host: HostFactory) -> None:
    a, b = sshd_pair
    b.kill()
    executors = {"a": connect("a", ssh_host(a)), "b": connect("b", ssh_host(b))}
    try:
        results = fan_out(executors, lambda ex: ex.run("hostname", check=True))
    finally:
        for ex in executors.values():
            ex.close()
    assert list(results) == ["a", "b"]
    assert isinstance(results["a"], CommandResult)
    assert results["a"].ok
    assert isinstance(results["b"], TransportError)
    assert "host b" in str(results["b"])
    assert list(failed(results)) == ["b"]


def test_fan_out_propagates_bugs_naming_the_host() -> None:
    executors = {"ok": LocalExecutor("ok"), "bug": LocalExecutor("bug")}

    def check(ex: LocalExecutor) -> str:
        if ex.host == "bug":
            raise KeyError("no such field")
        return ex.run("echo fine").stdout

    with pytest.raises(KeyError) as info:
        fan_out(executors, check)
    assert "raised by fan_out on host 'bug'" in (info.value.__notes__ or [])


def test_registry_imports_paramiko_lazily() -> None:
    code = "import sys, kvgate.transport; print('paramiko' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
