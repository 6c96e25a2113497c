"""Self-check questions for notebook 09 (trained heads: all-MiniLM-L6-v2)."""

import numpy as np

from .. import minilm
from .answers import Exercise

ANIMAL = "The animal didn't cross the street because it was too tired."
WIDE = ANIMAL.replace("tired", "wide")
LONG = ANIMAL[:-1] + ", so it lay down and slept under the old tree by the road."  # 30 tokens


def _animal():
    return minilm.run_minilm(ANIMAL)


def _cls_heads_layer5():
    out = _animal()
    cls = minilm.head_patterns(out.attentions, out.tokens)["[CLS]"]  # (L, h)
    return int((cls[4] > 0.5).sum())


def _wide_layer4_head2():
    """Where layer 4, head 2 sends more of "it"'s attention in the 'wide' sentence: 'animal' or 'street'."""
    out = minilm.run_minilm(WIDE)
    row = out.attentions[3, 1, out.tokens.index("it")]  # layer 4, head 2: (n,)
    return "animal" if row[out.tokens.index("animal")] > row[out.tokens.index("street")] else "street"


def _next_token_head():
    """The head of layer 2 whose word pieces give the next token the most weight, on the classic sentence."""
    out = _animal()
    m = np.arange(1, len(out.tokens) - 1)  # the word pieces
    next_weight = out.attentions[1][:, m, m + 1].mean(axis=1)  # (h, n - 2) -> (h,)
    return int(np.argmax(next_weight)) + 1


def _wide_street_head():
    out = minilm.run_minilm(WIDE)
    row = out.attentions[:, :, out.tokens.index("it"), out.tokens.index("street")]  # (L, h)
    layer, head = np.unravel_index(np.argmax(row), row.shape)
    return int(layer) + 1, int(head) + 1


def _street_with_tired():
    """In the head of _wide_street_head, the weight from 'it' to 'street' in the 'tired' sentence."""
    layer, head = _wide_street_head()
    out = _animal()
    return float(out.attentions[layer - 1, head - 1, out.tokens.index("it"), out.tokens.index("street")])


def _counted_from_0(answer):
    """The note for (layer, head) counted from 0, as numpy indexes, where the question counts from 1."""
    got = tuple(int(a) for a in answer) if isinstance(answer, (tuple, list)) and len(answer) == 2 else None
    layer, head = _wide_street_head()
    if got == (layer - 1, head - 1):
        return "Counted from 0? These are numpy's indices; the question numbers layers and heads from 1."
    return None


