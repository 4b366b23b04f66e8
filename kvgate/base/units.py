"""Byte units, one home: decimal GB for bandwidths and sizes as vendors and the seed state them,
binary MiB and GiB for memory and file sizes as the kernel and the tools count them."""

GB = 1e9
MB = 1e6
MiB = 1 << 20
GiB = 1 << 30


def rate(bytes_per_s: float) -> str:
    """A bandwidth in the unit that keeps three significant figures readable.

    >>> rate(2.26e9), rate(23.4e6), rate(0.5e6)
    ('2.26 GB/s', '23.4 MB/s', '0.5 MB/s')
    """
    return f"{bytes_per_s / GB:.3g} GB/s" if bytes_per_s >= GB else f"{bytes_per_s / MB:.3g} MB/s"
