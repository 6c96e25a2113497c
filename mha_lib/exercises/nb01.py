"""Self-checks of notebook 01 (embeddings)."""

import numpy as np

from .. import embed_tokens, tokenize
from .answers import Exercise

_SENTENCE = "the cat sat on the mat"


def _cosine(a, b):
    E = embed_tokens([a, b], 512)  # (2, 512)
    return float(E[0] @ E[1] / (np.linalg.norm(E[0]) * np.linalg.norm(E[1])))


EXERCISES = {
    "predict_cosine": Exercise(
        question="Predict before you run the cell: in this series' embeddings (d_model = 512, random numbers seeded "
        "by the word), what is the cosine similarity of 'cat' and 'dog'? A guess within 0.1 of the exact value "
        "counts.",
        answer=lambda: _cosine("cat", "dog"),
        hint=(
            "These rows carry no meaning: 'cat' is no closer to 'dog' than to any other word. Two unrelated "
            "random directions in 512 dimensions are almost perpendicular: think of the cosine of a right angle.",
            "Nearer 0 than you think: the exact value is about -0.04. Random directions in 512 dimensions have a "
            "cosine of about 1/sqrt(512) = 0.044 in size, either sign, so 0 is close enough and 0.1 is already "
            "too far.",
        ),
        kind="number",
        rtol=0.0,
        atol=0.1,
        solution=(
            "The rows are random numbers seeded by the word, so 'cat' and 'dog' are two unrelated random directions "
            "in 512 dimensions; their cosine is typically about 1/sqrt(512) = 0.044 in size (here -0.043). Trained "
            "embeddings would give clearly more."
        ),
    ),
    "X_shape": Exercise(
        question=f"What shape is X for the sentence '{_SENTENCE}' with d_model = 16? Answer with a tuple.",
        answer=lambda: embed_tokens(tokenize(_SENTENCE), 16).shape,
        hint=(
            "X has one row per token of the sentence and one column per number of a token's embedding.",
            "Count the words of the sentence, repeats included (the rows), and take d_model = 16 (the columns): (n, 16).",
        ),
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
        hint=(
            "A matrix holds one number in each of its cells.",
            "4 rows times 512 columns.",
        ),
        kind="number",
        rtol=0.0,
        atol=0.0,
    ),
}
