"""A tiny Llama model generated locally (no model hub): random weights, real architecture.

The GGUF is written with the ``gguf`` package: llama architecture, f16 weights,
and a SentencePiece-style ("llama") vocabulary built here from byte-fallback
tokens, letter pairs and common English words, so llama.cpp tokenizes ordinary
English text. Greedy outputs are deterministic nonsense, which is all a storage
test needs; the KV cache has the real size of such a model.

>>> spec = TinyLlamaSpec()
>>> spec.kv_bytes_per_token, spec.llama_cpp_state_bytes_per_token
(32768, 46708)
>>> spec.parameters, spec.described().split("; ")[0][-40:]
(91040768, '1024 wide, 8 KV heads, 91.0 M parameters')
"""

from __future__ import annotations

import hashlib
import json
import os
import string
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

SPACE = "\u2581"  # SentencePiece's word-boundary marker
# A few hundred frequent English words: each with its prefixes becomes vocabulary.
_WORDS_TEXT = """the of and to in is was for that on as with by he it at from his an were are which this be
had not or have but they one all their first also after new two has been its who other more time when into
there during would over her year some she only can most many later may used then about where while out up
such him these three than state between city under made known world part both school since through including
people each well because however new years war family called name being before high united number called
before same early season three national found work company government system until area north south east west
around second general several must like could what will should very even back good life any how long make
down way day just use each people water words because did get come made may part over new sound take only
little work know place year live me back give most very after thing our just name good sentence man think say
great where help through much before line right too mean old any same tell boy follow came want show also
around form three small set put end does another well large must big even such turn here why ask went men
read need land different home us move try kind hand picture again change off play spell air away animal house
point page letter mother answer study still learn should world cache storage memory disk token model request
data read write block file load time first last test value result server engine prompt text system"""
WORDS = tuple(_WORDS_TEXT.split())


@dataclass(frozen=True)
class TinyLlamaSpec:
    """Shape of the generated model; the defaults give ~180 MB of f16 weights."""

    n_layer: int = 8
    n_embd: int = 1024
    n_head: int = 8
    n_head_kv: int = 8
    n_ff: int = 2048
    context_length: int = 8192
    seed: int = 1234

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    @property
    def kv_bytes_per_token(self) -> int:
        """K and V, every layer, f16 cache (llama.cpp's default cache type)."""
        return 2 * self.n_layer * self.n_head_kv * self.head_dim * 2

    @property
    def llama_cpp_state_bytes_per_token(self) -> int:
        """What llama-cpp-python's disk cache stores per prompt token: the KV plus one f32 logits row."""
        return self.kv_bytes_per_token + 4 * vocab_size()

    @property
    def parameters(self) -> int:
        """Every weight of the file (_tensors): embeddings, output, each layer's attention, MLP, norms."""
        d, kv = self.n_embd, self.n_head_kv * self.head_dim
        layer = 2 * d * d + 2 * kv * d + 3 * self.n_ff * d + 2 * d
        return 2 * vocab_size() * d + self.n_layer * layer + d

    def described(self) -> str:
        """The model as a report names it: its shape, size and KV bytes per token."""
        return (
            f"a Llama generated here (random f16 weights, GGUF): {self.n_layer} layers × {self.n_embd} wide, "
            f"{self.n_head_kv} KV heads, {self.parameters / 1e6:.1f} M parameters; "
            f"KV {self.kv_bytes_per_token / 1e3:.1f} kB per token, "
            f"{self.llama_cpp_state_bytes_per_token / 1e3:.1f} kB per token in llama.cpp's disk cache "
            "(the KV and one logits row)"
        )

    def digest(self) -> str:
        """A short hash of the spec and vocabulary: names the file, so a changed spec regenerates."""
        blob = json.dumps([asdict(self), WORDS], sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:12]


def build_vocab() -> tuple[list[str], list[float], list[int]]:
    """Tokens, scores and token types of an SPM vocabulary (types: 1 normal, 2 unknown, 3 control, 6 byte)."""
    tokens, scores, types = ["<unk>", "<s>", "</s>"], [0.0, 0.0, 0.0], [2, 3, 3]
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        scores.append(0.0)
        types.append(6)
    for piece in _pieces():
        tokens.append(piece)
        scores.append(float(len(piece)))  # prefer the longest merge
        types.append(1)
    return tokens, scores, types


