"""Self-checks of notebook 01 (embeddings)."""

import numpy as np

from .. import embed_tokens, tokenize
from . import Exercise

_SENTENCE = "the cat sat on the mat"

EXERCISES = {
    "X_shape": Exercise(
        question=f"What shape is X for the sentence '{_SENTENCE}' with d_model = 16? Answer with a tuple.",
        answer=lambda: embed_tokens(tokenize(_SENTENCE), 16).shape,
        hint="One row per token (count the words, repeats included), one column per embedding dimension.",
        kind="shape",
    ),
    "distinct_rows": Exercise(
        question=f"How many *different* rows does X have for '{_SENTENCE}'?",
        answer=lambda: len(np.unique(embed_tokens(tokenize(_SENTENCE), 16), axis=0)),
        hint="The same word always gets the same row. Which word appears twice?",
        kind="number",
        rtol=0.0,
        atol=0.0,
    ),
    "numbers_in_X": Exercise(
        question="How many numbers does the running example's X hold (4 tokens, d_model = 512)?",
        answer=lambda: embed_tokens(tokenize("humpty dumpty sat on"), 512).size,
        hint="Rows times columns.",
        kind="number",
        rtol=0.0,
        atol=0.0,
    ),
}
