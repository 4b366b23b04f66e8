"""Every user-written file is read through one loader: hostile or broken bytes are a located ConfigError.

Each case below gave a traceback, a hang or a silent wrong value before the loader
was hardened; now each names the file, where, and what was expected.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kvgate.base.config_file import MAX_FILE_BYTES, repo_root
from kvgate.base.errors import ConfigError
from kvgate.configuration.fio_matrix import load_profile as load_fio_matrix
from kvgate.configuration.gate_profiles.g3 import read_g3_profile
from kvgate.configuration.gate_profiles.g4 import read_g4_profile
from kvgate.configuration.inventory import load
from kvgate.configuration.model_profiles import load_profile as load_model_profile
from kvgate.configuration.references import load_references
from kvgate.configuration.waivers import load_waivers

HOST = "site: s\nhosts:\n  h1:\n    address: 10.0.0.1\n"
WAIVER = "waivers:\n  - rule: G1-NVME-4\n    reason: a reason long enough\n    approver: QA lead\n"


def refused(path: Path, loader: Callable[[Path], Any] = load) -> ConfigError:
    with pytest.raises(ConfigError) as err:
        loader(path)
    assert str(err.value).startswith(str(path)), err.value
    return err.value


def write(tmp_path: Path, text: str | bytes, name: str = "inv.yaml") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_bytes_that_are_not_utf8_are_located(tmp_path: Path) -> None:
    err = refused(write(tmp_path, b"site: s\nhosts:\n  h\xe91:\n    address: a\n"))
    assert err.field == "line 3, column 4"
    assert "not UTF-8 text (byte 0xe9)" in err.expected


def test_a_nul_byte_is_located(tmp_path: Path) -> None:
    err = refused(write(tmp_path, HOST.replace("10.0.0.1", "10.0\x00.0.1")))
    assert err.field == "line 4, column 18"
    assert "NUL byte" in err.expected


def test_deep_nesting_is_refused_without_recursing(tmp_path: Path) -> None:
    err = refused(write(tmp_path, "site: s\nhosts: " + "[" * 5000 + "]" * 5000 + "\n"))
    assert "nested deeper than 32 levels" in err.expected


def test_an_impossible_date_is_located(tmp_path: Path) -> None:
    err = refused(write(tmp_path, WAIVER + "    expires: 2027-02-30\n", "w.yaml"), load_waivers)
    assert err.field == "line 5"
    assert "'2027-02-30' is not a valid timestamp (day is out of range for month)" in err.expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("!!timestamp soon", "'soon' is not a valid timestamp"),
        ("!!bool maybe", "'maybe' is not a valid bool"),
        ("!!int 0x", "'0x' is not a valid int"),
        ("!!float .", "'.' is not a valid float"),
        ("!!python/object/apply:os.system ['id']", "could not determine a constructor"),
    ],
)
def test_an_explicit_tag_that_does_not_fit_its_value_is_located(
    tmp_path: Path, value: str, expected: str
) -> None:
    err = refused(write(tmp_path, WAIVER + f"    expires: {value}\n", "w.yaml"), load_waivers)
    assert err.field.startswith("line 5"), err
    assert expected in err.expected, err


@pytest.mark.parametrize(
    ("text", "field", "lines"),
    [
        (HOST + "  h1:\n    address: 10.0.0.2\n", "hosts.h1 (line 5)", "(first on line 3)"),
        (HOST + "    port: 22\n    port: 2222\n", "hosts.h1.port (line 6)", "(first on line 5)"),
        ("site: s\nsite: t\nhosts: {h1: {}}\n", "site (line 2)", "(first on line 1)"),
    ],
    ids=["host-name", "nested-field", "top-level"],
)
def test_a_duplicate_key_at_any_depth_is_refused_naming_both_lines(
    tmp_path: Path, text: str, field: str, lines: str
) -> None:
    err = refused(write(tmp_path, text))
    assert err.field == field
    key = field.partition(" ")[0].rpartition(".")[2]
    assert f"duplicate key {key!r} {lines}" in err.expected


def test_an_alias_bomb_in_roles_is_refused_at_once(tmp_path: Path) -> None:
    lol = ["a0: &a0 [engine, engine, engine, engine, engine, engine, engine, engine, engine, engine]"]
    lol += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    text = "x-anchors:\n" + "".join(f"  {line}\n" for line in lol) + HOST + "    roles: *a8\n"
    started = time.monotonic()
    err = refused(write(tmp_path, text))
    assert time.monotonic() - started < 5  # expanding it (10^9 roles) would take minutes and gigabytes
    assert "expands to more than 100000 values" in err.expected


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    err = refused(write(tmp_path, HOST + "    groups: &g [a, *g]\n"))
    assert "recursive structure" in err.expected


def test_shipped_anchors_still_load() -> None:
    assert load_references().get("R2-ttft-p50-tp8").platform.accelerator  # references.yaml uses &mi308x
    assert read_g3_profile(repo_root() / "workloads" / "g3" / "smoke.yaml").verdicts


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", "1e400", "'inf'", "'nan'"])
def test_a_number_that_is_not_finite_is_refused(tmp_path: Path, value: str) -> None:
    # connect_timeout_s: .inf made G1 wait forever on a silent port
    err = refused(write(tmp_path, HOST + f"    connect_timeout_s: {value}\n"))
    assert err.field.startswith("hosts.h1.connect_timeout_s"), err
    assert "finite" in err.expected, err


def test_a_timeout_is_bounded(tmp_path: Path) -> None:
    err = refused(write(tmp_path, HOST + "    connect_timeout_s: 1e300\n"))
    assert err.field == "hosts.h1.connect_timeout_s"


def test_an_over_long_value_and_an_over_long_name_are_refused(tmp_path: Path) -> None:
    err = refused(write(tmp_path, HOST + f"    user: {'u' * 20000}\n"))
    assert err.field == "hosts.h1.user (line 5)"
    assert "longer than 16384 characters" in err.expected
    err = refused(write(tmp_path, HOST.replace("h1", "h" * 101)))
    assert "at most 100 characters" in err.expected


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_something_that_is_not_a_regular_file_is_refused_without_hanging(tmp_path: Path, kind: str) -> None:
    path = {"fifo": tmp_path / "inv.yaml", "directory": tmp_path, "device": Path("/dev/zero")}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    outcome: list[BaseException] = []

    def attempt() -> None:
        try:
            load(path)
        except BaseException as exc:  # the assertions below name what was raised
            outcome.append(exc)

    thread = threading.Thread(target=attempt, daemon=True)  # a blocking open of a FIFO never returns
    thread.start()
    thread.join(timeout=10)
    if kind == "fifo" and thread.is_alive():
        with open(path, "w"):  # unblock the reader so the thread ends
            pass
    assert outcome, "the load hung"
    assert isinstance(outcome[0], ConfigError), outcome
    expected = {"fifo": "a FIFO", "directory": "a directory", "device": "a character device"}[kind]
    assert f"expected a regular file, got {expected}" in str(outcome[0])


def test_a_file_too_large_is_refused(tmp_path: Path) -> None:
    err = refused(write(tmp_path, HOST + "# " + "x" * MAX_FILE_BYTES + "\n"))
    assert "larger than 256 KiB" in err.expected


def test_the_inventory_hash_is_of_the_bytes_validated(tmp_path: Path) -> None:
    import hashlib

    path = write(tmp_path, HOST)
    assert load(path).sha256 == hashlib.sha256(HOST.encode()).hexdigest()


@pytest.mark.parametrize(
    ("expect", "field"),
    [
        ("cpu: {model: 'EPYC (9654'}", "hosts.h1.expect.cpu.model"),
        ("os: {kernel: '[6.8'}", "hosts.h1.expect.os.kernel"),
        ("nvme: {count: 1, firmware: '*x'}", "hosts.h1.expect.nvme.firmware"),
        ("nics: [{name: 'ens(1'}]", "hosts.h1.expect.nics[0].name"),
        ("gpus: {vendor: amd, count: 8, model: 'MI3[0'}", "hosts.h1.expect.gpus.model"),
        ("nics: [{name: '[[a]]'}]", "hosts.h1.expect.nics[0].name"),  # FutureWarning: possible nested set
    ],
)
def test_a_regex_field_is_compiled_at_load(tmp_path: Path, expect: str, field: str) -> None:
    err = refused(write(tmp_path, HOST + f"    expect: {{{expect}}}\n"))
    assert err.field == field
    assert "regular expression" in err.expected


@pytest.mark.parametrize(
    "jump", ["-oProxyCommand=touch /tmp/x", "bastion:99999", "user@", "bastion:22,", "a b"]
)
def test_a_bad_proxy_jump_is_refused_at_check(tmp_path: Path, jump: str) -> None:
    err = refused(write(tmp_path, HOST + f"    proxy_jump: {jump!r}\n"))
    assert err.field == "hosts.h1.proxy_jump"
    assert "[user@]host[:port]" in err.expected


@pytest.mark.parametrize("jump", ["bastion", "ops@bastion:2222", "a@j1:22,j2", "[fd00::1]:22", "none"])
def test_a_good_proxy_jump_loads(tmp_path: Path, jump: str) -> None:
    assert (
        load(write(tmp_path, HOST + f"    proxy_jump: {jump!r}\n")).inventory.hosts["h1"].proxy_jump == jump
    )


@pytest.mark.parametrize(
    ("loader", "name", "text"),
    [
        (load_waivers, "w.yaml", WAIVER + "    rule: G1-CPU-1\n"),
        (load_references, "refs.yaml", None),
        (load_model_profile, "m.yaml", "name: m\nscale: smoke\nname: n\n"),
        (read_g3_profile, "smoke.yaml", None),
        (read_g4_profile, "smoke.yaml", None),
        (load_fio_matrix, "f.yaml", None),
    ],
    ids=["waivers", "references", "model-profile", "g3-profile", "g4-profile", "fio-matrix"],
)
def test_every_kind_of_user_file_refuses_duplicate_keys(
    tmp_path: Path, loader: Callable[[Path], Any], name: str, text: str | None
) -> None:
    if text is None:  # a shipped file with its first key repeated at the end
        shipped = {
            "refs.yaml": "gates/references.yaml",
            "smoke.yaml": f"workloads/{'g3' if loader is read_g3_profile else 'g4'}/smoke.yaml",
            "f.yaml": "workloads/fio/smoke.yaml",
        }[name]
        original = (repo_root() / shipped).read_text()
        first = next(line for line in original.splitlines() if line and not line.startswith(("#", " ")))
        text = original + first + "\n"
    err = refused(write(tmp_path, text, name), loader)
    assert "duplicate key" in err.expected, err


def test_an_engine_profile_is_read_through_the_same_loader(tmp_path: Path) -> None:
    from kvgate.configuration.engine_profile import load_profile as load_engine_profile

    path = tmp_path / "llama-cpp-disk.yaml"
    shutil.copy(repo_root() / "workloads" / "engines" / "llama-cpp-disk.yaml", path)
    path.write_text(path.read_text() + "name: llama-cpp-disk\n")
    err = refused(path, load_engine_profile)
    assert "duplicate key 'name'" in err.expected
