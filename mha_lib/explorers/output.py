"""Notebook 07's explorer (output projection): W^O maps the concatenation back to d_model and mixes the heads."""

from dataclasses import dataclass, replace

import numpy as np

from ..attention import head_contributions, multi_head_attention
from ..plotting import symmetric_limits
from ..viz import contributions_matrix, contributions_title, short, still_figure
from . import toolkit
from .widget import frame, grid


@dataclass(frozen=True)
class OutputView(toolkit.Result):
    """One setting of the output explorer: X, W^O ("random" or "identity") and what flows through W^O."""

    tokens: tuple
    wo: str
    X: np.ndarray  # (n, d_model)
    W_o: np.ndarray  # (h*d_v, d_model)
    concat: np.ndarray  # (n, h*d_v)
    output: np.ndarray  # (n, d_model)
    contributions: np.ndarray  # (h, n, d_model): Head_i W^O_i
    weights: np.ndarray  # (h, n, n)

    def shapes(self):  # what flows through the output projection
        return {"X": self.X.shape, "Concat": self.concat.shape, "W^O": self.W_o.shape, "output": self.output.shape}


def compute_output(X, tokens, h=8, d_k=0, wo="random", seed=0):
    """Multi-head attention with h heads of size d_k (0: d_model / h) and W^O random or the identity (square)."""
    d_model = X.shape[1]
    params = toolkit.explorer_params(d_model, h, d_k or None, seed)  # d_k = 0: d_model / h, the library's rule
    if wo == "identity":
        if h * params.d_k != d_model:
            raise ValueError(
                f"W^O = I needs a square W^O, i.e. h·d_v = d_model = {d_model}, but here h·d_v = {h}·{params.d_k} = "
                f"{h * params.d_k}; choose d_k = d_model/h or a random W^O"
            )
        params = replace(params, W_o=np.eye(d_model))
    elif wo != "random":
        raise ValueError(f"wo={wo!r}: choose 'random' or 'identity'")
    res = multi_head_attention(X, params)
    return OutputView(
        tuple(tokens), wo, X, params.W_o, res.concat, res.output, head_contributions(res.heads, params.W_o), res.weights
    )


def spread_columns(d_model, h):
    """Output columns to show: evenly spread, a multiple of h of them (at least 8): every head's block with W^O = I."""
    k = h * -(-8 // h) if h <= 12 else h
    return [int(c) for c in np.linspace(0, d_model, k, endpoint=False)]


def sample_rows(W_o, h, most=32):
    """Rows of W^O to show: the same number from every head's block, evenly spread in it (at most ``most``)."""
    d_v = len(W_o) // h
    per = max(1, min(d_v, most // h))
    return [i * d_v + int(k) for i in range(h) for k in np.linspace(0, d_v, per, endpoint=False)]


class OutputDrawer:
    """Draws ``(token, OutputView)``: W^O by head blocks, each head's contribution to the token's output and their
    sum, and how large every contribution is (the same columns sampled in both: :func:`spread_columns`)."""

    size = (14.0, 4.6)

    def picture(self, res):
        token, view = res
        h, n, d_model = view.contributions.shape
        columns, rows = spread_columns(d_model, h), sample_rows(view.W_o, h)
        d_v = len(view.W_o) // h
        W = view.W_o[np.ix_(rows, columns)]
        M = contributions_matrix(view.contributions[:, token], view.output[token], columns)
        norms = np.linalg.norm(view.contributions, axis=-1).T  # (n, h): size of head i's contribution to token m
        cols = [str(c + 1) for c in columns]
        row_names = [f"W^O_{r // d_v + 1}" if r % d_v == 0 or r == rows[0] else "" for r in rows]
        title, clim = f"W^O = {'I' if view.wo == 'identity' else 'random'}", symmetric_limits(view.W_o)
        axes = ("rows, by head block", "the middle panel's columns")
        wo = grid("wo", W, row_names, None, clim, signed=True, numbers=False, cap=14, titles=[title], cbar="", axes=axes)
        heads = [f"head {i + 1}" for i in range(h)] + ["sum = output"]
        contributions = grid("contributions", M, heads, cols, signed=True, cap=48, cbar="", axes=("", "output column"))
        sizes = grid(
            "sizes",
            norms,
            view.tokens,
            [str(i + 1) for i in range(h)],
            (0.0, float(norms.max()) or 1.0),
            numbers=norms.size <= 40,
            cap=40,
            titles=["size of what each head adds"],
            cbar="length of the row",
            axes=("", "head"),
        )
        s = view.shapes()
        texts = {
            "caption": f"Concat {s['Concat']} @ W^O {s['W^O']} = MultiHead(X) {s['output']}, the shape of X {s['X']}, "
            f"so X + MultiHead(X) works  (columns {len(columns)} of {d_model}, rows {len(rows)} of {len(view.W_o)})",
            "titles": {"contributions": [contributions_title(short(view.tokens[token]), columns)]},
        }
        return frame(texts, wo, contributions, sizes, widths=(0.22, 0.48, 0.3))

    slide_pages = True  # a slide (tools/export_slides.py): slide_picture, the three panels side by side overlapped

    def slide_picture(self, res):
        """:meth:`picture` on two slides: what each head adds (wide), then W^O beside the contributions' sizes."""
        scheme, texts, arrays = self.picture(res)
        (wo, W), (contributions, M), sizes = ((p, arrays[p["key"]]) for p in scheme["panels"])
        first = frame(texts, (dict(contributions, strip=True), M), widths=[None])  # cells wide
        # each block's name on its middle row (on its first, W^O_1 met the panel's title), its columns named
        rows, per = wo["rows"], len(wo["rows"]) // len(sizes[0]["cols"])
        names = ["" if (i - per // 2) % per else rows[i - per // 2] for i in range(len(rows))]
        wo = dict(wo, strip=True, rows=names, col_label="the first page's columns")
        caption = {"caption": "W^O by head blocks (left); how much each head adds to each token's output (right)"}
        return [first, frame(caption, (wo, W), sizes, widths=(0.4, 0.6))]


def output_figure(X=None, tokens=None, h=8, d_k=0, wo="random", seed=0):
    """The explorer's picture for one setting, as a static figure (shown before the widget)."""
    res = (0, compute_output(*toolkit.running_inputs(X, tokens), h, d_k, wo, seed))
    return still_figure(OutputDrawer(), res)  # with its slide pages (OutputDrawer.slide_picture)


def make_output_explorer(X=None, tokens=None, seed=0):
    """Controls ``h``, ``d_k``, ``wo`` (random or the identity) and ``token``: the shapes and each head's part."""
    X, tokens = toolkit.running_inputs(X, tokens)
    controls = {
        "h": toolkit.heads_control(X.shape[1], 8),
        "d_k": toolkit.d_k_menu(),
        "wo": toolkit.dropdown("W^O", [("random", "random"), ("identity I", "identity")], value="random"),
        "token": toolkit.dropdown("token", [(t, m) for m, t in enumerate(tokens)], value=0),
    }

    def compute(h, d_k, wo, token):
        return token, compute_output(X, tokens, h, d_k, wo, seed)

    box = toolkit.build_explorer(controls, compute, OutputDrawer(), title="The output projection W^O")
    toolkit.link_heads(box, lambda: X.shape[1])
    return box
