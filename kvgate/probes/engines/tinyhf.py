"""A tiny Llama in Hugging Face format, generated on the engine host (no model hub).

vLLM loads a model directory: ``config.json``, ``model.safetensors`` and a
tokenizer. This module is run *by the engine's own interpreter* on the host
(``python tinyhf.py OUT_DIR``), so it uses what any vLLM install carries —
torch, safetensors and tokenizers — and the controller needs none of them.

- weights: random, bf16 (the dtype vLLM's CPU backend runs), written with torch;
- tokenizer: a byte-level BPE *trained here* on the load generator's word list,
  so every prompt word is one token after a space, as in real vocabularies;
- the directory name carries a digest of this file: a changed generator regenerates.

The output is written to ``OUT_DIR.tmp`` and renamed, so a half-written model is never used.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from typing import Any

CONFIG: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "head_dim": 64,
    "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "hidden_act": "silu",
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "bos_token_id": 1,
    "eos_token_id": 2,
}
SPECIAL = ["<unk>", "<s>", "</s>"]
VOCAB_SIZE = 2048
SEED = 1234


def kv_bytes_per_token(dtype_bytes: int = 2) -> int:
    """K and V of every layer for one token, at the engine's cache dtype (bf16 on vLLM CPU)."""
    c = CONFIG
    return 2 * int(c["num_hidden_layers"]) * int(c["num_key_value_heads"]) * int(c["head_dim"]) * dtype_bytes


def described() -> str:
    """The model as a report names it: its shape, size (at most: the trained vocabulary can be smaller
    than VOCAB_SIZE) and KV bytes per token."""
    c = CONFIG
    shape = ("hidden_size", "intermediate_size", "head_dim", "num_hidden_layers")
    d, ff, hd, layers = (int(c[k]) for k in shape)
    q, kv = int(c["num_attention_heads"]) * hd, int(c["num_key_value_heads"]) * hd
    params = 2 * VOCAB_SIZE * d + layers * (2 * q * d + 2 * kv * d + 3 * ff * d + 2 * d) + d
    return (
        f"a Llama generated here (random bf16 weights, Hugging Face format): {layers} layers × {d} wide, "
        f"{c['num_key_value_heads']} KV heads, at most {params / 1e6:.1f} M parameters; "
        f"KV {kv_bytes_per_token() / 1e3:.1f} kB per token"
    )


def train_tokenizer(words: list[str], out: str) -> int:
    """A byte-level BPE trained on the words (each with and without a leading space)."""
    from tokenizers import (  # type: ignore[import-not-found,unused-ignore]
        Tokenizer,
        decoders,
        models,
        pre_tokenizers,
        trainers,
    )

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    corpus = [" ".join(words)] * 4 + [" ".join(w.capitalize() for w in words), ". , ; : ! ? 0 1 2 3"]
    tok.train_from_iterator(corpus, trainer)
    tok.save(os.path.join(out, "tokenizer.json"))
    with open(os.path.join(out, "tokenizer_config.json"), "w") as fh:
        json.dump(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "bos_token": "<s>",
                "eos_token": "</s>",
                "unk_token": "<unk>",
                "model_max_length": CONFIG["max_position_embeddings"],
                "add_bos_token": True,
            },
            fh,
            indent=1,
        )
    return int(tok.get_vocab_size())


def write_weights(vocab: int, out: str) -> None:
    """Random Llama weights in HF names, one safetensors file."""
    import torch  # type: ignore[import-not-found,unused-ignore]
    from safetensors.torch import save_file  # type: ignore[import-not-found,unused-ignore]

    gen = torch.Generator().manual_seed(SEED)
    c = CONFIG
    d, ff, hd = int(c["hidden_size"]), int(c["intermediate_size"]), int(c["head_dim"])
    q, kv = int(c["num_attention_heads"]) * hd, int(c["num_key_value_heads"]) * hd

    def mat(rows: int, cols: int) -> Any:
        return (torch.randn(rows, cols, generator=gen) * 0.02).to(torch.bfloat16)

    def ones() -> Any:
        return torch.ones(d, dtype=torch.bfloat16)

    t = {"model.embed_tokens.weight": mat(vocab, d), "model.norm.weight": ones()}
    for i in range(int(c["num_hidden_layers"])):
        p = f"model.layers.{i}"
        t |= {
            f"{p}.input_layernorm.weight": ones(),
            f"{p}.post_attention_layernorm.weight": ones(),
            f"{p}.self_attn.q_proj.weight": mat(q, d),
            f"{p}.self_attn.k_proj.weight": mat(kv, d),
            f"{p}.self_attn.v_proj.weight": mat(kv, d),
            f"{p}.self_attn.o_proj.weight": mat(d, q),
            f"{p}.mlp.gate_proj.weight": mat(ff, d),
            f"{p}.mlp.up_proj.weight": mat(ff, d),
            f"{p}.mlp.down_proj.weight": mat(d, ff),
        }
    t["lm_head.weight"] = mat(vocab, d)
    save_file(t, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})


def generate(out: str, words: list[str]) -> str:
    """Write the model directory ``out`` (atomically: ``out.tmp`` then rename); returns ``out``."""
    if os.path.exists(os.path.join(out, "config.json")):
        return out
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    vocab = train_tokenizer(words, tmp)
    write_weights(vocab, tmp)
    with open(os.path.join(tmp, "config.json"), "w") as fh:
        json.dump({**CONFIG, "vocab_size": vocab}, fh, indent=1)
    with open(os.path.join(tmp, "generation_config.json"), "w") as fh:
        json.dump({"bos_token_id": 1, "eos_token_id": 2, "do_sample": False}, fh)
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    return out


if __name__ == "__main__":
    # argv: OUT_DIR, then the words to train the tokenizer on (the load generator's list)
    print(generate(sys.argv[1], sys.argv[2:]))
