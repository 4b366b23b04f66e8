"""`df` in bytes as older coreutils printed it on a real host (tests/data/recorded/PROVENANCE.md)."""

from __future__ import annotations

from pathlib import Path

from kvgate.probes.facts.mounts import parse_df

DATA = Path(__file__).parents[1] / "data" / "recorded" / "df"


def test_df_in_bytes_with_the_older_use_percent_header_of_an_ext_root() -> None:
    """LBL's dmx host: `Use%` where `-P` prints `Capacity`, 5 % of the ext root held back from users."""
    df = parse_df((DATA / "bestman2-dmx-lbl-df-B-1.txt").read_text())
    assert df == {"size_bytes": 10700922880, "used_bytes": 6354206720, "free_bytes": 3803140096}
    assert df["used_bytes"] + df["free_bytes"] < df["size_bytes"]
