"""Cold is proven by device counters: the device behind a path is resolved and its reads counted."""

import json
import os
from pathlib import Path

import pytest

from kvgate.agent import cold
from kvgate.agent.cold import ColdWindow, device_read_bytes, drop_caches, page_cache_bytes, resolve_device
from kvgate.agent.events import EventLog


def test_the_device_behind_a_path_is_a_diskstats_line(tmp_path: Path) -> None:
    info = resolve_device(str(tmp_path))
    assert "resolved_via" in info
    if info["name"] is None:
        pytest.skip(f"no block device here: {info['resolved_via']}")
    with open("/proc/diskstats") as f:
        names = {line.split()[2] for line in f}
    assert info["name"] in names
    assert info["kind"] in {"disk", "partition", "dm", "md"}
    assert isinstance(device_read_bytes(info["name"]), int)


def test_an_unknown_device_has_no_counter() -> None:
    assert device_read_bytes("no-such-device") is None
    assert device_read_bytes(None) is None


def test_drop_caches_reports_what_happened() -> None:
    assert drop_caches(False) == {"requested": False, "done": False, "error": "disabled by the spec"}
    result = drop_caches(True)
    assert result["done"] is os.access("/proc/sys/vm/drop_caches", os.W_OK)
    assert result["done"] or "drop_caches" in result["error"]


def test_cold_window_reports_device_bytes_against_expected(tmp_path: Path) -> None:
    window = ColdWindow(resolve_device(str(tmp_path)), {"requested": False, "done": False})
    window.begin()
    proof = window.end(1 << 20)
    assert proof["expected_read_bytes"] == 1 << 20
    assert proof["page_cache_bytes_before"] > 0
    assert page_cache_bytes() > 0
    if proof["device"]["name"] is not None:
        assert proof["device_read_bytes"] >= 0
        assert proof["device_read_ratio"] is not None


def test_a_refused_drop_is_a_note_and_is_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cold, "DROP_CACHES", str(tmp_path / "no-such-dir" / "drop_caches"))
    log = EventLog(str(tmp_path))
    window = cold.cold_window(str(tmp_path), drop=True, log=log)
    log.close()
    assert window.drop["done"] is False
    assert "drop_caches" in window.drop["error"]
    notes = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [n["event"] for n in notes] == ["note"]
    assert "O_DIRECT" in notes[0]["message"]
