"""Self-checks of notebook 11 (the cost of attention)."""

from ..cost import MODEL_CONFIGS, attention_cost, weights_bytes
from ..flash import online_softmax_steps
from .answers import Exercise

EXERCISES = {
    "scores_flops": Exercise(
        question="BERT-Base (d_model = 768, h = 12, so d_k = 64) reads a sentence of n = 128 tokens. How many "
        "floating-point operations do the scores Q_i K_i^T of all 12 heads take (one multiply-add counts "
        "as 2)?",
        answer=lambda: attention_cost(128, 768, 12)["scores"]["flops"],
        hint=(
            "A product (a x b) @ (b x c) computes a*c dot products of length b, and each multiply-add counts as 2.",
            "One head: a (128 x 64) @ (64 x 128) product, 2 * 128 * 128 * 64 operations. Then 12 heads "
            "(12 * 64 = d_model, so the total is 2 n^2 d_model).",
        ),
        kind="number",
        rtol=0.0,
        atol=0.0,
    ),
    "crossover": Exercise(
        question="LLaMA-7B's layers have d_model = 4096 and h = 32. At which n do the scores and the weighted sum "
        "(4 n^2 d_model FLOPs) cost exactly as much as the projections and the output (8 n d_model^2)?",
        answer=lambda: 2 * MODEL_CONFIGS["LLaMA-7B"][0],
        hint=(
            "The cost of the scores and the weighted sum grows like n^2, the cost of the projections like n: find "
            "the n where the two are equal. The number of heads does not enter.",
            "Set 4 n^2 d_model = 8 n d_model^2 and solve for n (divide both sides by 4 n d_model), then put in "
            "d_model = 4096.",
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
        question="Online softmax of the row [2, 1, 5, 0] in blocks of 2. By what factor is the running sum "
        "multiplied when the second block arrives? Four decimals.",
        answer=lambda: online_softmax_steps([2.0, 1.0, 5.0, 0.0], block_size=2)[0][1]["rescale"],
        hint=(
            "The running sum was computed against the old maximum; when the maximum changes, every term in it "
            "must be put on the new one.",
            "After block 1 the running maximum is 2; block 2 raises it to 5. The old terms were exp(score - 2) "
            "and must become exp(score - 5): multiply by exp(M_old - M_new).",
        ),
        kind="number",
        decimals=4,
    ),
}
