"""Heads with a meaning, built by hand, and why several heads beat one.

Random parameters (the running example) make heads whose patterns mean
nothing. Here the parameters are *chosen*, so that each head does one job a
student can name and check:

    head 1  previous token   each token looks at the token just before it
    head 2  same word        a word looks at every occurrence of itself
    head 3  first token      every token looks at the first token
    head 4  next token       each token looks at the token just after it

The trick is always the same: a score is a dot product ``q . k``, large
exactly when the query and the key point the same way. So W^Q turns each
token into "what I am looking for" and W^K into "what I am", written in the
same coordinates; where they match, the score is large and the softmax puts
almost all the weight there.

:func:`two_heads_demo` is the paper's argument for several heads, on numbers:
one head can only *average* the values it attends to, two heads can each
fetch one of them exactly.

Shape letters: n tokens, d_model embedding size, h heads, d_k query/key
size, d_v value size.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import numpy as np

from ._checks import shown
from .attention import attention_scores, output_projection, scaled_dot_product_attention
from .data import embed_tokens, tokenize
from .params import MHAParams

__all__ = [
    "DesignedExample",
    "designed_example",
    "closest_words",
    "output_words",
    "TwoHeadsDemo",
    "two_heads_demo",
    "DESIGNED_SENTENCE",
    "DESIGNED_ROLES",
    "MAX_DESIGNED_TOKENS",
    "SoftLookup",
    "soft_lookup_example",
]

DESIGNED_SENTENCE = "the cat saw the dog"
D_WORD = 16  # columns 0..15 of X: what the word is
MAX_DESIGNED_TOKENS = 16  # columns 16..31 of X: where it is, one column per position
D_MODEL = D_WORD + MAX_DESIGNED_TOKENS
D_HEAD = 16  # d_k = d_v = 16 (chosen, not d_model / h: the paper allows any d_k)

POSITION_STRENGTH = 7.0  # previous/next/first-token heads: a match scores 7*7/sqrt(16) = 12.25
SELF_STRENGTH = 3.5  # previous/next heads: a weaker pull to the token itself (7*3.5/4 = 6.125)
WORD_STRENGTH = 10.0  # same-word head: identical words score 10*10/4 = 25, other words 25 cos(angle)

DESIGNED_ROLES = ["previous token", "same word", "first token", "next token"]
_EXPLANATIONS = (
    "Previous token: the query of the token at position p is 'position p-1' (strongly) plus 'position p' "
    "(weakly); every key is its own position. So each token puts almost all its weight on the token before "
    "it, and the first token, which has nobody before it, on itself.",
    "Same word: query and key are both the word's own features. Two occurrences of one word have identical "
    "features, so they match each other (and themselves) perfectly; different words match only a little.",
    "First token: every token's query is 'position 0' (the first, counting from 0), and only the first token's "
    "key is 'position 0'. "
    "So every token looks at the first token (real models have such heads; they park their attention "
    "there when nothing else is relevant).",
    "Next token: like the previous-token head, shifted the other way: the query is 'position p+1' (strongly) "
    "plus 'position p' (weakly). The last token, with nobody after it, looks at itself.",
)


@dataclass(frozen=True)
class DesignedExample:
    """A sentence, its input X and a 4-head layer whose heads have named jobs.

    Attributes
    ----------
    tokens : tuple of str
        The lower-cased words.
    X : ndarray, shape (n, 32)
        Columns 0-15: the word's features (a fixed unit vector per word, the
        same wherever the word appears). Columns 16-31: the position, a 1 in
        column 16 + p for the token at position p (counting from 0).
    params : MHAParams
        h = 4 heads, d_model = 32, d_k = d_v = 16, no biases. Accepted by
        :func:`mha_lib.multi_head_attention`.
    roles : list of str
        One short name per head: ``DESIGNED_ROLES``.
    explanations : list of str
        One paragraph per head: how its W^Q and W^K make it do its job.
    """

    tokens: tuple[str, ...]
    X: np.ndarray
    params: MHAParams
    roles: list[str]
    explanations: list[str]


PAD_TOKEN = "[PAD]"  # the padding token of the designed layer's sentences, as BERT-like models write it


def _word_features(tokens):
    """(n, 16): each word's first 16 stand-in embedding numbers, scaled to length 1."""
    E = embed_tokens(tokens, D_WORD)  # (n, 16), deterministic per word
    return E / np.linalg.norm(E, axis=1, keepdims=True)


