"""Explorer for notebook 02 (projections): choose h and d_k (tied to d_model / h or free), see W_i^Q, Q_i and the
parameter count on the running example's X (4 x 512)."""

from dataclasses import dataclass

import numpy as np

from ..attention import project
from ..params import parameter_count
from ..viz import frame_figure
from . import toolkit
from .widget import frame, grid


@dataclass(frozen=True)
class Projections(toolkit.Result):
    """The query projections of every head for one setting (also readable as ``res["Q"]``)."""

    tokens: list
    d_k: int
    W_q: np.ndarray  # (h, d_model, d_k)
    Q: np.ndarray  # (h, n, d_k)
    count: dict


def compute_projections(h, tie_d_k, d_k, X=None, tokens=None, seed=0):
    """Q_i = X W_i^Q of h heads of size d_k (``tie_d_k``: d_model / h) as :class:`Projections`; X: the running
    example's by default. A tied h that does not divide d_model raises ``ValueError`` naming the fix."""
    X, tokens = toolkit.running_inputs(X, tokens)
    params = toolkit.explorer_params(X.shape[-1], h, None if tie_d_k else d_k, seed)  # raises for h=7, tied
    Q = project(X, params.W_q)  # (n, d_model) @ (h, d_model, d_k) -> (h, n, d_k)
    return Projections(list(tokens), params.d_k, params.W_q, Q, parameter_count(X.shape[-1], params.h, d_k=params.d_k))


class ProjectionsDrawer:
    """Every head's Q_i (rows = tokens) on one signed scale; the still figure is drawn from the same frame."""

    size = (10.0, 4.6)

    def picture(self, res):
        h, n, d_k = res.Q.shape
        caption = (
            f"h={h}, d_k={d_k}:  each W_i^Q is {res.W_q.shape[1]} x {d_k},  each Q_i = X W_i^Q is {n} x {d_k};"
            f"  parameters (W^Q, W^K, W^V, W^O together) = {res.count['total']:,}"
        )
        titles = [f"Q_{i + 1}  ({n} x {d_k})" for i in range(h)]
        axes = ("", f"dimension within the head (1 ... d_k = {d_k}); rows: tokens")
        Q = grid("Q", res.Q, res.tokens, signed=True, numbers=False, strip=True, cap=22, titles=titles, cbar="", axes=axes)
        return frame({"caption": caption}, Q)


def draw_projections(fig, result):
    """Every head's Q_i as a heatmap on ``fig`` (a still picture, as the explorer draws it)."""
    return frame_figure(ProjectionsDrawer().picture(result), fig=fig)


def make_projections_explorer(h=8, tie_d_k=True, d_k=64):
    """Controls ``h``, ``tie_d_k`` and ``d_k``: the shapes of W_i^Q and Q_i, the parameter count, every head's Q_i."""
    controls = {
        "h": toolkit.heads_control(512, h, tied=tie_d_k),
        "tie_d_k": toolkit.checkbox(toolkit.TIE_LABEL, tie_d_k),
        "d_k": toolkit.int_slider("d_k", d_k, 1, 512, disabled=tie_d_k),
    }
    box = toolkit.build_explorer(
        controls,
        compute_projections,
        ProjectionsDrawer(),
        title="Queries of every head for 'humpty dumpty sat on' (d_model = 512)",
    )
    toolkit.link_heads(box, lambda: 512, tie="tie_d_k")
    return box
