"""``python -m kvgate.probes.loadgen``: run a load on the engine host and write the result JSON.

The agent runs this next to the engine. The output file holds the config, the
prompt spec, every request record, the pooled summary (``vllm bench serve`` keys),
per-endpoint summaries and the workload-shape verdict; it is written even when
requests failed, because failures are judged, not hidden. Exit 0 when the file
was written, 1 when the run could not start, 2 for bad arguments.

    python3 -m kvgate.probes.loadgen --url http://127.0.0.1:8000 --concurrency 16 \\
        --requests 64 --prompt-tokens 2000 --max-tokens 32 --salt RUN/ARM/1 --out result.json
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import math
import sys
import urllib.request
from typing import Any

from .cli import ratios, write_atomically
from .prompts import PromptSpec
from .run import FIXED_OUTPUT, LoadConfig, LoadResult, run
from .shape import invalid_reason


def main(argv: list[str] | None = None) -> int:
    """Parse, run, write; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        spec = _prompt_spec(args)
        config = _load_config(args, model=args.model or "?")
    except ValueError as exc:
        parser.error(str(exc))  # exits 2
    try:
        model = args.model or first_model(args.url[0], timeout_s=args.connect_timeout)
    except (OSError, ValueError) as exc:
        print(f"kvgate.probes.loadgen: cannot ask {args.url[0]} for its model: {exc}", file=sys.stderr)
        return 1
    prompts = spec.prompts(args.requests, args.fitted_tokens_per_word)
    gc.collect()
    gc.freeze()  # as vllm bench serve: keep GC pauses off the measured timestamps
    result = run(dataclasses.replace(config, model=model), prompts)
    document = artifact(result, spec, args)
    write_atomically(args.out, document)
    print(_one_line(document), file=sys.stderr)
    return 0


def _prompt_spec(args: argparse.Namespace) -> PromptSpec:
    return PromptSpec(
        salt=args.salt,
        prompt_tokens=args.prompt_tokens,
        reuse=args.reuse,
        group_size=args.group_size,
        tokens_per_word=args.tokens_per_word,
    )


def _load_config(args: argparse.Namespace, *, model: str) -> LoadConfig:
    return LoadConfig(
        urls=tuple(args.url),
        model=model,
        max_tokens=args.max_tokens,
        max_concurrency=args.concurrency,
        request_rate=args.request_rate,
        burstiness=args.burstiness,
        seed=args.seed,
        fixed_output=None if args.fixed_output == "none" else args.fixed_output,
        temperature=args.temperature,
        connect_timeout_s=args.connect_timeout,
        request_timeout_s=args.timeout,
        logprobs=args.logprobs,
    )


def artifact(result: LoadResult, spec: PromptSpec, args: argparse.Namespace) -> dict[str, Any]:
    """The JSON document: the result, the prompt spec and the workload-shape verdict."""
    percentiles = [float(p) for p in args.percentiles.split(",")]
    document = result.to_dict(percentiles=percentiles, output_tokens_from=args.output_tokens_from)
    document["prompt_spec"] = spec.__dict__.copy()
    document["fitted_tokens_per_word"] = list(args.fitted_tokens_per_word)
    document["workload_invalid_reason"] = invalid_reason(
        result.records,
        prompt_tokens=spec.prompt_tokens,
        max_tokens=args.max_tokens,
        tolerance=args.shape_tolerance,
    )
    return document


def first_model(base_url: str, *, timeout_s: float) -> str:
    """The first model id from ``/v1/models`` (what vllm bench serve does without ``--model``)."""
    with urllib.request.urlopen(base_url.rstrip("/") + "/v1/models", timeout=timeout_s) as response:
        data = json.load(response)
    models = data.get("data") if isinstance(data, dict) else None
    if not models:
        raise ValueError("the server lists no models")
    return str(models[0]["id"])


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m kvgate.probes.loadgen", description=__doc__.split("\n")[0])
    p.add_argument("--url", action="append", required=True, help="engine base URL; repeat for several")
    p.add_argument("--model", help="served model name (default: the first from /v1/models)")
    p.add_argument("--concurrency", type=int, default=None, help="max requests in flight (all endpoints)")
    p.add_argument("--requests", type=int, required=True)
    p.add_argument("--prompt-tokens", type=int, required=True)
    p.add_argument("--max-tokens", type=int, required=True)
    p.add_argument("--salt", required=True, help="per-run/arm/trial salt: prompts are unique to it")
    p.add_argument("--reuse", type=float, default=0.0, help="shared-prefix fraction per group")
    p.add_argument("--group-size", type=int, default=1, help="prompts per shared-prefix group")
    p.add_argument("--tokens-per-word", type=float, default=1.0)
    p.add_argument(
        "--fitted-tokens-per-word",
        type=ratios,
        default=(),
        metavar="R,R,...",
        help="prompt i's own tokens per word (fitted to its measured length); others: --tokens-per-word",
    )
    p.add_argument("--request-rate", type=float, default=math.inf, help="req/s (default inf: all at once)")
    p.add_argument("--burstiness", type=float, default=1.0, help="1 = Poisson arrivals")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--fixed-output",
        choices=(*FIXED_OUTPUT, "none"),
        default="ignore_eos",
        help="how the server is asked to generate exactly --max-tokens (none: it may stop at EOS)",
    )
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument(
        "--logprobs", type=int, metavar="K", help="record each token's top-K logprobs (default: off)"
    )
    p.add_argument("--timeout", type=float, default=600.0, help="per request, seconds")
    p.add_argument("--connect-timeout", type=float, default=10.0)
    p.add_argument("--percentiles", default="50,90,99")
    p.add_argument("--output-tokens-from", choices=("usage", "chunks"), default="usage")
    p.add_argument("--shape-tolerance", type=float, default=0.05)
    p.add_argument("--out", required=True, help="result JSON path")
    return p


def _one_line(document: dict[str, Any]) -> str:
    s = document.get("summary") or {}
    return (
        f"completed={s.get('completed')} failed={s.get('failed')} "
        f"p50_ttft_ms={s.get('p50_ttft_ms')} output_tok_per_s={s.get('output_throughput_tok_per_s')} "
        f"invalid={document.get('workload_invalid_reason')}"
    )


if __name__ == "__main__":
    sys.exit(main())