def _designed_params():
    """The four heads' parameters; they do not depend on the sentence."""
    w, p = slice(0, D_WORD), D_WORD  # word columns; position p lives in column D_WORD + p
    W_q = np.zeros((4, D_MODEL, D_HEAD))
    W_k = np.zeros((4, D_MODEL, D_HEAD))
    W_v = np.zeros((4, D_MODEL, D_HEAD))
    for pos in range(MAX_DESIGNED_TOKENS):
        # Keys of the position heads: "I am position pos" (coordinate pos of the head's 16).
        for head in (0, 2, 3):
            W_k[head, p + pos, pos] = POSITION_STRENGTH if head != 2 or pos == 0 else 0.0
        # Head 0, previous token: "I look for position pos-1, and a little for myself".
        if pos >= 1:
            W_q[0, p + pos, pos - 1] = POSITION_STRENGTH
        W_q[0, p + pos, pos] = SELF_STRENGTH
        # Head 2, first token: every position asks for position 0.
        W_q[2, p + pos, 0] = POSITION_STRENGTH
        # Head 3, next token: "I look for position pos+1, and a little for myself".
        if pos + 1 < MAX_DESIGNED_TOKENS:
            W_q[3, p + pos, pos + 1] = POSITION_STRENGTH
        W_q[3, p + pos, pos] = SELF_STRENGTH
    # Head 1, same word: query and key are the word features themselves (times a strength).
    W_q[1, w, :] = WORD_STRENGTH * np.eye(D_WORD)
    W_k[1, w, :] = WORD_STRENGTH * np.eye(D_WORD)
    # Every head's value is the word it looks at: V_i = the word features.
    W_v[:, w, :] = np.eye(D_WORD)
    # W^O: each head writes into its own 8 output columns (head i: columns 8i..8i+7) the first 8 of
    # its 16 numbers, so the output row keeps what every head found side by side (not an average).
    W_o = np.zeros((4 * D_HEAD, D_MODEL))
    per_head = D_MODEL // 4
    for head in range(4):
        W_o[head * D_HEAD : head * D_HEAD + per_head, head * per_head : (head + 1) * per_head] = np.eye(per_head)
    return MHAParams(W_q=W_q, W_k=W_k, W_v=W_v, W_o=W_o)


def _as_seen(sentence):
    """The sentence as it looks on screen: composed accents (NFC), invisible characters removed.

    A zero-width space, joiner or byte-order mark (Unicode "format" characters) and control characters other
    than white space are not seen, so a word typed or pasted with one must be the word the student sees:
    "the\u200b cat" is "the cat", and its "the" is the same word as any other "the" (the same-word head
    depends on it). "cafe" with a combining accent is the same word as "café" typed with one key.
    """
    text = unicodedata.normalize("NFC", sentence)
    return "".join(ch for ch in text if ch.isspace() or unicodedata.category(ch) not in ("Cf", "Cc"))


