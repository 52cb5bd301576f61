"""The LLM library: transformer blocks written in streamdsl, composed into whole decoder accelerators.

    import streamdsl as sd

    config = sd.llm.tiny("llama")                      # or sd.llm.preset("llama-3.2-1b"), sd.llm.LLMConfig(...)
    m = sd.llm.llama(config, max_len=64).load(sd.llm.random_weights(config))
    logits, cache = m.prefill([1, 2, 3])               # the reference simulator; mode="csim" runs the HLS C++
    prj = m.build("hls", output="llama_prj")           # the generate kernel, host, link config, weights
    prj.csim([1, 2, 3], 4)                             # one whole launch in C-simulation: the ids it generates
    print(sd.llm.llm_perf(config, "u55c"))             # the performance model of the explored design

``sd.llm`` is this package, loaded on first use.  The blocks are in :mod:`.blocks` (``sd.llm.blocks``), the
generate kernel (the whole generate call on the device in one launch) in :mod:`.device`, the
device side of a token (LM head from HBM, argmax and sampling on chip, the head dataflow) in :mod:`.token`
(``sd.llm.token``), the end-to-end model of the emitted project in :mod:`.e2e` (``sd.llm.e2e.end_to_end``),
the float32 NumPy reference of every family in :class:`NumpyModel`.
"""
from . import blocks, device, e2e, facts, token
from .config import FAMILIES, LLMConfig, LLMError, preset, tiny, to_hf
from .gguf_loader import load_gguf, load_smollm2
from .hls_build import load_weights, read_weights
from .models import LLM, Cache, gemma3, gpt2, llama, model, qwen2
from .numpy_model import NumpyModel
from .perf import FP32, W4A8, W8A8, LLMPerf, llm_perf
from .weights import LayerWeights, ModelWeights, from_hf, load_state_dict, quantize, random_weights

__all__ = [
    "FAMILIES", "FP32", "LLM", "LLMConfig", "LLMError", "LLMPerf", "LayerWeights", "ModelWeights", "NumpyModel",
    "W4A8", "W8A8", "blocks", "Cache", "device", "e2e", "facts", "from_hf", "gemma3", "gpt2", "llama", "llm_perf", "load_gguf",
    "load_smollm2", "load_state_dict", "load_weights", "model", "preset", "qwen2", "quantize", "random_weights",
    "read_weights", "tiny", "to_hf", "token",
]
