"""Self-check questions for notebook 09 (trained heads: all-MiniLM-L6-v2)."""

import numpy as np

from .. import minilm
from . import Exercise

ANIMAL = "The animal didn't cross the street because it was too tired."


def _animal():
    return minilm.run_minilm(ANIMAL)


def _strongest(pattern):
    """(layer, head), numbered from 1, of the head with the largest measure ``pattern`` on ANIMAL."""
    out = _animal()
    values = minilm.head_patterns(out.attentions, out.tokens)[pattern]  # (L, h)
    layer, head = np.unravel_index(np.nanargmax(values), values.shape)
    return int(layer) + 1, int(head) + 1


def _it_to_animal():
    out = _animal()
    row = out.attentions[:, :, out.tokens.index("it"), out.tokens.index("animal")]  # (L, h)
    layer, head = np.unravel_index(np.argmax(row), row.shape)
    return int(layer) + 1, int(head) + 1


EXERCISES = {
    "weights_count": Exercise(
        question="all-MiniLM-L6-v2 has 6 layers of 12 heads. The sentence 'The animal didn't cross the street "
                 "because it was too tired.' becomes 16 tokens. How many attention weights (single numbers) does "
                 "one run of the model compute, over all layers and heads?",
        answer=lambda: int(np.prod(_animal().attentions.shape)),
        hint="Each head makes an n x n matrix; there are 6 x 12 heads.",
    ),
    "previous_head": Exercise(
        question="Which head puts (almost) all of each word's attention on the word just before it? "
                 "Answer (layer, head), both numbered from 1.",
        answer=lambda: _strongest("previous"),
        hint="Look for a bright line just below the diagonal in the grids, or at the 'previous' panel of the "
             "layers-by-heads summary.",
        kind="shape",
    ),
    "it_head": Exercise(
        question="In the 'animal ... tired' sentence, which head gives the largest weight from 'it' to 'animal'? "
                 "Answer (layer, head), both numbered from 1.",
        answer=_it_to_animal,
        hint="In the picture of where 'it' looks, find the brightest cell in the outlined 'animal' column.",
        kind="shape",
    ),
}