def designed_example(sentence: str | None = None) -> DesignedExample:
    """Tokens, an input X and a 4-head layer whose heads have a named, explained job.

    X has two parts, side by side. The **word features** (columns 0-15) say
    which word a token is: a fixed unit-length vector per word (the word's
    deterministic stand-in embedding, see :func:`mha_lib.embed_tokens`), so
    a repeated word gets the same features and any word is accepted. The
    **position features** (columns 16-31) say where it is: a single 1 in
    column 16 + p at position p.

    The heads (``.roles``) and how W^Q and W^K make them (``.explanations``):

    1. previous token: query "position p-1" (and weakly "p"), key "position j";
    2. same word: query and key are the word features;
    3. first token: every query is "position 0", only token 0's key matches;
    4. next token: query "position p+1" (and weakly "p").

    Every head's value is the word features, so a head's output row is the
    (weighted) word it found. W^O puts each head's finding in its own
    output columns (head i: columns 8i+1 to 8i+8, counting from 1; the first
    8 of its 16 numbers), so the output row holds all four findings side by
    side instead of their average.

    Notebook steps: 03 scores, 04 softmax, 05 value aggregation.

    Parameters
    ----------
    sentence : str, optional
        Words separated by spaces, at most 16 of them. Default
        ``"the cat saw the dog"`` (the word "the" appears twice). Invisible
        characters (zero-width spaces and the like) are dropped, so each word
        is the word as it is seen.

    Returns
    -------
    DesignedExample
        ``.tokens``, ``.X`` (n, 32), ``.params`` (h=4, d_k=d_v=16),
        ``.roles`` (4 names) and ``.explanations``.

    Examples
    --------
    >>> from mha_lib import multi_head_attention
    >>> ex = designed_example()
    >>> ex.tokens, ex.roles[0]
    (('the', 'cat', 'saw', 'the', 'dog'), 'previous token')
    >>> w = multi_head_attention(ex.X, ex.params).weights  # (4, 5, 5)
    >>> int(w[0, 2].argmax())  # "saw" looks at "cat" in the previous-token head
    1
    """
    if sentence is None:
        sentence = DESIGNED_SENTENCE
    if not isinstance(sentence, str):
        raise TypeError(
            f"designed_example: sentence must be a string of words, got {type(sentence).__name__}; "
            "e.g. designed_example('the cat saw the dog')"
        )
    visible = _as_seen(sentence)
    if not visible.strip():
        invisible = " (it holds only invisible characters, such as zero-width spaces)" if sentence.strip() else ""
        raise ValueError(f"designed_example: the sentence is empty{invisible}; type at least one word")
    # "PAD" in capitals (the series' padding marker) or "[PAD]" is the padding token, written "[PAD]" as a real
    # model writes it; every other word is lower-cased, so the real word "pad" stays a word.
    tokens = [
        PAD_TOKEN if word in ("PAD", PAD_TOKEN) else token
        for word, token in zip(visible.split(), tokenize(visible), strict=False)
    ]
    if len(tokens) > MAX_DESIGNED_TOKENS:
        raise ValueError(
            f"designed_example: the sentence has {len(tokens)} words, but X has position columns for at most "
            f"{MAX_DESIGNED_TOKENS}; use a shorter sentence"
        )
    n = len(tokens)
    X = np.zeros((n, D_MODEL))
    X[:, :D_WORD] = _word_features(tokens)  # (n, 16) word features
    X[np.arange(n), D_WORD + np.arange(n)] = 1.0  # (n, 16) one-hot positions
    return DesignedExample(
        tokens=tuple(tokens),
        X=X,
        params=_designed_params(),
        roles=list(DESIGNED_ROLES),
        explanations=list(_EXPLANATIONS),
    )


