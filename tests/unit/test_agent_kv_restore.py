"""The kv-restore workload end to end in both layouts: every file read back, verified, reported cold."""

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from kvgate.probes.agent import kv_restore
from kvgate.probes.agent.events import EventLog
from kvgate.probes.agent.spec import SpecError

KIB = 1 << 10
LAYOUTS = ("lmcache-chunks", "vllm-blocks")


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    (tmp_path / "scratch").mkdir()
    return tmp_path / "scratch"


def spec(scratch: Path, layout: str, **extra: Any) -> dict[str, Any]:
    """3 requests x 100 tokens x 16 KiB (~5 MiB); cells of 128 KiB: two per 256 KiB vLLM block file."""
    base = {"target_dir": str(scratch), "kv_bytes_per_token": 16 * KIB, "prefix_tokens": 100, "requests": 3}
    base.update({"layout": layout, "readers_per_request": [1, 2], "io_bytes": 128 * KIB})
    base.update({"drop_caches": False, "run_id": "t"})  # a unit test does not drop the machine's caches
    return {**base, **extra}


def run(tmp_path: Path, data: dict[str, Any]) -> dict[str, Any]:
    log = EventLog(str(tmp_path))
    try:
        return kv_restore.run(data, log, threading.Event())
    finally:
        log.close()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_both_layouts_restore_every_byte_verified_with_serial_and_parallel_readers(
    tmp_path: Path, scratch: Path, layout: str
) -> None:
    result = run(tmp_path, spec(scratch, layout))
    described = result["layout"]
    assert described["layout"] == layout
    total = described["total_bytes"]
    assert total == result["write"]["bytes"]
    assert [r["readers_per_request"] for r in result["restores"]] == [1, 2]
    for restore in result["restores"]:
        assert restore["restored_bytes"] == total
        assert restore["verify_ok"], restore["corrupt"]
        assert restore["checksums_failed"] == 0
        assert restore["cold"]["expected_read_bytes"] == total
        assert restore["direct_engaged"] or restore["direct_fallback_reason"]
        assert len(restore["request_latencies_s"]) == 3
    assert result["parallel_vs_serial_bandwidth_ratio"] > 0
    assert result["cleanup"]["run_dir_removed"], result["cleanup"]
    assert list(scratch.iterdir()) == []


def test_lmcache_chunks_keep_their_names_and_sizes(tmp_path: Path, scratch: Path) -> None:
    result = run(tmp_path, spec(scratch, "lmcache-chunks", keep_files=True))
    files = {p.name: p.stat().st_size for p in Path(result["run_dir"]).iterdir()}
    assert files == {f"req{r:05d}-chunk000000.kvchunk": 100 * 16 * KIB for r in range(3)}
    assert result["write"]["files"] == 3
    assert result["restores"][0]["checksums_verified"] == 3 * 13  # 1600 KiB in 128 KiB cells


def test_vllm_blocks_are_hash_named_full_blocks_beside_config_json(tmp_path: Path, scratch: Path) -> None:
    result = run(tmp_path, spec(scratch, "vllm-blocks", keep_files=True))
    run_dir = Path(result["run_dir"])
    blocks = sorted(p for p in run_dir.rglob("*.bin"))
    assert len(blocks) == result["write"]["files"] == 3 * 6  # 6 full 16-token blocks; 4-token tail not stored
    assert {p.stat().st_size for p in blocks} == {16 * 16 * KIB}
    assert {p.relative_to(run_dir).parts[0] for p in blocks} == {result["layout"]["block_dir"]}
    assert all(p.parent.name == f"{p.stem[3:5]}_g0" and p.parent.parent.name == p.stem[:3] for p in blocks)
    (config,) = run_dir.glob("*/config.json")
    assert config.parent.name + "_r0" == result["layout"]["block_dir"]
    assert result["restores"][0]["checksums_verified"] == 3 * 6 * 2


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_flipped_byte_is_found_in_the_file_it_was_written_to(
    tmp_path: Path, scratch: Path, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = spec(scratch, layout)
    _, files, _ = kv_restore.parse(data)
    real_window, flipped = kv_restore.cold_window, []

    def corrupt_then_window(run_dir: str, **kw: Any) -> Any:
        if not flipped:  # between the write and the first restore
            path = f"{run_dir}/{files.name(1, 0)}"
            flip(path, 200 * KIB + 7)
            flipped.append(path)
        return real_window(run_dir, **kw)

    monkeypatch.setattr(kv_restore, "cold_window", corrupt_then_window)
    result = run(tmp_path, data)
    for restore in result["restores"]:  # every restore reads the damaged file again
        assert not restore["verify_ok"]
        assert restore["checksums_failed"] == 1
        (bad,) = restore["corrupt"]
        assert (bad["file"], bad["offset_bytes"], bad["cell"]) == (flipped[0], 200 * KIB + 7, 1)


def flip(path: str, offset: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0x01]))
        f.flush()
        os.fsync(f.fileno())


def test_a_bad_layout_is_refused_before_anything_is_written(tmp_path: Path, scratch: Path) -> None:
    with pytest.raises(SpecError, match=r"layout: expected one of \['lmcache-chunks', 'vllm-blocks'\]"):
        run(tmp_path, spec(scratch, "vllm-native"))
    assert list(scratch.iterdir()) == []
