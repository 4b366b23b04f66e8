"""Every vLLM profile's command line, with a site's TP flag appended, passes vLLM 0.32's own parser.

The lab profiles cannot start here (they need GPUs), so their flags are checked where vLLM
checks them: ``make_arg_parser`` + ``validate_parsed_serve_args`` + ``EngineArgs.from_cli_args``
run by the vLLM interpreter (.venv-vllm), without starting an engine. A renamed or removed
flag, or a JSON argument vLLM cannot read, fails here instead of on the lab's first day.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from kvgate.configuration.engine_profile import PROFILE_DIR, load_profiles

REPO = Path(__file__).resolve().parents[2]
VLLM_PYTHON = Path(os.environ.get("KVGATE_VLLM_PYTHON", REPO / ".venv-vllm" / "bin" / "python"))
PARSE = """
import json, sys
from vllm.engine.arg_utils import EngineArgs
from vllm.entrypoints.launchers.cli_args import make_arg_parser, validate_parsed_serve_args
from vllm.utils.argparse_utils import FlexibleArgumentParser
args = make_arg_parser(FlexibleArgumentParser()).parse_args(json.loads(sys.argv[1]))
validate_parsed_serve_args(args)
engine = EngineArgs.from_cli_args(args)
print(json.dumps({"tp": engine.tensor_parallel_size, "kv_transfer_config": str(engine.kv_transfer_config)}))
"""
VALUES = {
    "python": "python3",
    "model": "/models/m",
    "port": "18000",
    "host": "127.0.0.1",
    "cache_dir": "/scratch/cache",
    "run_dir": "/scratch/run",
    "api_port": "28000",
}
PROFILES = sorted(n for n, p in load_profiles(PROFILE_DIR).items() if p.kind == "vllm")
pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not VLLM_PYTHON.exists(), reason=f"vLLM not installed at {VLLM_PYTHON}: make engine"),
]


@pytest.mark.parametrize("name", PROFILES)
def test_the_profiles_flags_parse_with_vllms_own_parser(name: str) -> None:
    launch = load_profiles(PROFILE_DIR)[name].render(VALUES)
    server = "vllm.entrypoints.openai.api_server"
    argv = list(launch.argv)
    flags = argv[argv.index(server) + 1 :] if server in argv else argv[argv.index("serve") + 2 :]
    res = subprocess.run(
        [str(VLLM_PYTHON), "-c", PARSE, json.dumps([*flags, "--tensor-parallel-size", "4"])],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    parsed = json.loads(res.stdout.strip().splitlines()[-1])
    assert parsed["tp"] == 4
    if "--kv-transfer-config" in flags:
        assert (
            json.loads(flags[flags.index("--kv-transfer-config") + 1])["kv_connector"]
            in parsed["kv_transfer_config"]
        )