def closest_words(example: DesignedExample, rows: np.ndarray) -> tuple[list[list[str]], np.ndarray]:
    """For each head and token: the word whose value row is closest to ``rows``, and how close.

    In the designed layer every head's value is the word itself, so an output
    row that is (almost) one word's value row can be read back as that word:
    the previous-token head hands "saw" the word "cat".

    Notebook steps: 05 value aggregation, 06 concatenation.

    Parameters
    ----------
    example : DesignedExample
        The sentence and layer, from :func:`designed_example`.
    rows : ndarray, shape (h, n, d_v)
        One row per head and token, e.g. ``multi_head_attention(example.X,
        example.params).heads``.

    Returns
    -------
    words : list of list of str
        ``words[i][m]``: the word whose value row in head i is closest to ``rows[i, m]``.
    distances : ndarray, shape (h, n)
        The straight-line distance to it (a value row has length 1).

    Examples
    --------
    >>> from mha_lib import multi_head_attention
    >>> ex = designed_example()
    >>> words, dist = closest_words(ex, multi_head_attention(ex.X, ex.params).heads)
    >>> words[0][2], bool(dist[0, 2] < 0.01)  # the previous-token head hands "saw" the word "cat"
    ('cat', True)
    """
    if not isinstance(example, DesignedExample):
        raise TypeError(
            f"closest_words: example must be a DesignedExample (from designed_example()), got {type(example).__name__}"
        )
    rows = np.asarray(rows, dtype=float)
    n, h = len(example.tokens), example.params.h
    if rows.ndim != 3 or rows.shape[:2] != (h, n):
        raise ValueError(
            f"closest_words: rows must have shape (h, n, d_v) = ({h}, {n}, d_v) for this layer, "
            f"got {rows.shape}; pass multi_head_attention(example.X, example.params).heads"
        )
    words = list(dict.fromkeys(example.tokens))  # each different word once, in sentence order
    first = [example.tokens.index(w) for w in words]
    V = np.einsum("nd,hde->hne", example.X, example.params.W_v)[:, first]  # (h, words, d_v): each word's value
    if V.shape[-1] != rows.shape[-1]:
        raise ValueError(
            f"closest_words: rows have {rows.shape[-1]} numbers each, the layer's values "
            f"{V.shape[-1]}; pass multi_head_attention(example.X, example.params).heads"
        )
    dist = np.linalg.norm(rows[:, :, None, :] - V[:, None, :, :], axis=-1)  # (h, n, words)
    nearest = dist.argmin(axis=-1)  # (h, n)
    return ([[words[k] for k in head] for head in nearest], np.take_along_axis(dist, nearest[..., None], axis=-1)[..., 0])


def output_words(example: DesignedExample, output: np.ndarray) -> tuple[list[list[str]], np.ndarray]:
    """For each head and token: the word written in that head's block of the layer's output row.

    The designed W^O writes what head i found (the first 8 numbers of the
    word it fetched) into output columns 8i+1 to 8i+8, counting from 1. So
    each block of an output row can be read back as a word: the correct
    layer's row of "saw" reads "cat", "saw", "the", "the" (previous token,
    same word, first token, next token). A layer with a bug reads otherwise.

    Notebook step: 07 output projection (debugging a layer).

    Parameters
    ----------
    example : DesignedExample
        The sentence and layer, from :func:`designed_example`.
    output : ndarray, shape (n, d_model)
        A layer's output for ``example.X``, e.g. ``multi_head_attention(example.X, example.params).output``.

    Returns
    -------
    words : list of list of str
        ``words[i][m]``: the word in head i's block of token m's output row (the word whose value, written by
        head i's block of W^O, is closest).
    distances : ndarray, shape (h, n)
        The straight-line distance to it (0 for an exact copy).

    Examples
    --------
    >>> from mha_lib import multi_head_attention
    >>> ex = designed_example()
    >>> words, dist = output_words(ex, multi_head_attention(ex.X, ex.params).output)
    >>> [words[i][2] for i in range(4)]  # the output row of "saw"
    ['cat', 'saw', 'the', 'the']
    """
    if not isinstance(example, DesignedExample):
        raise TypeError(
            f"output_words: example must be a DesignedExample (from designed_example()), got {type(example).__name__}"
        )
    output = np.asarray(output, dtype=float)
    n, p = len(example.tokens), example.params
    if output.shape != (n, p.d_model):
        raise ValueError(
            f"output_words: output must have shape (n, d_model) = ({n}, {p.d_model}) for this layer, "
            f"got {output.shape}; pass multi_head_attention(example.X, example.params).output"
        )
    per = p.d_model // p.h  # output columns per head
    words = list(dict.fromkeys(example.tokens))
    first = [example.tokens.index(w) for w in words]
    V = np.einsum("nd,hde->hne", example.X, p.W_v)[:, first]  # (h, words, d_v): each word's value in each head
    W_o = p.W_o.reshape(p.h, -1, p.d_model)  # (h, d_v, d_model): W^O_i, the rows head i's columns meet
    written = np.einsum("hwe,hed->hwd", V, W_o)  # (h, words, d_model): what head i writes for each word
    cols = np.arange(p.d_model).reshape(p.h, per)  # (h, per): head i's block of output columns
    ours = output[:, cols]  # (n, h, per)
    theirs = np.take_along_axis(written, cols[:, None, :], axis=-1)  # (h, words, per)
    dist = np.linalg.norm(ours.transpose(1, 0, 2)[:, :, None, :] - theirs[:, None, :, :], axis=-1)  # (h, n, words)
    nearest = dist.argmin(axis=-1)  # (h, n)
    return ([[words[k] for k in head] for head in nearest], np.take_along_axis(dist, nearest[..., None], axis=-1)[..., 0])


