"""Self-check questions for notebook 09 (trained heads: all-MiniLM-L6-v2)."""

import numpy as np

from .. import minilm
from . import Exercise

ANIMAL = "The animal didn't cross the street because it was too tired."
WIDE = ANIMAL.replace("tired", "wide")


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


def _wide_street_head():
    out = minilm.run_minilm(ANIMAL.replace("tired", "wide"))
    row = out.attentions[:, :, out.tokens.index("it"), out.tokens.index("street")]  # (L, h)
    layer, head = np.unravel_index(np.argmax(row), row.shape)
    return int(layer) + 1, int(head) + 1


EXERCISES = {
    "weights_count": Exercise(
        question="all-MiniLM-L6-v2 has 6 layers of 12 heads. The sentence 'The animal didn't cross the street "
                 "because it was too tired.' becomes 16 tokens. How many attention weights (single numbers) does "
                 "one run of the model compute, over all layers and heads?",
        answer=lambda: int(np.prod(_animal().attentions.shape)),
        hint=(
            "Each head makes one weight for each (query, key) pair of word pieces, in every layer.",
            "Each head makes an n x n matrix with n = 16; there are 6 x 12 heads.",
        ),
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
        solution="The 'wide' line of layer 4, head 2 reads it -> animal 0.28, it -> street 0.12: still 'animal'. "
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
    ),
}
