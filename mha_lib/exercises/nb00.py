"""Self-checks of notebook 00 (overview)."""

from .. import init_params, load_running_example, multi_head_attention
from . import Exercise

EXERCISES = {
    "output_shape": Exercise(
        question="MultiHead(X) for 'humpty dumpty sat on' (X is 4 x 512, h = 8): what shape is the output? "
                 "Answer with a tuple, e.g. (4, 64).",
        answer=lambda: multi_head_attention(load_running_example().X, load_running_example().params).output.shape,
        hint="The output has one row per token and is the same size as X, so it can be added back to X.",
        kind="shape",
    ),
    "weights_shape": Exercise(
        question="With h = 4 heads instead of 8 (same X), what shape is the stack of all heads' attention "
                 "weights? Answer with a tuple (h, n, n).",
        answer=lambda: multi_head_attention(load_running_example().X, init_params(512, 4)).weights.shape,
        hint="Each head has one weight for every (query token, key token) pair: n x n per head.",
        kind="shape",
    ),
    "d_k_bert": Exercise(
        question="BERT-Base has d_model = 768 and h = 12 heads. What is d_k = d_model / h?",
        answer=lambda: init_params(768, 12).d_k,
        hint="Divide 768 by 12.",
        kind="number",
    ),
}
