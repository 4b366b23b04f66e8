"""Byte units, one home: decimal GB for bandwidths and sizes as vendors and the seed state them,
binary MiB and GiB for memory and file sizes as the kernel and the tools count them."""

GB = 1e9
MB = 1e6
MiB = 1 << 20
GiB = 1 << 30


def rate(bytes_per_s: float) -> str:
    """A bandwidth in GB/s or MB/s to three significant figures, never in e-notation.

    >>> rate(2.26e9), rate(999.6e6), rate(23.4e6), rate(0.5e6), rate(120.0)
    ('2.26 GB/s', '1 GB/s', '23.4 MB/s', '0.5 MB/s', '0.0001 MB/s')
    """
    if bytes_per_s >= 0.9995 * GB:  # what rounds to 1,000 MB/s reads as 1 GB/s
        return f"{bytes_per_s / GB:.3g} GB/s"
    mb = bytes_per_s / MB
    return f"{mb:.3g} MB/s" if mb >= 0.1 else f"{f'{mb:.4f}'.rstrip('0').rstrip('.') or '0'} MB/s"
