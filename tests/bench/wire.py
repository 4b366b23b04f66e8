"""Request and token times as the wire saw them: a loopback pcap read back into request records.

A client stamps a token when it has read and decoded it; a busy host makes it read late.
The packet capture (``tcpdump -i lo``) stamps the same bytes as the kernel passed them
between the server and the client, so it is the reference a client's TTFT, TPOT and ITL
are judged against. From the capture, per TCP connection to the server's port:

- a request's send time is its first payload packet client → server (``POST …``);
- each SSE event whose JSON has non-empty ``choices`` is a token chunk, timed by the packet
  that completed it (an HTTP chunk may split an event over packets or join several in one;
  a client can decode an event only once its last byte is in, so that packet is its time);
- ``usage`` gives the completion tokens, as the load generator reads them.

The result is a list of kvgate's own :class:`RequestRecord`, so TTFT, TPOT and ITL come
from kvgate's ``summarize`` — the same definitions, only the stamps differ.

Only the standard library: libpcap's file format is a 24-byte header and a 16-byte header
per packet (``--time-stamp-precision=nano`` gives ns stamps, magic ``a1b23c4d``).
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import struct
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kvgate.probes.loadgen import RequestRecord

MAGIC_NS, MAGIC_US = 0xA1B23C4D, 0xA1B2C3D4
LINK_HEADER = {0: 4, 1: 14, 113: 16, 276: 20}  # BSD loopback, Ethernet (Linux lo), Linux SLL, SLL2
Flow = tuple[int, int]  # (source port, destination port) on 127.0.0.1


class IncompleteCapture(ValueError):
    """The capture lacks bytes the connection carried (the kernel dropped packets, or it ended early)."""


@dataclass
class Stream:
    """One direction of one TCP connection: its payload bytes and when each packet's bytes arrived."""

    data: bytearray = field(default_factory=bytearray)
    ends: list[int] = field(default_factory=list)  # offset just past each packet's payload
    times_ns: list[int] = field(default_factory=list)  # that packet's capture time
    next_seq: int | None = None
    syn_ns: int | None = None  # the client's SYN, when this is the client → server direction

    def add(self, seq: int, payload: bytes, t_ns: int) -> None:
        """Append a packet's payload in sequence order (a retransmitted range is kept once)."""
        if self.next_seq is not None:
            skip = (self.next_seq - seq) % 2**32
            if skip > 2**31:  # loopback does not reorder: bytes missing here were never captured
                raise IncompleteCapture(f"{2**32 - skip} bytes missing before sequence number {seq}")
            if skip >= len(payload):
                return  # wholly seen before
            payload, seq = payload[skip:], self.next_seq
        self.next_seq = (seq + len(payload)) % 2**32
        self.data += payload
        self.ends.append(len(self.data))
        self.times_ns.append(t_ns)

    def time_of(self, offset: int) -> int:
        """Capture time of the packet holding byte ``offset``."""
        return self.times_ns[bisect.bisect_right(self.ends, offset)]


def packets(path: Path) -> Iterator[tuple[int, bytes]]:
    """(capture time ns, link-layer frame) of every packet in a pcap file."""
    raw = path.read_bytes()
    magic = struct.unpack_from("<I", raw)[0]
    if magic not in (MAGIC_NS, MAGIC_US):
        raise ValueError(f"{path}: not a little-endian pcap file (magic {magic:#x})")
    scale = 1 if magic == MAGIC_NS else 1000
    link = struct.unpack_from("<I", raw, 20)[0]
    if link not in LINK_HEADER:
        raise ValueError(f"{path}: link type {link} is not a loopback capture")
    pos = 24
    while pos + 16 <= len(raw):
        sec, frac, caplen, _ = struct.unpack_from("<IIII", raw, pos)
        yield sec * 1_000_000_000 + frac * scale, raw[pos + 16 + LINK_HEADER[link] : pos + 16 + caplen]
        pos += 16 + caplen


def streams(path: Path) -> dict[Flow, Stream]:
    """Every TCP direction with payload in an IPv4 capture, by (source port, destination port)."""
    found: dict[Flow, Stream] = defaultdict(Stream)
    for t_ns, ip in packets(path):
        if ip[0] >> 4 != 4 or ip[9] != 6:  # IPv4 carrying TCP only
            continue
        ip_len, tcp = struct.unpack_from("!H", ip, 2)[0], ip[(ip[0] & 0xF) * 4 :]
        sport, dport, seq = struct.unpack_from("!HHI", tcp)
        payload = tcp[(tcp[12] >> 4) * 4 : ip_len - (ip[0] & 0xF) * 4]
        if tcp[13] & 0x12 == 0x02:  # SYN without ACK: the client opens the connection
            found[(sport, dport)].syn_ns = t_ns
        if payload:
            found[(sport, dport)].add(seq, bytes(payload), t_ns)
    return dict(found)