def _pieces() -> list[str]:
    """Printable characters, letter pairs and every prefix of the words, with and without ▁."""
    pieces: dict[str, None] = dict.fromkeys([SPACE, *string.printable.strip()])
    letters = string.ascii_lowercase
    for a in letters:
        pieces[SPACE + a] = None
        pieces[SPACE + a.upper()] = None
        for b in letters:
            pieces[a + b] = None
    for word in WORDS:
        for w in (word, word.capitalize()):
            for i in range(2, len(w) + 1):
                pieces[w[:i]] = None
                pieces[SPACE + w[:i]] = None
    return list(pieces)


def write_gguf(path: Path, spec: TinyLlamaSpec | None = None) -> Path:
    """Write the tiny model to ``path`` (atomically) and return it."""
    import gguf  # type: ignore[import-not-found,unused-ignore]  # optional: `make engine`

    spec = spec or TinyLlamaSpec()
    # a fresh file of our own (mkstemp: O_EXCL, a random name): never shared by two runs, never a link
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.fchmod(fd, 0o644)
    os.close(fd)
    tmp = Path(tmp_name)
    writer = gguf.GGUFWriter(str(tmp), "llama")
    _add_metadata(writer, spec)
    for name, array in _tensors(spec):
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp.replace(path)
    return path


def _add_metadata(writer: Any, spec: TinyLlamaSpec) -> None:
    tokens, scores, types = build_vocab()
    writer.add_name(f"kvgate-tiny-llama-{spec.digest()}")
    writer.add_context_length(spec.context_length)
    writer.add_embedding_length(spec.n_embd)
    writer.add_block_count(spec.n_layer)
    writer.add_feed_forward_length(spec.n_ff)
    writer.add_head_count(spec.n_head)
    writer.add_head_count_kv(spec.n_head_kv)
    writer.add_rope_dimension_count(spec.head_dim)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(1)  # mostly f16
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)


def _tensors(spec: TinyLlamaSpec) -> list[tuple[str, npt.NDArray[Any]]]:
    """Random f16 matrices (numpy shape = (out, in)) and f32 norms, in llama.cpp's names."""
    import numpy as np

    rng = np.random.default_rng(spec.seed)
    n_vocab, d, ff = len(build_vocab()[0]), spec.n_embd, spec.n_ff

    def mat(rows: int, cols: int) -> npt.NDArray[np.float16]:
        return (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02).astype(np.float16)

    ones = np.ones(d, dtype=np.float32)
    out: list[tuple[str, npt.NDArray[Any]]] = [("token_embd.weight", mat(n_vocab, d))]
    for i in range(spec.n_layer):
        out += [
            (f"blk.{i}.attn_norm.weight", ones),
            (f"blk.{i}.attn_q.weight", mat(d, d)),
            (f"blk.{i}.attn_k.weight", mat(spec.n_head_kv * spec.head_dim, d)),
            (f"blk.{i}.attn_v.weight", mat(spec.n_head_kv * spec.head_dim, d)),
            (f"blk.{i}.attn_output.weight", mat(d, d)),
            (f"blk.{i}.ffn_norm.weight", ones),
            (f"blk.{i}.ffn_gate.weight", mat(ff, d)),
            (f"blk.{i}.ffn_up.weight", mat(ff, d)),
            (f"blk.{i}.ffn_down.weight", mat(d, ff)),
        ]
    return [*out, ("output_norm.weight", ones), ("output.weight", mat(n_vocab, d))]


def ensure_tiny_gguf(directory: Path, spec: TinyLlamaSpec | None = None) -> Path:
    """The tiny model under ``directory``, generated once per spec (cached by its digest)."""
    spec = spec or TinyLlamaSpec()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"tiny-llama-{spec.digest()}.gguf"
    return path if path.exists() else write_gguf(path, spec)


def vocab_size() -> int:
    """Number of tokens in the generated vocabulary."""
    return len(build_vocab()[0])


__all__ = ["TinyLlamaSpec", "build_vocab", "ensure_tiny_gguf", "vocab_size", "write_gguf"]