# --------------------------------------------------------------------------- why several heads


@dataclass(frozen=True)
class TwoHeadsDemo:
    """One head against two on "cat chased mouse": the verb needs both who and whom.

    The values are 2-D so they can be drawn: v(cat) = (1, 0), v(mouse) =
    (0, 1), v(chased) = (0, 0). Everything is about the row of "chased".

    Attributes
    ----------
    tokens : tuple of str
    values : ndarray, shape (2, 2)
        v(cat) and v(mouse), the two values the verb needs.
    one_head_weights : ndarray, shape (3,)
        The single head's weights for "chased" (about 0.5, 0, 0.5).
    one_head_output : ndarray, shape (2,)
        Its output: the blur of the two values (about (0.5, 0.5)).
    one_head_distances : ndarray, shape (2,)
        Distance of that output from v(cat) and from v(mouse) (both about 0.71).
    two_heads_weights : ndarray, shape (2, 3)
        Head "who" puts its weight on cat, head "whom" on mouse.
    two_heads_outputs : ndarray, shape (2, 2)
        Row i: head i's output for "chased".
    two_heads_distances : ndarray, shape (2, 2)
        ``[i, j]``: distance of head i's output from value j (about 0 on the diagonal).
    W_o : ndarray, shape (4, 4)
        The output projection that keeps both heads' findings: the identity,
        so columns 1-2 of the output say who and columns 3-4 say whom.
    output : ndarray, shape (4,)
        The two-head layer's output for "chased": Concat(head_1, head_2) W^O.
    swapped_one_head_output : ndarray, shape (2,)
        The single head's output for "mouse chased cat": the same blur.
    swapped_output : ndarray, shape (4,)
        The two-head layer's output for "mouse chased cat": who and whom swapped.
    """

    tokens: tuple[str, ...]
    values: np.ndarray
    one_head_weights: np.ndarray
    one_head_output: np.ndarray
    one_head_distances: np.ndarray
    two_heads_weights: np.ndarray
    two_heads_outputs: np.ndarray
    two_heads_distances: np.ndarray
    W_o: np.ndarray
    output: np.ndarray
    swapped_one_head_output: np.ndarray
    swapped_output: np.ndarray


