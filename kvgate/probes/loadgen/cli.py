"""What the load generator's two command lines share (``kvgate.probes.loadgen`` and the agent's
``sessions`` driver): the ratio-list argument type and the result file written atomically.

>>> ratios("1.3,0.9")
(1.3, 0.9)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
from typing import Any


def ratios(text: str) -> tuple[float, ...]:
    """An argparse type: comma-separated finite numbers, each > 0."""
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected comma-separated numbers") from None
    if not all(v > 0 and math.isfinite(v) for v in values):
        raise argparse.ArgumentTypeError(f"{text!r}: every ratio must be a finite number > 0")
    return values


def write_atomically(path: str, document: dict[str, Any]) -> None:
    """Through a fresh file of our own in the same directory (mkstemp), renamed over ``path``."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(document, f)
    os.replace(tmp, path)
