"""kvgate: gated acceptance tests for SSD-tiered KV-cache storage in LLM inference."""

__version__ = "0.1.0"
