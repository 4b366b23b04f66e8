"""Upper bounds of the quantities an inventory or a profile states, in one place.

A value past them is a typo (a unit slip, a stray digit), refused when the file is loaded
rather than judged, planned or run from: each is beyond any machine, lab or run there is.
Upper bounds only; a field adds its own lower bound (``trials: Count = Field(ge=3)``).

>>> from pydantic import TypeAdapter
>>> TypeAdapter(Celsius).validate_python(-1000)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for ...
...Input should be greater than or equal to -40...
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

Count = Annotated[int, Field(le=100_000)]  # devices, cores, paths, sessions, requests in flight, trials
Events = Annotated[int, Field(le=10**15)]  # counted events (NIC discards, failed requests)
Seconds = Annotated[int, Field(le=10**7)]  # a timeout, a delay or a soak's length (~4 months)
Duration = Annotated[float, Field(le=10**7)]  # the same, where a fraction of a second is allowed
Millis = Annotated[float, Field(le=3.6e6)]  # a latency or a clock offset (an hour)
Tokens = Annotated[int, Field(le=10**7)]  # a prompt or an output, in tokens (past any context window)
Dim = Annotated[int, Field(le=10**7)]  # a model dimension (layers, heads, hidden size)
Bytes = Annotated[int, Field(le=2**50)]  # a size or a rate in bytes (a pebibyte)
Gib = Annotated[float, Field(le=1e9)]  # a size in GiB, GB or MiB (an exabyte in GiB)
GbPerS = Annotated[float, Field(le=1e5)]  # a bandwidth in GB/s (100 TB/s)
Kiops = Annotated[float, Field(le=1e6)]  # thousands of I/O per second (a billion IOPS)
Mbps = Annotated[int, Field(le=10**7)]  # a link's speed (10 Tbit/s)
Mtu = Annotated[int, Field(le=65_535)]  # an interface MTU
BytesPerToken = Annotated[int, Field(le=2**30)]  # KV state stored per prompt token (1 GiB)
Ratio = Annotated[float, Field(le=1000)]  # one figure over another (a threshold, a CV, a growth per hour)
Celsius = Annotated[float, Field(ge=-40, le=150)]  # a device temperature limit: what silicon survives
Percent = Annotated[int, Field(le=255)]  # NVMe's percentage used (it counts past 100, up to 255)
