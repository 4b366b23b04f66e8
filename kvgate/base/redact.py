"""Secrets never reach a run directory: the one redaction, wherever a command line or an environment is kept.

Three rules, each replacing a secret by ``<redacted>``:

- by name: an environment variable or a data key whose name says secret (``*_TOKEN``,
  ``*_KEY``, ``*SECRET*``, ``*PASSWORD*``, ``*PASSWD*``, ``*CREDENTIAL*``) keeps its name and
  loses its value, in a mapping, in ``NAME=value`` text and as a YAML, JSON or Python-repr
  key (``remote_auth_token: x``, ``"api_key": "x"``, ``'api_key': 'x'``);
- by option: a command-line option named the same way (``--api-key X``,
  ``--api-key=X``, ``--hf_token X``) loses its value;
- by shape: Hugging Face (``hf_…``), OpenAI-style (``sk-…``), GitHub and AWS access
  keys, ``Bearer …`` tokens and ``scheme://user:password@`` credentials, anywhere.

Values found by name or option, also at any depth of a profile's data (:func:`secrets_in_data`),
are also remembered for the rest of the process
(:func:`remember`), so an engine log that prints its own arguments, or an error that
quotes the command line, is masked too: the run store passes everything it writes
through :func:`text` (kvgate.record.store), after the engine's own record was redacted
field by field (:func:`argv`, :func:`env`).

>>> argv(["vllm", "serve", "--api-key", "s3cr3t-value", "--port=8000", "--hf-token=abc12345"])
['vllm', 'serve', '--api-key', '<redacted>', '--port=8000', '--hf-token=<redacted>']
>>> env({"HF_TOKEN": "x", "CUDA_VISIBLE_DEVICES": "0,1"})
{'HF_TOKEN': '<redacted>', 'CUDA_VISIBLE_DEVICES': '0,1'}
>>> text("curl -H 'Authorization: Bearer eyJhbGciOi.abc' https://u:pw@hub/x")
"curl -H 'Authorization: Bearer <redacted>' https://u:<redacted>@hub/x"
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping, Sequence

MASK = "<redacted>"
MIN_REMEMBERED = 6  # shorter values would mask ordinary words in logs; the name/option rules still apply
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:TOKEN|KEY|APIKEY|PASS)$|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL", re.IGNORECASE
)
_SHAPES = [
    re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{20,}"),
    re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}"),
    re.compile(r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    re.compile(r"(?<![A-Za-z0-9])AKIA[0-9A-Z]{16}(?![A-Za-z0-9])"),
]
_BEARER = re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{6,}")
_URL_CREDENTIALS = re.compile(r"(://[^/\s:@'\"]+:)[^@\s/'\"]+@")
_ASSIGNMENT = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)=('[^']*'|\"[^\"]*\"|[^\s'\"]+)")
# a key of YAML (`key: v`), JSON (`"key": "v"`) or a Python repr (`'key': 'v'`) and its scalar value
_KEYED = re.compile(
    r"""(["']?)([A-Za-z_][A-Za-z0-9_.-]*)\1([ \t]*:[ \t]*)"""  # the key, quoted alike on both sides
    r"""("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[^\s,{}\[\]'"]+)"""  # a quoted string, or a bare scalar
)
# bare keys of ordinary data, never a secret's: a logprob's {"token": "Mov"}, a table's "key"
_DATA_WORDS = frozenset({"token", "key", "pass"})
_OPTION = re.compile(
    r"(?<![A-Za-z0-9_-])(--?[A-Za-z][A-Za-z0-9_-]*)(=|\s+)('[^']*'|\"[^\"]*\"|[^\s'\"-][^\s'\"]*)"
)

_remembered: set[str] = set()
_lock = threading.Lock()


def secret_name(name: str) -> bool:
    """True for an environment variable or option name that says it holds a secret (not ``*_PER_TOKEN``)."""
    bare = name.lstrip("-").replace("-", "_")
    return bool(_SECRET_NAME.search(bare)) and not bare.upper().endswith("PER_TOKEN")


def remember(values: Iterable[str]) -> None:
    """Mask these values in every text redacted from now on, in this process."""
    with _lock:
        _remembered.update(v for v in values if len(v) >= MIN_REMEMBERED)


def secrets_in(environment: Mapping[str, str], command: Sequence[str]) -> set[str]:
    """The values of secret-named variables and options (to :func:`remember`)."""
    found = {v for k, v in environment.items() if secret_name(k)}
    for i, arg in enumerate(command):
        name, eq, value = arg.partition("=")
        if name.startswith("-") and secret_name(name):
            found |= {value} if eq else set(command[i + 1 : i + 2])
    return found


def secrets_in_data(value: object) -> set[str]:
    """The scalar values under secret-named keys at any depth of nested data (a profile's files)."""
    if isinstance(value, Mapping):
        return set().union(*(_secret_item(str(k), v) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return set().union(*(secrets_in_data(v) for v in value))
    return set()


def _secret_item(key: str, value: object) -> set[str]:
    if secret_name(key) and isinstance(value, str | int | float) and not isinstance(value, bool):
        return {str(value)}
    return secrets_in_data(value)


def env(environment: Mapping[str, str]) -> dict[str, str]:
    """An environment with secret-named values masked and every other value passed through :func:`text`."""
    return {k: MASK if secret_name(k) else text(v) for k, v in environment.items()}


def argv(command: Sequence[str]) -> list[str]:
    """A command line with the value of every secret-named option masked, the rest through :func:`text`."""
    out: list[str] = []
    for arg in command:
        name, eq, _ = arg.partition("=")
        if out and out[-1].startswith("-") and "=" not in out[-1] and secret_name(out[-1]):
            out.append(MASK)
        elif eq and name.startswith("-") and secret_name(name):
            out.append(f"{name}={MASK}")
        else:
            out.append(text(arg))
    return out


def text(s: str) -> str:
    """Free text (a log, an error, a JSON document) with every known secret masked."""
    with _lock:
        known = sorted(_remembered, key=len, reverse=True)
    for value in known:
        s = s.replace(value, MASK)
    for shape in _SHAPES:
        s = shape.sub(MASK, s)
    s = _BEARER.sub(rf"\g<1>{MASK}", s)
    s = _URL_CREDENTIALS.sub(rf"\g<1>{MASK}@", s)
    s = _ASSIGNMENT.sub(lambda m: f"{m[1]}={MASK}" if secret_name(m[1]) else m[0], s)
    s = _KEYED.sub(_masked_key, s)
    return _OPTION.sub(lambda m: f"{m[1]}{m[2]}{MASK}" if secret_name(m[1]) else m[0], s)


def _masked_key(m: re.Match[str]) -> str:
    """A secret-named key keeps its name and quotes; its value becomes the mask."""
    if not secret_name(m[2]) or m[2].lower() in _DATA_WORDS:
        return m[0]
    # a quoted key is JSON or a repr: an unquoted value (a number) becomes a string, so the text still parses
    quote = m[4][0] if m[4][0] in "\"'" else '"' if m[1] else ""
    return f"{m[1]}{m[2]}{m[1]}{m[3]}{quote}{MASK}{quote}"
