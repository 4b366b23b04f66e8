#!/usr/bin/env bash
# Install the CPU serving engine kvgate drives on machines without a GPU (issue 4, section 6):
# llama.cpp through llama-cpp-python's OpenAI server, plus `gguf` and `numpy` for the tiny
# model that kvgate.engines.tinymodel writes. llama-cpp-python builds llama.cpp from source
# (cmake + a C++ compiler; measured on 2 shared cores: see the engine tests' report).
# Idempotent: does nothing when the right versions are already importable.
#   usage: scripts/install-engine.sh [PYTHON]   (default: .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${1:-${PYTHON:-.venv/bin/python}}"
LLAMA_CPP_PYTHON_VERSION="0.3.36"
GGUF_SPEC="gguf>=0.10"

have() {
  "$PY" - "$LLAMA_CPP_PYTHON_VERSION" <<'PYCODE' 2>/dev/null
import sys
import gguf, numpy, llama_cpp, llama_cpp.server.app  # the server extra pulls fastapi/uvicorn
sys.exit(0 if llama_cpp.__version__ == sys.argv[1] else 1)
PYCODE
}

if have; then
  echo "engine already installed: llama-cpp-python $LLAMA_CPP_PYTHON_VERSION, gguf"
  exit 0
fi

for tool in cmake g++; do
  command -v "$tool" >/dev/null || { echo "install-engine: '$tool' is missing (apt-get install cmake g++)" >&2; exit 1; }
done

start=$(date +%s)
# Use every core for the C++ build; pip keeps the built wheel in its cache for the next venv.
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
"$PY" -m pip install -q "llama-cpp-python[server]==${LLAMA_CPP_PYTHON_VERSION}" "$GGUF_SPEC" numpy
have || { echo "install-engine: llama_cpp $LLAMA_CPP_PYTHON_VERSION still not importable" >&2; exit 1; }
echo "engine installed in $(( $(date +%s) - start )) s: llama-cpp-python $LLAMA_CPP_PYTHON_VERSION, gguf"
