"""The agent's cold windows: drop the page cache, count the volume's reads (kvgate.probes.evidence)."""

import json
import os
from pathlib import Path

import pytest

from kvgate.probes.agent import cold
from kvgate.probes.agent.events import EventLog
from kvgate.probes.evidence import counters
from kvgate.probes.evidence.window import Counts


def test_a_window_counts_the_reads_of_the_volume_against_what_was_needed(tmp_path: Path) -> None:
    (tmp_path / "data").write_bytes(os.urandom(1 << 20))
    log = EventLog(str(tmp_path))
    window = cold.cold_window(str(tmp_path), drop=True, data_bytes=1 << 20, log=log)
    (tmp_path / "data").read_bytes()
    record = window.end(1 << 20)
    log.close()
    assert record["expected_read_bytes"] == 1 << 20
    assert record["server_drop"] is None  # not NFS: no server to ask
    assert record["drop_caches"]["done"] is os.access("/proc/sys/vm/drop_caches", os.W_OK)
    counts = Counts(**record["counts"])
    if record["volume"]["carriers"]:  # tmpfs has none
        assert counts.device_read_bytes is not None
        assert counts.device_read_bytes >= 0
        assert counts.counted_on == "+".join(record["volume"]["carriers"])


def test_a_drop_the_spec_turned_off_is_recorded_as_such(tmp_path: Path) -> None:
    log = EventLog(str(tmp_path))
    window = cold.cold_window(str(tmp_path), drop=False, data_bytes=1 << 20, log=log)
    log.close()
    assert window.drop == {"requested": False, "done": False, "error": "disabled by the spec"}


def test_a_refused_drop_is_a_note_and_is_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(counters, "DROP_CACHES", str(tmp_path / "no-such-dir" / "drop_caches"))
    log = EventLog(str(tmp_path))
    window = cold.cold_window(str(tmp_path), drop=True, data_bytes=1 << 20, log=log)
    log.close()
    assert window.drop["done"] is False
    assert "drop_caches" in window.drop["error"]
    notes = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [n["event"] for n in notes] == ["note"]
    assert "O_DIRECT" in notes[0]["message"]
