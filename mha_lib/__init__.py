"""mha_lib: Multi-Head Attention, step by step, in numpy.

The math lives in :mod:`mha_lib.attention` and :mod:`mha_lib.params` (numpy
only). Plotting (:mod:`mha_lib.plotting`) and interactive explorers
(:mod:`mha_lib.explorers`) are separate modules that import matplotlib and
ipywidgets; importing ``mha_lib`` itself does not load them.

The package exports what the ``__all__`` of each numpy module imported below says
(``from mha_lib import softmax`` is ``mha_lib.attention.softmax``); the other
modules (``cost``, ``minilm``, ``block``, ``training``, ...) are imported by
name: ``from mha_lib import minilm``.

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
    head_contributions,
    make_mask,
    merge_heads,
    multi_head_attention,
    multi_head_attention_loop,
    output_projection,
    padding_mask,
    project,
    repeat_kv,
    row_entropy,
    scaled_dot_product_attention,
    sinusoidal_positions,
    softmax,
    softmax_jacobian,
    split_heads,
    weighted_sum,
    wo_blocks,
)
from .backward import MHAGradients, multi_head_attention_backward, softmax_backward
from .data import (
    RUNNING_EXAMPLE_SHA256,
    RUNNING_EXAMPLE_TOKENS,
    RunningExample,
    arrays_sha256,
    data_dir,
    embed_tokens,
    load_running_example,
    make_running_example,
    tokenize,
)
from .designed import (
    DESIGNED_ROLES,
    DESIGNED_SENTENCE,
    MAX_DESIGNED_TOKENS,
    DesignedExample,
    SoftLookup,
    TwoHeadsDemo,
    closest_words,
    designed_example,
    output_words,
    soft_lookup_example,
    two_heads_demo,
)
from .flash import blockwise_attention, online_softmax_steps, peak_memory
from .generation import PUBLISHED_CONFIGS, DecodeResult, KVCache, ModelConfig, decode_step, kv_cache_bytes
from .params import MHAParams, init_params, parameter_count, params_from_fused, params_to_fused, selection_matrix
from .rope import rope_angles, rotary_embedding
from .translation import CONCEPTS, TranslationExample, translation_example

__version__ = "0.1.0"

__all__ = [  # each module's __all__, in this order (tests/test_public_api.py checks it)
    # attention
    "softmax",
    "softmax_jacobian",
    "project",
    "split_heads",
    "merge_heads",
    "attention_scores",
    "apply_mask",
    "weighted_sum",
    "scaled_dot_product_attention",
    "concat_heads",
    "output_projection",
    "MHAResult",
    "multi_head_attention",
    "multi_head_attention_loop",
    "attention_dropout",
    "repeat_kv",
    "causal_mask",
    "padding_mask",
    "sinusoidal_positions",
    "divisors",
    "make_mask",
    "row_entropy",
    "wo_blocks",
    "head_contributions",
    # backward
    "MHAGradients",
    "softmax_backward",
    "multi_head_attention_backward",
    # data
    "tokenize",
    "embed_tokens",
    "RunningExample",
    "make_running_example",
    "load_running_example",
    "data_dir",
    "RUNNING_EXAMPLE_TOKENS",
    "RUNNING_EXAMPLE_SHA256",
    "arrays_sha256",
    # designed
    "DesignedExample",
    "designed_example",
    "closest_words",
    "output_words",
    "TwoHeadsDemo",
    "two_heads_demo",
    "DESIGNED_SENTENCE",
    "DESIGNED_ROLES",
    "MAX_DESIGNED_TOKENS",
    "SoftLookup",
    "soft_lookup_example",
    # flash
    "blockwise_attention",
    "online_softmax_steps",
    "peak_memory",
    # generation
    "KVCache",
    "DecodeResult",
    "decode_step",
    "kv_cache_bytes",
    "ModelConfig",
    "PUBLISHED_CONFIGS",
    # params
    "MHAParams",
    "init_params",
    "params_from_fused",
    "params_to_fused",
    "parameter_count",
    "selection_matrix",
    # rope
    "rotary_embedding",
    "rope_angles",
    # translation
    "TranslationExample",
    "translation_example",
    "CONCEPTS",
]
