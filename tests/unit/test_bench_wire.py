"""The benchmark's wire reader (tests/bench/wire.py) on hand-built loopback pcaps: what it times and when."""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))  # the bench's modules are top-level
from wire import IncompleteCapture, wire_records

from kvgate.probes.loadgen.metrics import summarize

SERVER, CLIENT = 8000, 50000
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
TOKEN = b'data: {"choices":[{"text":" tok","index":0}]}\n\n'
USAGE = b'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":3}}\n\n'


def chunk(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def request(target: bytes = b"/v1/completions", body: bytes = b'{"prompt":"a b c"}') -> bytes:
    return b"POST %s HTTP/1.1\r\nContent-Length: %d\r\n\r\n%s" % (target, len(body), body)


def frame(sport: int, dport: int, seq: int, payload: bytes, flags: int = 0x18) -> bytes:
    """Ethernet (as Linux lo is captured) + IPv4 + TCP around ``payload`` (PSH ACK unless told)."""
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, flags, 65535, 0, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40 + len(payload), 0, 0, 64, 6, 0, bytes(4), bytes(4))
    return bytes(12) + b"\x08\x00" + ip + tcp + payload


def pcap(tmp_path: Path, packets: list[tuple[int, int, int, int, bytes]]) -> Path:
    """A nanosecond pcap of (time ms, source port, destination port, seq, payload) packets."""
    out = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 262144, 1)
    for t_ms, sport, dport, seq, payload in packets:
        data = frame(sport, dport, 0, payload, 0x02) if seq == 0 else frame(sport, dport, seq, payload)
        out += (
            struct.pack("<IIII", 1000 + t_ms // 1000, (t_ms % 1000) * 1_000_000, len(data), len(data)) + data
        )
    path = tmp_path / "lo.pcap"
    path.write_bytes(out)
    return path


class Conn:
    """Both directions of one connection, each with its own sequence numbers."""

    def __init__(self) -> None:
        self.packets: list[tuple[int, int, int, int, bytes]] = []
        self.seq = {CLIENT: 1, SERVER: 1}

    def send(self, t_ms: int, sport: int, payload: bytes) -> Conn:
        dport = SERVER if sport == CLIENT else CLIENT
        self.packets.append((t_ms, sport, dport, self.seq[sport], payload))
        self.seq[sport] += len(payload)
        return self


def test_split_and_joined_events_are_timed_by_the_packet_that_completes_them(tmp_path: Path) -> None:
    split = chunk(TOKEN)
    c = Conn().send(0, CLIENT, request()).send(1, SERVER, HEAD)
    c.send(50, SERVER, split[:20]).send(52, SERVER, split[20:])  # token 1 ends in the second packet
    c.send(60, SERVER, chunk(TOKEN + TOKEN))  # tokens 2 and 3 in one HTTP chunk, one packet
    c.send(61, SERVER, chunk(USAGE) + chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
    [r] = wire_records(pcap(tmp_path, c.packets), SERVER)
    assert (r.send_ns, r.completion_tokens) == (1_000_000_000_000, 3)
    assert [(t - r.send_ns) // 1_000_000 for t in r.chunk_ns] == [52, 60, 60]
    s = summarize([r], duration_s=1)
    assert (s["p50_ttft_ms"], s["p50_tpot_ms"], s["p50_itl_ms"]) == (52.0, 4.0, 4.0)


def test_an_event_split_between_http_chunks(tmp_path: Path) -> None:
    c = Conn().send(0, CLIENT, request()).send(1, SERVER, HEAD)
    c.send(10, SERVER, chunk(TOKEN[:15])).send(30, SERVER, chunk(TOKEN[15:]) + b"0\r\n\r\n")
    [r] = wire_records(pcap(tmp_path, c.packets), SERVER)
    assert [(t - r.send_ns) // 1_000_000 for t in r.chunk_ns] == [30]


def test_crlf_events_as_sse_starlette_writes_them(tmp_path: Path) -> None:
    crlf = TOKEN.replace(b"\n", b"\r\n")
    c = Conn().send(0, CLIENT, request()).send(1, SERVER, HEAD)
    c.send(10, SERVER, chunk(crlf[:-1])).send(12, SERVER, chunk(crlf[-1:] + crlf) + b"0\r\n\r\n")
    [r] = wire_records(pcap(tmp_path, c.packets), SERVER)
    assert [(t - r.send_ns) // 1_000_000 for t in r.chunk_ns] == [12, 12]


def test_keep_alive_requests_in_order_and_other_requests_skipped(tmp_path: Path) -> None:
    metrics = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    c = Conn().send(0, CLIENT, b"GET /metrics HTTP/1.1\r\n\r\n").send(1, SERVER, metrics)
    for start in (10, 100):
        c.send(start, CLIENT, request()).send(start + 1, SERVER, HEAD)
        c.send(start + 20, SERVER, chunk(TOKEN) + b"0\r\n\r\n")
    records = wire_records(pcap(tmp_path, c.packets), SERVER)
    assert [(r.send_ns // 1_000_000 % 1000, r.ttft_ms) for r in records] == [(10, 20.0), (100, 20.0)]


def test_from_connect_times_a_new_connections_first_request_from_its_syn(tmp_path: Path) -> None:
    c = Conn()
    c.packets.append((0, CLIENT, SERVER, 0, b""))  # the client's SYN (seq 0 in these helpers)
    c.send(3, CLIENT, request()).send(4, SERVER, HEAD).send(20, SERVER, chunk(TOKEN) + b"0\r\n\r\n")
    path = pcap(tmp_path, c.packets)
    assert [r.ttft_ms for r in wire_records(path, SERVER)] == [17.0]
    assert [r.ttft_ms for r in wire_records(path, SERVER, from_connect=True)] == [20.0]


def test_a_retransmitted_packet_counts_once(tmp_path: Path) -> None:
    c = Conn().send(0, CLIENT, request()).send(1, SERVER, HEAD).send(20, SERVER, chunk(TOKEN))
    _, sport, dport, seq, payload = c.packets[-1]
    c.packets.append((25, sport, dport, seq, payload))  # the same bytes again, later
    c.send(30, SERVER, chunk(TOKEN) + b"0\r\n\r\n")
    [r] = wire_records(pcap(tmp_path, c.packets), SERVER)
    assert [(t - r.send_ns) // 1_000_000 for t in r.chunk_ns] == [20, 30]


def test_a_capture_with_missing_bytes_is_refused(tmp_path: Path) -> None:
    c = Conn().send(0, CLIENT, request()).send(1, SERVER, HEAD).send(20, SERVER, chunk(TOKEN))
    c.send(30, SERVER, chunk(TOKEN) + b"0\r\n\r\n")
    del c.packets[2]  # the kernel dropped the first token's packet
    with pytest.raises(IncompleteCapture, match="bytes missing"):
        wire_records(pcap(tmp_path, c.packets), SERVER)


def test_not_a_pcap_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.pcap"
    path.write_bytes(json.dumps({}).encode() * 8)
    with pytest.raises(ValueError, match="not a little-endian pcap"):
        wire_records(path, SERVER)
