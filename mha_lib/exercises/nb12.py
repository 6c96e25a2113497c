"""Self-checks of notebook 12 (attention in today's models)."""

import numpy as np

from .. import (
    PUBLISHED_CONFIGS,
    KVCache,
    causal_mask,
    decode_step,
    init_params,
    kv_cache_bytes,
    load_running_example,
    multi_head_attention,
)
from .answers import Exercise


def _rows_changed_by_last_token():
    ex = load_running_example()
    X2 = ex.X.copy()
    X2[-1] = np.random.default_rng(0).normal(size=ex.X.shape[1])  # another last token
    a = multi_head_attention(ex.X, ex.params, mask=causal_mask(4)).output
    b = multi_head_attention(X2, ex.params, mask=causal_mask(4)).output
    return int((np.abs(a - b).max(axis=1) > 1e-12).sum())


def _scores_over_100_steps():
    params = init_params(8, 1, seed=0)  # one head
    cache, total = KVCache(params), 0
    for x in np.random.default_rng(0).normal(size=(100, 8)):  # 100 tokens, one at a time
        total += decode_step(x, params, cache).weights.size  # (h, t): t scores at step t
    return total


def _kv_head_of_query_head_10():
    h, h_kv = 32, 8
    params = init_params(64, h, h_kv=h_kv)
    return (10 - 1) // (params.h // params.h_kv) + 1  # heads numbered from 1


EXERCISES = {
    "cross_weights_shape": Exercise(
        question="A decoder's cross-attention with 8 heads: the French sentence so far has 5 tokens, the English "
        "source sentence 7. What is the shape of the attention weights (h, n, m)?",
        answer=lambda: multi_head_attention(np.ones((5, 16)), init_params(16, 8), memory=np.ones((7, 16))).weights.shape,
        hint=(
            "Queries come from the sentence being written, keys from the sentence being read, one matrix per head.",
            "One row per query (the French tokens), one column per key (the English tokens), one matrix per head.",
        ),
        kind="shape",
        solution="Queries come from the 5 French tokens, keys from the 7 English ones: each head has a 5 x 7 "
        "matrix of weights, so (8, 5, 7).",
    ),
    "predict_rows_changed": Exercise(
        question="Predict before you run the next cell: under the causal mask, you replace the LAST token of "
        "'humpty dumpty sat on' by another vector. How many of the 4 output rows change?",
        answer=_rows_changed_by_last_token,
        hint="Which rows of the causal weights have a non-zero entry in the last column?",
        kind="choice",
        solution="Only row 4: rows 1-3 may not look at token 4 (their weight on it is exactly 0), and nothing else "
        "in their computation involves it. Without the mask all 4 rows change.",
    ),
    "decode_scores": Exercise(
        question="Generating with a KV cache, ONE head writes tokens 1, 2, ..., 100 one at a time. How many scores "
        "does it compute in total over the 100 steps?",
        answer=_scores_over_100_steps,
        hint=(
            "With a KV cache, each step computes only the new token's query, and compares it with every key kept so far.",
            "Step t compares one query row with t keys (its own included): t scores. Add them up for t = 1 .. 100 "
            "(1 + 2 + ... + 100 = 100 * 101 / 2).",
        ),
        kind="number",
        rtol=0.0,
        atol=0.0,
        solution="Step t computes t scores, so 1 + 2 + ... + 100 = 100 * 101 / 2 = 5,050. Recomputing the whole "
        "prefix at every step would compute t x t scores at step t: 1 + 4 + ... + 10,000 = 338,350, "
        "67 times more.",
    ),
    "kv_head_of_query_head": Exercise(
        question="Llama 3 8B has h = 32 query heads and h_kv = 8 key/value heads. Numbering heads from 1, which "
        "key/value head does query head 10 use?",
        answer=_kv_head_of_query_head_10,
        hint=(
            "Grouped-query attention shares each key/value head among a block of neighbouring query heads.",
            "Each key/value head serves h / h_kv = 4 query heads in a row: query heads 1-4 use key/value head 1.",
        ),
        kind="choice",
        solution="32 / 8 = 4 query heads per key/value head: heads 1-4 -> 1, 5-8 -> 2, 9-12 -> 3. So 3 "
        "(in code, 0-based: 9 // 4 = 2).",
    ),
    "llama3_cache_gib": Exercise(
        question="Llama 3 8B: 32 layers, 8 key/value heads of d_k = 128, float16 (2 bytes). How many GiB does "
        "its KV cache take for one sequence of 8192 tokens (1 GiB = 2^30 bytes)?",
        answer=lambda: kv_cache_bytes(PUBLISHED_CONFIGS["Llama 3 8B"].n_layers, 8, 128, 8192, 2) / 2**30,
        hint=(
            "The cache keeps a key vector and a value vector per token, per key/value head, per layer.",
            "2 (keys and values) x layers x h_kv x d_k x tokens x bytes per number gives bytes; divide by 2^30 for GiB.",
        ),
        kind="number",
        rtol=0.0,
        atol=0.01,
        solution="2 x 32 x 8 x 128 x 8192 x 2 bytes = 1,073,741,824 bytes = 1 GiB (with 32 key/value heads, "
        "as in Llama 2 7B, it would be 4 GiB).",
    ),
}
