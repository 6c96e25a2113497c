"""Explorer for notebook 02 (projections): choose h and d_k, see W_i^Q, Q_i and the parameter count.

On the running example's X (4 x 512). With "d_k = d_model / h" ticked, h offers the divisors of d_model;
untick it to choose d_k freely, as the original paper allows.
"""

from dataclasses import dataclass

import numpy as np

from ..attention import project
from ..params import parameter_count
from ..plotting import SIGNED_CMAP, head_grid, symmetric_limits
from .grid import plot_heatmap
from .toolkit import (
    TIE_LABEL,
    LayoutDrawer,
    Result,
    build_explorer,
    checkbox,
    explorer_params,
    heads_control,
    int_slider,
    link_heads,
    running_inputs,
)
from .widget import Frame, grid_panel, matrix_entry

__all__ = ["Projections", "compute_projections", "ProjectionsDrawer", "draw_projections", "make_projections_explorer"]


@dataclass(frozen=True)
class Projections(Result):
    """The query projections of every head for one setting (also readable as ``res["Q"]``)."""

    tokens: list
    d_k: int
    W_q: np.ndarray  # (h, d_model, d_k)
    Q: np.ndarray  # (h, n, d_k)
    count: dict


def compute_projections(h, tie_d_k, d_k, X=None, tokens=None, seed=0):
    """The query projections Q_i = X W_i^Q of every head for one setting.

    Parameters
    ----------
    h, d_k : int
        Number of heads; query/key size per head, used when ``tie_d_k`` is False.
    tie_d_k : bool
        True: d_k = d_model / h (an h that does not divide d_model raises ``ValueError`` naming the fix).
    X : ndarray, shape (n, d_model), optional
        Default: the running example's X (4 x 512) and its ``tokens`` (the row labels).
    seed : int
        Seed of :func:`mha_lib.init_params`.

    Returns
    -------
    Projections
        ``tokens``, ``d_k``, ``W_q`` (h, d_model, d_k), ``Q`` (h, n, d_k) and ``count``
        (from :func:`mha_lib.parameter_count`).
    """
    X, tokens = running_inputs(X, tokens)
    params = explorer_params(X.shape[-1], h, None if tie_d_k else d_k, seed)  # raises for h=7, tied
    Q = project(X, params.W_q)  # (n, d_model) @ (h, d_model, d_k) -> (h, n, d_k)
    return Projections(
        tokens=list(tokens),
        d_k=params.d_k,
        W_q=params.W_q,
        Q=Q,
        count=parameter_count(X.shape[-1], params.h, d_k=params.d_k),
    )


class ProjectionsDrawer(LayoutDrawer):
    """Every head's Q_i (rows = tokens) on one signed scale; built per h, a new d_k stretches the same images."""

    size = (10.0, 4.6)

    def key(self, res):
        return len(res.Q), tuple(res.tokens)

    def build(self, fig, res):
        h, n = len(res.Q), len(res.tokens)
        rows, cols = head_grid(h)
        gs = fig.add_gridspec(rows, cols, left=0.1, right=0.9, bottom=0.13, top=0.84, wspace=0.12, hspace=0.5)
        panels = [
            plot_heatmap(
                fig.add_subplot(gs[i]),
                np.zeros((n, 1)),
                res.tokens if i % cols == 0 else None,
                None,
                cmap=SIGNED_CMAP,
                vmin=-1,
                vmax=1,
                numbers=False,
            )
            for i in range(h)
        ]
        cax = fig.colorbar(panels[0].image, cax=fig.add_axes([0.92, 0.13, 0.015, 0.71])).ax
        return dict(
            panels=panels,
            titles=[heat.ax.set_title("", fontsize=8) for heat in panels],
            ends=[
                heat.ax.text(x, -0.04, "", transform=heat.ax.transAxes, ha=ha, va="top", fontsize=7)
                for heat in panels
                for x, ha in ((0.0, "left"), (1.0, "right"))
            ],  # "1" and "d_k"
            cax=cax,
            xlabel=fig.text(0.5, 0.02, "", ha="center", fontsize=8),
            caption=fig.text(0.5, 0.97, "", ha="center", va="top", fontsize=9),
        )

    def update(self, layout, res):
        self.__dict__.update(layout)  # the artists of the layout on screen (self.caption, self.panels, ...)
        h, n, d_k = res.Q.shape
        clim, changed = symmetric_limits(res.Q), []
        for i, (heat, Q) in enumerate(zip(self.panels, res.Q, strict=False)):
            changed += heat.set_data(Q, clim=clim)
            self.titles[i].set_text(f"$Q_{{{i + 1}}}$  ({n} x {d_k})")
        for k, t in enumerate(self.ends):
            t.set_text("1" if k % 2 == 0 else str(d_k))
        self.xlabel.set_text(f"dimension within the head (1 ... d_k = {d_k}); rows: tokens")
        self.caption.set_text(
            f"h={h}, d_k={d_k}:  each $W_i^Q$ is {res.W_q.shape[1]} x {d_k},  each "
            f"$Q_i = X W_i^Q$ is {n} x {d_k};  parameters ($W^Q, W^K, W^V, W^O$ together) = "
            f"{res.count['total']:,}"
        )
        return changed + self.titles + self.ends + [self.xlabel, self.caption, self.cax]

    def picture(self, res):
        """What the browser draws: every head's Q_i (rows: tokens) on one signed scale."""
        h, n, d_k = res.Q.shape
        panel = grid_panel(
            "Q",
            res.Q.shape,
            res.tokens,
            None,
            signed=True,
            numbers=False,
            strip=True,
            cap=22,
            titles=[f"Q_{i + 1}  ({n} x {d_k})" for i in range(h)],
            cbar="",
            row_label="",
            col_label=f"dimension within the head (1 ... d_k = {d_k}); rows: tokens",
            ncols=min(h, 4),
        )
        caption = (
            f"h={h}, d_k={d_k}:  each W_i^Q is {res.W_q.shape[1]} x {d_k},  each Q_i = X W_i^Q is {n} x {d_k};"
            f"  parameters (W^Q, W^K, W^V, W^O together) = {res.count['total']:,}"
        )
        return Frame({"panels": [panel]}, {"caption": caption}, {"Q": matrix_entry(res.Q, symmetric_limits(res.Q))})


def draw_projections(fig, result):
    """Every head's Q_i as a heatmap (a still picture, as the explorer draws it)."""
    return ProjectionsDrawer()(fig, result)


def make_projections_explorer(h=8, tie_d_k=True, d_k=64):
    """Vary h and d_k; see the shapes of W_i^Q and Q_i, the parameter count and every head's Q_i.

    Returns
    -------
    ExplorerBox
        ``controls`` are ``h``, ``tie_d_k`` and ``d_k``; see :mod:`mha_lib.explorers.toolkit`.
    """
    controls = {
        "h": heads_control(512, h, tied=tie_d_k),
        "tie_d_k": checkbox(TIE_LABEL, tie_d_k),
        "d_k": int_slider("d_k", d_k, 1, 512, disabled=tie_d_k),
    }
    box = build_explorer(
        controls,
        compute_projections,
        ProjectionsDrawer(),
        title="Queries of every head for 'humpty dumpty sat on' (d_model = 512)",
    )
    link_heads(box, lambda: 512, tie="tie_d_k")
    return box
