"""Self-check questions for notebook 07 (output projection)."""

from .. import designed_example, load_running_example, multi_head_attention, parameter_count, two_heads_demo
from .answers import Exercise


def parameter_count_exercise(question, d_model, h, *, bias=False, idea_end, concrete, solution=""):
    """A "how many parameters does the layer have?" question (here and in notebook 08).

    The answer is ``parameter_count(d_model, h, bias=bias)["total"]``, a whole number that must be typed
    exactly. Every such question starts from the same idea, counting the numbers in the four matrices;
    ``idea_end`` finishes that first hint ("." or what else to look at), ``concrete`` is the second.
    """
    return Exercise(
        question=question,
        answer=lambda: parameter_count(d_model, h, bias=bias)["total"],
        hint=(
            "Count the numbers in the layer's four matrices, W^Q, W^K, W^V (all heads together) and W^O" + idea_end,
            concrete,
        ),
        rtol=0.0,
        atol=0.5,
        solution=solution,
    )


def _designed_output():
    ex = designed_example()
    return multi_head_attention(ex.X, ex.params).output  # (5, 32)


def _wo_block_shape():
    p = load_running_example().params
    return (p.W_o.shape[0] // p.h, p.W_o.shape[1])


EXERCISES = {
    "predict_blur": Exercise(
        question="Predict before you run the cell: one head gives 'chased' the weight 0.5 on 'cat' and 0.5 on "
        "'mouse', with v(cat) = (1, 0) and v(mouse) = (0, 1). How far (straight-line distance) is its "
        "output from v(cat)? Two decimals.",
        answer=lambda: two_heads_demo().one_head_distances[0],
        hint=(
            "The output is the weighted average of the two value rows; then measure the distance between two points.",
            "The output is 0.5 * (1, 0) + 0.5 * (0, 1). Then Pythagoras.",
        ),
        decimals=2,
        solution="The output is 0.5 (1, 0) + 0.5 (0, 1) = (0.5, 0.5). Its distance from (1, 0) is "
        "sqrt(0.5^2 + 0.5^2) = sqrt(0.5) = 0.71, and the same from (0, 1): halfway, neither one.",
    ),
    "wo_block_shape": Exercise(
        question="W^O of the running example is 512 x 512 and h = 8. Cut it into one block of rows per head: "
        "what is the shape of W^O_1, the block that head 1's columns are multiplied by? Give a tuple.",
        answer=_wo_block_shape,
        hint=(
            "In Concat @ W^O, each column of Concat meets one row of W^O.",
            "Head 1 owns d_v = 64 columns of Concat, so it meets 64 rows of W^O; each row is d_model long.",
        ),
        kind="shape",
        solution="Head 1 fills columns 1-64 of Concat; in Concat @ W^O those columns meet rows 1-64 of W^O, "
        "each 512 long: W^O_1 is (64, 512).",
    ),
    "count_h16": parameter_count_exercise(
        "d_model = 512 and d_k = d_v = d_model / h. How many parameters (no biases) does the layer have with h = 16 heads?",
        512,
        16,
        idea_end="; see what happens to d_k when h doubles.",
        concrete="d_k = d_v = 512 / 16 = 32: W^Q, W^K and W^V hold 16 * 512 * 32 numbers each, W^O (16 * 32) * 512. "
        "More heads means smaller heads: the total is 4 * d_model^2 for every h.",
        solution="d_k = d_v = 512 / 16 = 32. W^Q, W^K, W^V: 16 * 512 * 32 = 262,144 each; W^O: (16 * 32) x 512 = "
        "262,144. Total 4 * 512^2 = 1,048,576, exactly as for 8 heads.",
    ),
    "count_bert": parameter_count_exercise(
        "BERT-Base: d_model = 768, h = 12, d_k = 64, WITH biases. How many parameters does one attention layer have?",
        768,
        12,
        bias=True,
        idea_end=", then add one bias number per output column of each projection.",
        concrete="4 * 768^2 matrix entries plus 4 * 768 biases (b^Q, b^K, b^V for all heads together, and b^O).",
        solution="Matrices: 4 * 768^2 = 2,359,296. Biases: b^Q, b^K, b^V have 12 * 64 = 768 each and b^O has 768, "
        "so 4 * 768 = 3,072. Total 2,362,368.",
    ),
    "debug_layer": Exercise(
        question="Debug: buggy_layer(X, params) should compute the whole layer. Fix it as my_layer and pass "
        "my_layer(designed.X, designed.params), the output of the designed layer on 'the cat saw the "
        "dog': an array of shape (5, 32).",
        answer=_designed_output,
        hint=(
            "Read the buggy output with output_words: the blocks of a token's row hold words, but the wrong ones. "
            "Then compare the buggy function's steps, one at a time, with the intermediates of "
            "multi_head_attention(designed.X, designed.params) (.heads, .concat): where do they first differ?",
            "The heads are right; the concatenation is not. heads.reshape(n, h * d_v) without a transpose puts "
            "head 1's rows of several tokens side by side. Use mha_lib.concat_heads(heads), or "
            "heads.transpose(1, 0, 2).reshape(n, h * d_v).",
        ),
        kind="array",
        solution="The bug is the merge of the heads: heads.reshape(n, h * d_v) reads the (h, n, d_v) stack in "
        "stored order, head 1's rows first, so the row of 'the' holds head 1's outputs for 'the', 'cat', "
        "'saw' and 'the', and the row of 'saw' ends up with 'the | dog | the | the' instead of "
        "'cat | saw | the | the'. Shapes cannot catch it; the readable designed output and the "
        "intermediates of multi_head_attention can. Fixed: concat = mha_lib.concat_heads(heads), which is "
        "heads.transpose(1, 0, 2).reshape(n, h * d_v); my_layer(designed.X, designed.params) then equals "
        "multi_head_attention(designed.X, designed.params).output.",
    ),
}
