"""tests/bench runs with `make bench`; `make test` only collects it, so a broken import shows in CI."""

# vllm_cli.py is a script for vLLM's own interpreter (.venv-vllm): importing it here, as
# --doctest-modules would, needs vLLM in kvgate's venv, which it is not.
collect_ignore = ["vllm_cli.py"]
