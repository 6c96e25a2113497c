"""Notebook 06's explorer (concat): the heads side by side, against the input's width."""

from dataclasses import dataclass

import numpy as np

from ..attention import multi_head_attention
from ..viz import frame_figure
from ..viz.generation import count
from . import toolkit
from .widget import frame, grid


@dataclass(frozen=True)
class ConcatView(toolkit.Result):
    """One setting of the concat explorer: every head's output and their concatenation."""

    tokens: tuple
    d_model: int
    heads: np.ndarray  # (h, n, d_v)
    concat: np.ndarray  # (n, h*d_v)
    X: np.ndarray = None  # (n, d_model): the input, whose width Concat is compared with
    roles: tuple = None  # what each head does (designed parameters), else None

    @property
    def h(self):
        return len(self.heads)


def compute_concat(X, tokens, h=8, d_k=0, seed=0, weights="random"):
    """Every head's output and their concatenation for h heads of size d_k (0: d_model / h); ``weights``: as
    :func:`~mha_lib.explorers.toolkit.explorer_layer`."""
    tokens, X, params, roles = toolkit.explorer_layer(weights, X, tokens, h, d_k or None, seed)  # d_k 0: d_model / h
    res = multi_head_attention(X, params)
    return ConcatView(tuple(tokens), X.shape[1], res.heads, res.concat, X, roles)


class ConcatDrawer:
    """Draws a :class:`ConcatView`: X, and below it the heads' outputs side by side, both to scale (Concat's width
    against d_model's), every head on one colour scale."""

    size = (12.0, 4.6)

    def picture(self, view):
        (h, n, d_v), d_model, width = view.heads.shape, view.d_model, view.concat.shape[1]
        # the shares of the picture's width: labels and colour bar, then the columns to scale
        X_share, heads_share = (0.2 + 0.8 * columns / max(width, d_model) for columns in (d_model, width))

        def title(i):
            name = f"head {i + 1}" + (f": {view.roles[i]}" if view.roles and h <= 4 else "") if h <= 8 else str(i + 1)
            return name + (f"  (cols {i * d_v + 1}–{(i + 1) * d_v})" if h <= 4 else "")

        common = dict(signed=True, numbers=False, strip=True, cap=22)
        X = grid("X", view.X, view.tokens, titles=[""], cbar="value of X", width=X_share, **common)
        titles = [title(i) for i in range(h)]
        heads = grid(
            "heads", view.heads, view.tokens, ncols=h, titles=titles, cbar="value (one scale)", width=heads_share, **common
        )
        verdict = (
            "= d_model, the input's width"
            if width == d_model
            else f"≠ d_model = {d_model}, so W^O must be ({width}, {d_model}) to get back"
        )
        texts = {
            "caption": f"{count(h, 'head')} of shape ({n}, {d_v}) side by side → Concat of shape ({n}, {width}):  "
            f"{h}·{d_v} = {width} {verdict}",
            "group_titles": {
                "X": f"the input X, shape ({n}, {d_model}): the width d_model that the layer must give back",
                "heads": f"Concat = [Head_1 | ... | Head_{h}], shape ({n}, {width}): each block one head's output (n × d_v)",
            },
        }
        return frame(texts, X, heads)


def concat_figure(X=None, tokens=None, h=8, d_k=0, seed=0):
    """The explorer's picture for one setting, as a static figure (shown before the widget)."""
    view = compute_concat(*toolkit.running_inputs(X, tokens), h, d_k, seed)
    return frame_figure(ConcatDrawer().picture(view), ConcatDrawer.size)


def make_concat_explorer(X=None, tokens=None, seed=0):
    """Controls ``weights``, ``h`` and ``d_k`` (= d_v): the heads' outputs, the concatenation and its shape."""
    X, tokens = toolkit.running_inputs(X, tokens)
    controls = {
        "weights": toolkit.weights_control(),
        "h": toolkit.heads_control(X.shape[1], 8),
        "d_k": toolkit.d_k_menu(),
    }

    def compute(weights, h, d_k):
        return compute_concat(X, tokens, h, d_k, seed, weights)

    box = toolkit.build_explorer(controls, compute, ConcatDrawer(), title="Concatenating the heads")
    toolkit.link_heads(box, lambda: X.shape[1])
    return box
