"""The explorer of notebook 09: all-MiniLM-L6-v2's 12 heads, layer by layer (a sentence's forward pass runs once)."""

import functools
from dataclasses import dataclass

import numpy as np

from .. import minilm
from . import toolkit
from .widget import heads_frame

MAX_SHOWN = 24  # tokens ([CLS] and [SEP] included) that a 12-panel grid can still label readably
DEFAULT_SENTENCE = "The animal didn't cross the street because it was too tired."
CLEAR = 0.4  # a head whose largest measure is below this is titled "no clear pattern"


@functools.lru_cache(maxsize=16)
def _forward(sentence, model):
    """``(tokens, attentions (L, h, n, n), patterns name -> (L, h))`` of one sentence, read-only (shared)."""
    tokens, _ = minilm.encode_tokens(sentence, model, truncate=MAX_SHOWN + 1)  # empty -> ValueError
    if len(tokens) > MAX_SHOWN:
        raise ValueError(
            f"the sentence has more than {MAX_SHOWN} tokens ([CLS] and [SEP] included); a grid of "
            f"12 heads cannot label more readably: shorten it"
        )
    out = minilm.run_minilm(sentence, model)
    patterns = minilm.head_patterns(out.attentions, out.tokens)  # name -> (L, h)
    for array in (out.attentions, *patterns.values()):
        array.setflags(write=False)
    return tuple(out.tokens), out.attentions, patterns


@dataclass(frozen=True)
class Trained(toolkit.Result):
    """One layer of the trained model on a sentence (also readable as ``res["weights"]``)."""

    tokens: list
    layer: int
    weights: np.ndarray  # (h, n, n), read-only
    patterns: dict  # name -> (h,)


def compute_trained(sentence, layer):
    """The heads of one layer (1 to 6) on the sentence and their :func:`mha_lib.minilm.head_patterns`, as a
    :class:`Trained`; ``ValueError`` for a sentence or layer it cannot take, or the model not installed."""
    try:
        model = minilm.load_minilm()
    except minilm.ModelNotInstalledError as exc:
        raise ValueError(str(exc)) from None
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 1 <= layer <= model.n_layers:
        raise ValueError(f"layer={layer!r}: the model has layers 1 to {model.n_layers}")
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a string, got {type(sentence).__name__}")
    tokens, attentions, patterns = _forward(sentence, model)
    patterns = {name: table[layer - 1] for name, table in patterns.items()}  # name -> (h,)
    return Trained(list(tokens), int(layer), attentions[layer - 1], patterns)  # weights (h, n, n)


def _head_title(res, i):
    """Head i's largest measure (NaN ones ignored) when it reaches ``CLEAR``, else "no clear pattern"."""
    scores = {name: float(values[i]) for name, values in res.patterns.items() if np.isfinite(values[i])}
    name = max(scores, key=scores.get)
    return f"L{res.layer} head {i + 1}: " + (f"{name} {scores[name]:.2f}" if scores[name] >= CLEAR else "no clear pattern")


class TrainedDrawer:
    """A layer's heads on one [0, 1] scale, each titled by its pattern (no numbers: 12 heads)."""

    size = (11.0, 9.2)

    def picture(self, res):
        texts = {
            "caption": f"Layer {res.layer}: row = query token (looks), column = key token (is looked at)",
            "titles": {"weights": [_head_title(res, i) for i in range(len(res.weights))]},
        }
        return heads_frame(res.weights, res.tokens, texts, numbers=False, ncols=4, cap=40)

    slide_pages = True  # a slide (tools/export_slides.py): slide_picture, 12 heads of 15 tokens do not fit at 24 pt

    def slide_picture(self, res, heads=4, keep=7):
        """:meth:`picture` for a slide: the layer's ``heads`` clearest heads (largest measure, in head order) on the
        sentence's first ``keep`` tokens (their weights as the model gave them); the caption says which."""
        h, n = len(res.weights), len(res.tokens)
        best = [max((v[i] for v in res.patterns.values() if np.isfinite(v[i])), default=0.0) for i in range(h)]
        shown = sorted(np.argsort(best, kind="stable")[::-1][: min(heads, h)].tolist())
        k = min(keep, n)
        weights = np.ascontiguousarray(res.weights[shown][:, :k, :k])
        titles = [_head_title(res, i).split(": ", 1)[1].rsplit(" ", 1)[0] for i in shown]
        titles = [f"head {i + 1}: {t}" if t != "no clear" else f"head {i + 1}" for i, t in zip(shown, titles, strict=True)]
        caption = (
            f"Layer {res.layer}: its {len(shown)} clearest of {h} heads (a clear one named by its pattern), "
            f"the first {k} of {n} tokens (row: query, column: key)"
        )
        texts = {"caption": caption, "titles": {"weights": titles}}
        return heads_frame(weights, res.tokens[:k], texts, numbers=False, ncols=len(shown), cbar="weight", cap=40)


def make_trained_explorer(sentence=DEFAULT_SENTENCE, layer=1):
    """Controls ``sentence`` and ``layer`` (1-6): all 12 heads of all-MiniLM-L6-v2 at once."""
    controls = {
        "sentence": toolkit.text_box("sentence", sentence, "34em"),
        "layer": toolkit.int_slider("layer", layer, 1, minilm.LAYERS),
    }
    return toolkit.build_explorer(
        controls, compute_trained, TrainedDrawer(), title="all-MiniLM-L6-v2: the 12 heads of one layer"
    )
