"""Self-checks of notebook 11 (the cost of attention)."""

from ..cost import attention_cost, weights_bytes
from ..flash import online_softmax_steps
from . import Exercise

EXERCISES = {
    "scores_flops": Exercise(
        question="How many floating-point operations do the scores Q_i K_i^T of ALL 8 heads of the running example "
                 "take (n = 4, d_k = 64; one multiply-add counts as 2)?",
        answer=lambda: attention_cost(4, 512, 8)["scores"]["flops"],
        hint=(
            "A product (a x b) @ (b x c) computes a*c dot products of length b, and each multiply-add counts as "
            "2.",
            "One head: a (4 x 64) @ (64 x 4) product, 2 * 4 * 4 * 64 operations. Then 8 heads.",
        ),
        kind="number",
        rtol=0.0,
        atol=0.0,
    ),
    "crossover": Exercise(
        question="For d_model = 768 (BERT-Base), at which n do the scores and the weighted sum (4 n^2 d_model "
                 "FLOPs) cost exactly as much as the four projections (8 n d_model^2)?",
        answer=lambda: 2 * 768,
        hint=(
            "The cost of the scores and the weighted sum grows like n^2, the cost of the projections like n: find "
            "the n where the two are equal.",
            "Set 4 n^2 d_model = 8 n d_model^2 and solve for n (divide both sides by 4 n d_model).",
        ),
        kind="number",
        rtol=0.0,
        atol=0.5,
    ),
    "gpt2_weights_mib": Exercise(
        question="GPT-2 (small) has h = 12 heads and reads up to n = 1024 tokens. How many MiB do the float32 "
                 "attention weights of one layer take for one such sentence (1 MiB = 2^20 bytes)?",
        answer=lambda: weights_bytes(1024, 12) / 2**20,
        hint=(
            "The weights are one n x n matrix per head, and a float32 number takes 4 bytes.",
            "h * n * n numbers, 4 bytes each; 1024 * 1024 * 4 bytes is exactly 4 MiB.",
        ),
        kind="number",
        rtol=0.0,
        atol=0.01,
    ),
    "online_rescale": Exercise(
        question="Online softmax of the row [2, 1, 4, 0] in blocks of 2. After the first block the running maximum "
                 "is 2. By what factor is the running sum multiplied when the second block arrives? Four decimals.",
        answer=lambda: online_softmax_steps([2.0, 1.0, 4.0, 0.0], block_size=2)[0][1]["rescale"],
        hint=(
            "The running sum was computed against the old maximum; when the maximum changes, every term in it "
            "must be put on the new one.",
            "The new maximum is 4; the old terms were exp(score - 2) and must become exp(score - 4).",
        ),
        kind="number",
        rtol=0.0,
        atol=1e-4,
    ),
}
