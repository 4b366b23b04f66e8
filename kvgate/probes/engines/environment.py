"""The engine's environment is the one kvgate builds: strays from the host's login shell are dropped.

vLLM reads ``VLLM_*``, LMCache ``LMCACHE_*`` (each overrides the config file kvgate wrote), SGLang
``SGLANG_*``, and the GPU runtimes their ``*_VISIBLE_DEVICES``. An SSH session inherits whatever the
login shell exports, so a variable left in an engineer's ``~/.bashrc`` would change the engine that
ran without showing in the config on disk. The launch unsets every such name the profile and the
placement do not set (``env -u``), and the launch record names what it dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from kvgate.transport import Executor

ENGINE_VARIABLE = re.compile(r"(LMCACHE|VLLM|SGLANG)_[A-Za-z0-9_]*|(CUDA|HIP|ROCR|ASCEND_RT)_VISIBLE_DEVICES")


def strays(names: Iterable[str], declared: Mapping[str, str]) -> list[str]:
    """The engine variables among ``names`` that kvgate did not declare, sorted.

    >>> strays(["PATH", "VLLM_USE_V1", "LMCACHE_CONFIG_FILE"], {"LMCACHE_CONFIG_FILE": "x"})
    ['VLLM_USE_V1']
    """
    return sorted(n for n in set(names) if ENGINE_VARIABLE.fullmatch(n) and n not in declared)


def host_variable_names(ex: Executor) -> list[str]:
    """The names of the variables a command on the host inherits (``env -0``: a value may hold newlines)."""
    out = ex.run("env -0", timeout_s=30, check=True).stdout
    return [entry.split("=", 1)[0] for entry in out.split("\0") if "=" in entry]


def unset_options(names: Iterable[str]) -> list[str]:
    """``env``'s options that remove ``names`` before its assignments apply."""
    return [f"--unset={n}" for n in names]
