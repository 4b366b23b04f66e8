"""The state directory a controller reattaches to: flushed JSON lines, result before exit_code."""

import json
import os
import time
from pathlib import Path

import pytest

from kvgate.probes.agent import events
from kvgate.probes.agent.events import EventLog, Heartbeat, Progress, proc_start_ticks, write_pid


def lines(state: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (state / "events.jsonl").read_text().splitlines()]


def test_events_are_flushed_json_lines_with_seq_and_time(tmp_path: Path) -> None:
    log = EventLog(str(tmp_path))
    log.emit("start", workload="kv-restore")
    log.emit("note", ratio=float("nan"), sizes=(1, 2))
    got = lines(tmp_path)  # readable before close: every event is flushed
    log.close()
    assert [e["seq"] for e in got] == [1, 2]
    assert got[1]["ratio"] is None
    assert got[1]["sizes"] == [1, 2]
    assert all(isinstance(e["t_s"], float) and isinstance(e["time_unix_s"], float) for e in got)


def test_finish_writes_result_then_exit_code(tmp_path: Path) -> None:
    log = EventLog(str(tmp_path))
    log.finish({"status": "ok", "value_bytes": 3}, 0)
    assert lines(tmp_path)[-1]["event"] == "result"
    assert json.loads((tmp_path / "result.json").read_text())["value_bytes"] == 3
    assert (tmp_path / "exit_code").read_text() == "0\n"
    assert os.stat(tmp_path / "result.json").st_mtime_ns <= os.stat(tmp_path / "exit_code").st_mtime_ns


def test_progress_is_throttled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(events, "PROGRESS_INTERVAL_S", 3600.0)
    log = EventLog(str(tmp_path))
    progress = Progress(log, "write", 1000)
    for _ in range(100):
        progress.add(10)
    progress.close()
    log.close()
    got = [e for e in lines(tmp_path) if e["event"] == "progress"]
    assert len(got) == 2  # the opening and the closing count only
    assert got[-1]["done_bytes"] == got[-1]["total_bytes"] == 1000
    assert got[-1]["phase"] == "write"


def test_pid_file_names_this_process_and_its_start_time(tmp_path: Path) -> None:
    write_pid(str(tmp_path))
    pid, ticks = map(int, (tmp_path / "pid").read_text().split())
    assert pid == os.getpid()
    assert ticks == proc_start_ticks(pid) > 0


def test_heartbeat_keeps_beating(tmp_path: Path) -> None:
    beat = Heartbeat(str(tmp_path), interval_s=0.05).start()
    first = (tmp_path / "heartbeat").stat().st_mtime_ns
    time.sleep(0.3)
    beat.stop()
    assert (tmp_path / "heartbeat").stat().st_mtime_ns > first
    assert abs(int((tmp_path / "heartbeat").read_text()) - time.time()) < 5
