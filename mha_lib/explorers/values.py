"""Notebook 05's explorer (value aggregation): each output row is a weighted average of the value rows."""

import functools
from dataclasses import dataclass

import numpy as np

from ..attention import multi_head_attention
from ..viz import short, still_figure
from ..viz.values import ValuesFigure, bars_title, convex_hull, first_two, formula, points_title, rows_title, token_colors
from . import chart, toolkit
from .widget import frame, grid


@dataclass(frozen=True)
class ValuesView(toolkit.Result):
    """One setting of the values explorer: one head's weights, values and outputs (head counted from 1)."""

    tokens: tuple
    query: int
    head: int
    h: int
    d_k: int
    weights: np.ndarray  # (n, n), the chosen head's
    V: np.ndarray  # (n, d_v), the chosen head's
    heads: np.ndarray  # (n, d_v), Head_i of the chosen head

    @property
    def weights_row(self):  # (n,), the chosen query's
        return self.weights[self.query]

    @property
    def output_row(self):  # (d_v,), the chosen query's
        return self.heads[self.query]


def compute_values(X, tokens, query=0, head=1, h=8, d_k=0, seed=0, weights="random"):
    """The weights, values and output of query ``query`` (0-based) in head ``head`` (1 .. h) as a :class:`ValuesView`;
    d_k = 0: d_model / h; ``weights``: as :func:`~mha_lib.explorers.toolkit.explorer_layer`."""
    tokens, X, params, _ = toolkit.explorer_layer(weights, X, tokens, h, d_k or None, seed)  # d_k = 0: d_model / h
    if not 1 <= head <= params.h:
        raise ValueError(f"there is no head {head} when h={params.h}; pick a head from 1 to {params.h}")
    if not 0 <= query < len(tokens):
        raise ValueError(f"query={query} is not a token index; pick 0 .. {len(tokens) - 1}")
    res = multi_head_attention(X, params)
    return ValuesView(
        tuple(tokens), query, head, params.h, params.d_k, res.weights[head - 1], res.V[head - 1], res.heads[head - 1]
    )


class ValuesDrawer(ValuesFigure):
    """Draws a :class:`ValuesView`: one query's weights as bars, the values and outputs in 2-D, V_i's rows."""

    parts = {"chart": "chart", "rows": "picture"}  # the weights and the 2-D points; V_i's rows and the output
    rows = (("chart",), ("rows",))

    def frames(self, view):
        n, cols, colors = len(view.tokens), self.key(view)[1], token_colors(len(view.tokens))
        toks, w = [short(t) for t in view.tokens], view.weights_row
        decimals = 3 if n <= 8 else 2
        weights = chart.view(
            (-0.6, n - 0.4),
            (0, 1.12),
            [chart.bars(w, colors, texts=[f"{v:.{decimals}f}" for v in w], stroke="#34495E")],
            title=bars_title(view, toks),
            xticks=list(enumerate(toks)),
        )
        V2, out2 = first_two(view.V), first_two(view.heads)
        hull, q = convex_hull(V2), view.query
        marks = [chart.polygon(hull, "#BBBBBB", opacity=0.35)] if len(hull) >= 3 else []
        if len(hull) == 2:
            marks.append(chart.line(hull, "#999999", width=4, opacity=0.5))
        marks += [chart.line([out2[q], V2[j]], c, width=0.5 + 6 * float(w[j]), opacity=0.6) for j, c in enumerate(colors)]
        big = np.arange(len(out2)) == q
        marks.append(chart.points(V2, colors, labels=[f"v({t})" for t in toks], label_colors=colors, sizes=6, bold=True))
        labels = [f"out({toks[m]})" if m == q else "" for m in range(len(out2))]
        stars = dict(shape="star", sizes=np.where(big, 11, 7), alphas=np.where(big, 1, 0.55), labels=labels, dir=(1, -1))
        marks.append(chart.points(out2, token_colors(len(out2)), **stars))
        lo, hi = np.vstack([V2, out2]).min(axis=0), np.vstack([V2, out2]).max(axis=0)
        pad = np.where(hi - lo > 0, hi - lo, 1.0) * (0.3, 0.2)
        lo, hi = lo - pad, hi + pad
        points = chart.view((lo[0], hi[0]), (lo[1], hi[1]), marks, title=points_title(view), xticks=[], yticks=[])
        legend = [
            ("convex hull of the value rows", "#BBBBBB", "area")
            if len(hull) >= 3
            else (f"all weighted averages of the {n} values", "#999999", "line"),
            ("value rows (dots)", "#777777", "dot"),
            ("output rows (stars)", "#777777", "star"),
        ]
        left = chart.panel("weights", width=1, height=330, xlabel="key token (whose value is used)", ylabel="weight")
        xlabel = "component 1 (its scale changes with the head)"
        right = chart.panel("points", width=1.2, height=330, legend=legend, xlabel=xlabel, ylabel="component 2")
        M = np.vstack([view.V[:, :cols], view.output_row[None, :cols]])  # (n + 1, cols)
        names, components, axes = (
            [f"v({t})" for t in toks] + ["output"],
            [str(c + 1) for c in range(cols)],
            (None, "component (counting from 1)"),
        )
        rows = grid("rows", M, names, components, signed=True, titles=[""], cbar="value", axes=axes, cap=40)
        return {
            "chart": chart.frame((left, weights), (right, points), caption=formula(view, toks, 150)),
            "rows": frame({"group_titles": {"rows": rows_title(view, toks, cols)}}, rows),
        }


def values_figure(X=None, tokens=None, query=0, head=1, h=8, d_k=0, seed=0):
    """The explorer's picture for one setting, as a static figure (shown before the widget)."""
    return still_figure(ValuesDrawer(), compute_values(*toolkit.running_inputs(X, tokens), query, head, h, d_k, seed))


def make_values_explorer(X=None, tokens=None, seed=0):
    """Controls ``weights``, ``query``, ``head``, ``h`` and ``d_k``: the weights, the value rows and the output."""
    X, tokens = toolkit.running_inputs(X, tokens)
    controls = {
        "weights": toolkit.weights_control(),
        "query": toolkit.dropdown("query token", [(t, m) for m, t in enumerate(tokens)], value=0),
        "head": toolkit.int_slider("head", 1, 1, 8),
        "h": toolkit.heads_control(X.shape[1], 8),
        "d_k": toolkit.d_k_menu(),
    }

    def query_tokens(change):  # runs before the redraw (registered first): the query list follows the sentence
        toks = tokens if change["new"] == "random" else toolkit.fixed_layer(change["new"])[0]
        controls["query"].options = [(t, m) for m, t in enumerate(toks)]
        controls["query"].value = 0

    controls["weights"].observe(query_tokens, names="value")
    compute = functools.partial(compute_values, X, tokens, seed=seed)
    box = toolkit.build_explorer(controls, compute, ValuesDrawer(), title="Value aggregation: one query, one head")
    toolkit.link_heads(box, lambda: X.shape[1], head="head")
    return box
