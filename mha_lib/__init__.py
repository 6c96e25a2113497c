"""mha_lib: Multi-Head Attention, step by step, in numpy.

The math lives in :mod:`mha_lib.attention` and :mod:`mha_lib.params` (numpy
only). Plotting (:mod:`mha_lib.plotting`) and interactive explorers
(:mod:`mha_lib.explorers`) are separate modules that import matplotlib and
ipywidgets; importing ``mha_lib`` itself does not load them.

Masks everywhere in this project: **True = may attend**.
"""

from .attention import (
    MHAResult,
    apply_mask,
    attention_dropout,
    attention_scores,
    causal_mask,
    concat_heads,
    divisors,
    merge_heads,
    multi_head_attention,
    multi_head_attention_loop,
    output_projection,
    padding_mask,
    project,
    repeat_kv,
    scaled_dot_product_attention,
    sinusoidal_positions,
    softmax,
    softmax_jacobian,
    split_heads,
    weighted_sum,
)
from .backward import MHAGradients, multi_head_attention_backward, softmax_backward
from .data import RunningExample, embed_tokens, load_running_example, tokenize
from .designed import (
    DesignedExample,
    SoftLookup,
    TwoHeadsDemo,
    closest_words,
    designed_example,
    output_words,
    soft_lookup_example,
    two_heads_demo,
)
from .flash import blockwise_attention
from .generation import PUBLISHED_CONFIGS, DecodeResult, KVCache, ModelConfig, decode_step, kv_cache_bytes
from .params import MHAParams, init_params, parameter_count, params_from_fused, params_to_fused, selection_matrix
from .rope import rope_angles, rotary_embedding
from .translation import TranslationExample, translation_example

__version__ = "0.1.0"

__all__ = [
    "DecodeResult",
    "KVCache",
    "ModelConfig",
    "PUBLISHED_CONFIGS",
    "attention_dropout",
    "decode_step",
    "kv_cache_bytes",
    "repeat_kv",
    "rope_angles",
    "rotary_embedding",
    "TranslationExample",
    "translation_example",
    "DesignedExample",
    "SoftLookup",
    "soft_lookup_example",
    "MHAParams",
    "MHAResult",
    "MHAGradients",
    "multi_head_attention_backward",
    "softmax_backward",
    "RunningExample",
    "apply_mask",
    "attention_scores",
    "blockwise_attention",
    "causal_mask",
    "concat_heads",
    "divisors",
    "closest_words",
    "designed_example",
    "embed_tokens",
    "init_params",
    "output_words",
    "load_running_example",
    "merge_heads",
    "multi_head_attention",
    "multi_head_attention_loop",
    "output_projection",
    "padding_mask",
    "parameter_count",
    "params_from_fused",
    "params_to_fused",
    "project",
    "scaled_dot_product_attention",
    "selection_matrix",
    "sinusoidal_positions",
    "softmax",
    "softmax_jacobian",
    "split_heads",
    "tokenize",
    "two_heads_demo",
    "TwoHeadsDemo",
    "weighted_sum",
]