EXERCISES = {
    "weights_count": Exercise(
        question="all-MiniLM-L6-v2 has 6 layers of 12 heads. The classic sentence made 16 tokens; a longer one, "
        f"{LONG!r}, makes 30 ([CLS] and [SEP] included). How many attention weights (single numbers) "
        "does one run of the model on it compute, over all layers and heads?",
        answer=lambda: int(np.prod(minilm.run_minilm(LONG).attentions.shape)),
        hint=(
            "Each head makes one weight for each (query, key) pair of tokens, in every layer.",
            "Each head makes an n x n matrix with n = 30; there are 6 x 12 heads. (You can check with "
            "minilm.run_minilm(...).attentions.shape.)",
        ),
        rtol=0.0,  # a count: exactly (the default 1% let 64,500 pass for 64,800)
        atol=0.5,
        solution="30 x 30 = 900 weights per head, 6 layers x 12 heads = 72 heads: 72 * 900 = 64,800 "
        "(out.attentions.shape is (6, 12, 30, 30)). The count grows as n squared: the 16 tokens of the "
        "classic sentence made 72 * 256 = 18,432.",
    ),
    "next_token_head": Exercise(
        question="In the classic sentence, 'The animal didn't cross the street because it was too tired.', which "
        "head of layer 2 looks at the next token? For each head, average over the word pieces (not [CLS], "
        "not [SEP]) the weight each gives the token just after it; answer the head with the largest "
        "average, numbered from 1.",
        answer=_next_token_head,
        hint=(
            "One number per head: the weights on the line just above the diagonal (query m, key m + 1), averaged "
            "over the word pieces; then the position of the largest of the 12, counted from 1.",
            "next_weight = layer_2[:, m, m + 1].mean(axis=1) gives 12 numbers (axis 1 is the word pieces); the "
            "answer is int(np.argmax(next_weight)) + 1.",
        ),
        kind="choice",
        solution="next_weight = layer_2[:, m, m + 1].mean(axis=1) is at most 0.21 for eleven heads and 0.61 for "
        "head 9: np.argmax gives 8, so head 9 (heads are numbered from 1). Layer 2, head 9 is the "
        "next-token head; the table of section 4 finds it on all four sentences.",
    ),
    "cls_heads_layer5": Exercise(
        question="Take the classic sentence alone, 'The animal didn't cross the street because it was too tired.' "
        "(not the average over four sentences drawn in section 4). In how many of layer 5's 12 heads do "
        "its word pieces put more than half of their attention on [CLS], on average over the word pieces? "
        "(Run minilm.run_minilm on it; minilm.head_patterns gives the measures.)",
        answer=_cls_heads_layer5,
        hint=(
            "minilm.head_patterns measures, for each layer and head, how much attention the word pieces put on "
            "[CLS] on average; count the heads of layer 5 where that is more than half.",
            "out = minilm.run_minilm(ANIMAL); take minilm.head_patterns(out.attentions, out.tokens)['[CLS]'], row"
            " 4 (layer 5 counted from 1), and count the values above 0.5. The four-sentence average of section 4 "
            "gives another count: this question is about the one sentence.",
        ),
    ),
    "predict_wide": Exercise(
        question="Predict before you run the cell: in 'The animal didn't cross the street because it was too tired.', "
        "layer 4, head 2 sends 0.68 of the attention of 'it' to 'animal' and 0.05 to 'street'. Change 'tired' "
        "to 'wide' (now 'it' is the street). In that head, will 'it' give more weight to 'animal' or to "
        "'street'? Answer 'animal' or 'street'.",
        answer=_wide_layer4_head2,
        hint="Run the next cell and compare the two numbers on the line 'layer 4, head  2, 'wide''.",
        kind="choice",
        solution="The 'wide' line of layer 4, head 2 reads it -> animal 0.28, it -> street 0.12: still more on 'animal' "
        "than on 'street' (its largest weight now goes to [CLS], 0.33). "
        "The head links 'it' to the subject noun before it; it does not work out what 'it' means.",
    ),
    "wide_street_head": Exercise(
        question="In 'The animal didn't cross the street because it was too wide.', which head gives the largest "
        "weight from 'it' to 'street'? Answer (layer, head), both numbered from 1.",
        answer=_wide_street_head,
        hint=(
            "The model returns one n x n weight matrix per layer and head; you want the head in which one cell, "
            "'it' -> 'street', is largest.",
            "Run the model on the 'wide' sentence, take attentions[:, :, i_it, i_street] (a 6 x 12 table) and "
            "find its largest entry; add 1 to both indices.",
        ),
        kind="shape",
        diagnose=_counted_from_0,
    ),
    "street_with_tired": Exercise(
        question="Take the head of the previous question (the one that gives 'street' the largest weight from 'it' "
        "with 'wide'). How much weight does 'it' give 'street' in that head with the original word, "
        "'tired'? Two decimals.",
        answer=_street_with_tired,
        hint=(
            "The same cell of the same head, query 'it' and key 'street', but in the run on the sentence that "
            "ends with 'tired'; compare it with the 'wide' value.",
            "out = minilm.run_minilm(the classic sentence); out.attentions[layer - 1, head - 1, i_it, i_street] "
            "with (layer, head) your answer to the previous question and i_it = out.tokens.index('it'), "
            "i_street = out.tokens.index('street').",
        ),
        decimals=2,
        solution="Layer 6, head 2 gives 'street' 0.19 with 'tired' and 0.24 with 'wide': it already looked at "
        "'street' before the word changed (with 'tired', layer 6 head 6 even gives it 0.22). A rise of 0.05 "
        "is not the head working out that 'it' is now the street.",
    ),
}
