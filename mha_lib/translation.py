"""A hand-built cross-attention example: a French decoder reading an English sentence.

In a translation model the encoder reads the source sentence (here English)
and the decoder writes the translation (here French). In the decoder's
**cross-attention**, the queries come from the French words written so far and
the keys and values from the encoder's English output (the "memory"). A
trained model learns W^Q and W^K such that a French word's query matches the
key of the English word it translates; this module builds such a layer by
hand, so that its pictures mean something.

Each token's vector has d_model = 16 entries: 8 "meaning" entries (one
direction per concept: THE, BLACK, CAT, BE, SLEEP, shared by both languages)
and 8 "position" entries (a one-hot of the word's place in its sentence).
Two heads, d_k = 8:

- head 1, **meaning**: W^Q and W^K both read the meaning entries, so the score
  is large exactly when two words share a concept ("chat" finds "cat", even
  though "cat" is the third English word and "chat" the second French one);
- head 2, **position**: W^Q and W^K read the position entries, so each French
  word looks at the English word in the same place, which is wrong as soon as
  the word order differs ("noir chat" against "black cat").

W^V of both heads copies the meaning entries and W^O is the identity, so the
output row of a French word is [meaning fetched by head 1, meaning fetched by
head 2].

numpy only. Notebook: 12 attention in today's models (cross-attention).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .params import MHAParams, _rng_from_seed

__all__ = ["TranslationExample", "translation_example", "CONCEPTS"]

CONCEPTS = ("THE", "BLACK", "CAT", "BE", "SLEEP")
_ENGLISH = (("the", ("THE",)), ("black", ("BLACK",)), ("cat", ("CAT",)), ("is", ("BE",)), ("sleeping", ("SLEEP",)))
_FRENCH = (("le", ("THE",)), ("chat", ("CAT",)), ("noir", ("BLACK",)), ("dort", ("BE", "SLEEP")))
_HALF = 8  # meaning entries, then position entries
_SHARPNESS = 8.0  # the score of a perfect match


@dataclass(frozen=True)
class TranslationExample:
    """The pieces of :func:`translation_example`.

    Attributes
    ----------
    tokens : list of str
        The French words (queries), n = 4.
    memory_tokens : list of str
        The English words (keys and values), m = 5.
    X : ndarray, shape (4, 16)
        The French words' vectors (the decoder's input to cross-attention).
    memory : ndarray, shape (5, 16)
        The English words' vectors (the encoder's output).
    params : MHAParams
        Two heads, d_k = d_v = 8.
    roles : list of str
        What each head does, one sentence per head.
    meaning : ndarray, shape (5, 8)
        The unit vector of each concept in :data:`CONCEPTS` (rows are orthonormal).
    """

    tokens: list
    memory_tokens: list
    X: np.ndarray
    memory: np.ndarray
    params: MHAParams
    roles: list
    meaning: np.ndarray


def _vectors(words, meaning):
    rows = []
    for p, (_, concepts) in enumerate(words):
        u = sum(meaning[CONCEPTS.index(c)] for c in concepts)
        u = u / np.linalg.norm(u)  # "dort" = BE and SLEEP in one word: their average direction
        position = np.eye(_HALF)[p]  # one-hot place in the sentence
        rows.append(np.concatenate([u, position]))  # (16,)
    return np.array(rows)


def translation_example(seed=0):
    """English "the black cat is sleeping" (memory) and French "le chat noir dort" (queries).

    Parameters
    ----------
    seed : int or numpy.random.Generator, default 0
        Draws the concept directions (a random orthonormal set); a whole
        number of 0 or more.

    Returns
    -------
    TranslationExample

    Examples
    --------
    >>> from mha_lib import multi_head_attention
    >>> ex = translation_example()
    >>> r = multi_head_attention(ex.X, ex.params, memory=ex.memory)
    >>> r.weights.shape  # (h, n French words, m English words)
    (2, 4, 5)
    >>> ex.memory_tokens[int(r.weights[0, 1].argmax())]  # where "chat" looks in the meaning head
    'cat'
    """
    rng = _rng_from_seed(seed, "translation_example")
    q, _ = np.linalg.qr(rng.normal(size=(_HALF, _HALF)))  # (8, 8) orthogonal
    meaning = q[: len(CONCEPTS)]  # (5, 8): orthonormal concept directions
    X = _vectors(_FRENCH, meaning)  # (4, 16)
    memory = _vectors(_ENGLISH, meaning)  # (5, 16)
    d_model, d_k = 2 * _HALF, _HALF
    read_meaning = np.eye(d_model)[:, :_HALF]  # (16, 8): picks the meaning entries
    read_position = np.eye(d_model)[:, _HALF:]  # (16, 8): picks the position entries
    scale = _SHARPNESS * np.sqrt(d_k)  # so that a perfect match scores _SHARPNESS after the 1/sqrt(d_k)
    params = MHAParams(
        W_q=np.stack([scale * read_meaning, scale * read_position]),  # (2, 16, 8)
        W_k=np.stack([read_meaning, read_position]),  # (2, 16, 8)
        W_v=np.stack([read_meaning, read_meaning]),  # (2, 16, 8): both heads fetch meanings
        W_o=np.eye(d_model),  # (2*8, 16): output = [head 1's fetched meaning, head 2's]
    )
    roles = [
        "meaning: each French word looks for the English word with the same meaning",
        "position: each French word looks at the English word in the same place",
    ]
    return TranslationExample(
        tokens=[w for w, _ in _FRENCH],
        memory_tokens=[w for w, _ in _ENGLISH],
        X=X,
        memory=memory,
        params=params,
        roles=roles,
        meaning=meaning,
    )