def wire_records(path: Path, server_port: int, *, from_connect: bool = False) -> list[RequestRecord]:
    """One record per streamed completion in the capture, stamped with the wire's times.

    ``from_connect``: the first completion on a connection is sent at the connection's SYN, as a
    client that stamps before it connects (vLLM's and kvgate's) counts it.
    """
    flows = streams(path)
    records: list[RequestRecord] = []
    for (sport, dport), upstream in sorted(flows.items(), key=lambda kv: kv[1].times_ns[:1]):
        if dport != server_port or not upstream.data:
            continue
        downstream = flows.get((server_port, sport), Stream())
        found = _connection(upstream, downstream, len(records))
        if from_connect and found and upstream.syn_ns is not None:
            found[0].send_ns = upstream.syn_ns
        records += found
    return sorted(records, key=lambda r: r.send_ns)


def _connection(up: Stream, down: Stream, first_index: int) -> list[RequestRecord]:
    """The completions on one keep-alive connection: the n-th request answered by the n-th response."""
    sent, received = bytes(up.data), bytes(down.data)
    out: list[RequestRecord] = []
    pos = 0
    try:
        for start, completion in _requests(sent):
            record = RequestRecord(first_index + len(out), "wire", send_ns=up.time_of(start), status=200)
            pos = _response(received, pos, down, record if completion else None)
            if record.chunk_ns:
                out.append(dataclasses.replace(record, success=True))
    except ValueError as exc:  # bytes.index found no end: the stream stops inside a message
        raise IncompleteCapture(f"a connection's stream ends inside an HTTP message ({exc})") from None
    return out


def _requests(data: bytes) -> Iterator[tuple[int, bool]]:
    """Offset of each request on a connection, and whether it is a ``POST …/completions``."""
    pos = 0
    while pos < len(data):
        head_end = data.index(b"\r\n\r\n", pos) + 4
        head = data[pos:head_end].decode("latin-1")
        yield pos, head.startswith("POST ") and head.split()[1].endswith("/completions")
        pos = head_end + _content_length(head)


def _content_length(head: str) -> int:
    lines = head.lower().split("\r\n")
    return next((int(line.split(":", 1)[1]) for line in lines if line.startswith("content-length:")), 0)


def _response(data: bytes, pos: int, down: Stream, record: RequestRecord | None) -> int:
    """Read the response at ``pos`` (its SSE events into ``record``, if given); the offset past it."""
    head_end = data.index(b"\r\n\r\n", pos) + 4
    head = data[pos:head_end].decode("latin-1").lower()
    if "transfer-encoding: chunked" not in head:
        return head_end + _content_length(head)
    pos, pending = head_end, b""  # SSE text not yet ended by a blank line (may span HTTP chunks)
    while True:
        line_end = data.index(b"\r\n", pos)
        size = int(data[pos:line_end].split(b";")[0], 16)
        pos = line_end + 2
        if size == 0:
            return data.index(b"\r\n", pos) + 2  # no trailers from the servers used here
        carried = len(pending)  # pending[carried] is the byte at ``pos`` on the wire
        pending += data[pos : pos + size]
        while (ended := _event_end(pending)) is not None:
            blank, after = ended
            if record is not None:
                _event(pending[:blank], down.time_of(pos + after - 1 - carried), record)
            pending, carried = pending[after:], carried - after
        pos += size + 2


def _event_end(text: bytes) -> tuple[int, int] | None:
    """Where the first SSE event in ``text`` ends and the next begins (LF or CRLF lines), if it has ended."""
    ends = [(i, i + len(sep)) for sep in (b"\n\n", b"\r\n\r\n") if (i := text.find(sep)) >= 0]
    return min(ends) if ends else None


def _event(event: bytes, t_ns: int, record: RequestRecord) -> None:
    """A token chunk's time, or the usage, from one SSE event (as the load generator reads them)."""
    text = event.decode("utf-8").strip().removeprefix("data:").strip()
    if not text.startswith("{"):
        return  # [DONE]
    doc = json.loads(text)
    if doc.get("choices"):
        record.chunk_ns.append(t_ns)
    if doc.get("usage"):
        record.prompt_tokens = doc["usage"]["prompt_tokens"]
        record.completion_tokens = doc["usage"]["completion_tokens"]