def two_heads_demo(strength: float = 5.0) -> TwoHeadsDemo:
    """Why several heads: one head averages, two heads fetch.

    In "cat chased mouse" the verb needs two things: who chased (cat) and
    whom (mouse). Queries, keys and values are built by hand (d_k = 3): each
    key says "I am position j"; the values are v(cat) = (1, 0), v(chased) =
    (0, 0), v(mouse) = (0, 1).

    - **One head** whose query for "chased" asks for positions 1 and 3 gives
      them equal scores, so weights 0.5 / 0.5 and the output
      0.5 v(cat) + 0.5 v(mouse) = (0.5, 0.5): a blur that is neither, at
      distance 0.71 from both, and the same for "mouse chased cat".
    - **Two heads**, "who" asking for the token before and "whom" for the
      token after, each put weight about 1 on one token and return its value
      exactly. W^O (here the identity on the 4 concatenated columns) keeps
      both, so "mouse chased cat" gives a different output.

    The original paper: "with a single attention head, averaging inhibits
    this" (jointly attending to information from different places).

    Notebook step: 07 output projection.

    Parameters
    ----------
    strength : float, default 5.0
        Length of the query and key vectors. A match scores
        strength**2 / sqrt(3) (14.4 by default); larger is sharper.

    Returns
    -------
    TwoHeadsDemo

    Examples
    --------
    >>> demo = two_heads_demo()
    >>> demo.one_head_output.round(3), demo.one_head_distances.round(3)
    (array([0.5, 0.5]), array([0.707, 0.707]))
    >>> demo.two_heads_distances.round(4)
    array([[0.    , 1.4142],
           [1.4142, 0.    ]])
    """
    if isinstance(strength, bool) or not isinstance(strength, (int, float, np.integer, np.floating)):
        raise TypeError(f"two_heads_demo: strength must be a number, got {shown(strength)}")
    if not np.isfinite(strength) or not 1.0 <= strength <= 20.0:
        raise ValueError(f"two_heads_demo: strength={strength} must be between 1 and 20 (default 5)")
    s = float(strength)
    tokens = ("cat", "chased", "mouse")
    V = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])  # (3, d_v=2)
    K = s * np.eye(3)  # (3, d_k=3): key j says "I am position j"
    # One head: cat and mouse look at themselves; chased asks for positions 0 AND 2.
    Q_one = s * np.array([[1.0, 0, 0], [1, 0, 1], [0, 0, 1]])  # (3, 3)
    # Two heads: "who" asks for the token before (the first token: itself), "whom" for the token after.
    Q_who = s * np.array([[1.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    Q_whom = s * np.array([[0.0, 1, 0], [0, 0, 1], [0, 0, 1]])
    Q_two = np.stack([Q_who, Q_whom])  # (2, 3, 3)
    K_two = np.stack([K, K])  # (2, 3, 3)
    W_o = np.eye(4)  # (h*d_v, d_model) = (4, 4)

    def run(V):
        out1, w1 = scaled_dot_product_attention(Q_one, K, V)  # (3, 2), (3, 3)
        heads, w2 = scaled_dot_product_attention(Q_two, K_two, np.stack([V, V]))  # (2, 3, 2), (2, 3, 3)
        concat = np.concatenate([heads[0], heads[1]], axis=-1)  # (3, 4)
        return out1, w1, heads, w2, output_projection(concat, W_o)  # (3, 4) @ (4, 4) -> (3, 4)

    out1, w1, heads, w2, out = run(V)
    values = V[[0, 2]]  # (2, 2): v(cat), v(mouse)
    one = out1[1]  # the row of "chased"
    two = heads[:, 1]  # (2, 2): each head's row of "chased"
    swapped = run(V[::-1])  # "mouse chased cat": the values trade places
    return TwoHeadsDemo(
        tokens=tokens,
        values=values,
        one_head_weights=w1[1],
        one_head_output=one,
        one_head_distances=np.linalg.norm(values - one, axis=1),
        two_heads_weights=w2[:, 1],
        two_heads_outputs=two,
        two_heads_distances=np.linalg.norm(two[:, None, :] - values[None, :, :], axis=-1),
        W_o=W_o,
        output=out[1],
        swapped_one_head_output=swapped[0][1],
        swapped_output=swapped[4][1],
    )


# --------------------------------------------------------------------------- what attention is for


@dataclass(frozen=True)
class SoftLookup:
    """Attention as a soft dictionary lookup, on four words and 2-D vectors you can check by hand.

    Queries and keys use two coordinates with a meaning: (is a thing, is an action). Values use two
    other ones: (means "cat", means "sitting"). Scores are plain dot products (``scale=1``), so every
    number can be checked with a calculator.

    Attributes
    ----------
    tokens : tuple of str
        ``("the", "cat", "sat", "it")``.
    query_axes, value_axes : tuple of str
        What the two coordinates of the queries and keys, and of the values, mean.
    Q, K : ndarray, shape (4, 2)
        Row m: what token m looks for (query) and what it offers (key).
    V : ndarray, shape (4, 2)
        Row j: what token j passes on when it is looked at.
    scores : ndarray, shape (4, 4)
        ``Q K^T``: how well query m matches key j (not divided by sqrt(d_k)).
    weights : ndarray, shape (4, 4)
        The softmax of each row of scores: positive, each row sums to 1.
    output : ndarray, shape (4, 2)
        ``weights V``: what each token receives.
    """

    tokens: tuple[str, ...]
    query_axes: tuple[str, ...]
    value_axes: tuple[str, ...]
    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    output: np.ndarray


def soft_lookup_example() -> SoftLookup:
    """ "it" finds the noun it refers to: attention as a soft lookup, by hand.

    In "the cat sat it" (four words of "the cat sat down because it was tired"),
    the query of "it" is (3, 0): "I look for a thing". The keys say what each
    word offers: "the" (0, 0) nothing, "cat" (1, 0) a thing, "sat" (0, 1) an
    action, "it" (0.5, 0) half a thing (a pronoun). The scores of "it" are
    0, 3, 0 and 1.5; the softmax gives "cat" e^3 / (1 + e^3 + 1 + e^1.5) =
    0.76 of the weight, and "it" receives mostly the value of "cat", (1, 0):
    its output is (0.76, 0.04). The other rows: "the" and "sat" also look for
    a thing, "cat" looks for an action.

    Notebook step: 00 overview (before the matrices).

    Returns
    -------
    SoftLookup

    Examples
    --------
    >>> look = soft_lookup_example()
    >>> look.scores[3], look.weights[3].round(3)
    (array([0. , 3. , 0. , 1.5]), array([0.038, 0.756, 0.038, 0.169]))
    >>> look.output[3].round(2)
    array([0.76, 0.04])
    """
    tokens = ("the", "cat", "sat", "it")
    Q = np.array(
        [
            [3.0, 0.0],  # the: looks for a thing (its noun)
            [0.0, 3.0],  # cat: looks for an action (what it does)
            [3.0, 0.0],  # sat: looks for a thing (who sat)
            [3.0, 0.0],
        ]
    )  # it:  looks for a thing (what it refers to)
    K = np.array(
        [
            [0.0, 0.0],  # the: offers nothing
            [1.0, 0.0],  # cat: a thing
            [0.0, 1.0],  # sat: an action
            [0.5, 0.0],
        ]
    )  # it:  half a thing
    V = np.array(
        [
            [0.0, 0.0],  # the: no meaning of its own
            [1.0, 0.0],  # cat: "cat"
            [0.0, 1.0],  # sat: "sitting"
            [0.0, 0.0],
        ]
    )  # it:  no meaning of its own
    scores = attention_scores(Q, K, scale=1.0)  # (4, 2) @ (2, 4) -> (4, 4), plain dot products
    output, weights = scaled_dot_product_attention(Q, K, V, scale=1.0)  # (4, 2), (4, 4)
    return SoftLookup(
        tokens=tokens,
        query_axes=("is a thing", "is an action"),
        value_axes=('means "cat"', 'means "sitting"'),
        Q=Q,
        K=K,
        V=V,
        scores=scores,
        weights=weights,
        output=output,
    )
