"""Byte units, one home: decimal GB for bandwidths and sizes as vendors and the seed state them,
binary MiB and GiB for memory and file sizes as the kernel and the tools count them."""

GB = 1e9
MB = 1e6
MiB = 1 << 20
GiB = 1 << 30
