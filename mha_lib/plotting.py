"""Pictures for the notebooks: the pipeline diagram and attention heatmaps.

Every helper draws on an axes (or figure) it is given and returns the artists
it made, matplotlib's recommended signature; thin ``*_figure`` wrappers make a
figure for a notebook cell. Nothing here changes global rcParams.

Colour maps: ``viridis`` (perceptually uniform and readable with every common
colour-vision deficiency) for attention weights, which live in [0, 1];
``RdBu_r`` (a ColorBrewer diverging map, colour-blind safe) with limits
symmetric around 0 for signed matrices such as scores, Q, K and V.
"""

from __future__ import annotations

import functools
import numbers

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ._checks import as_array, check_token, shown

__all__ = [
    "PIPELINE_STEPS",
    "WEIGHTS_CMAP",
    "SIGNED_CMAP",
    "plot_pipeline",
    "pipeline_figure",
    "pipeline_slide_figure",
    "plot_matrix",
    "plot_attention",
    "head_grid",
    "symmetric_limits",
    "plot_soft_lookup",
    "plot_two_heads",
    "plot_concat_blocks",
]

WEIGHTS_CMAP = "viridis"
SIGNED_CMAP = "RdBu_r"

# (key, box label, notebook) in computation order.
PIPELINE_STEPS = (
    ("embeddings", "X\nembeddings", "01"),
    ("projections", "Q, K, V\nprojections", "02"),
    ("scores", "scores\n$QK^T/\\sqrt{d_k}$", "03"),
    ("softmax", "weights\nsoftmax", "04"),
    ("values", "$\\mathrm{Head}_i$\nweights $\\cdot V$", "05"),
    ("concat", "concat\nheads", "06"),
    ("output", "output\n$\\cdot W^O$", "07"),
)
_STEP_KEYS = [key for key, _, _ in PIPELINE_STEPS]

_HIGHLIGHT = "#E69F00"  # Okabe-Ito orange: the current step
_PLAIN = "#E8EEF4"
_EDGE = "#34495E"
_V_COLOUR = "#0072B2"  # Okabe-Ito blue: the value branch, which goes round the softmax


def plot_pipeline(ax, current=None):
    """Draw the seven steps of Multi-Head Attention as a compact data-flow strip.

    The strip follows the data as the formula does (the full-size picture is
    :func:`mha_lib.diagrams.plot_mha_diagram`): X branches into the
    projections; Q_i and K_i meet in the scores, the softmax makes the
    weights, and the value branch V_i runs *below* them and joins only at the
    weighted sum, so V never passes through the softmax. The steps of one head
    sit in a stack of frames: the h heads run side by side, each with its own
    parameters, and their outputs are concatenated and multiplied by W^O.

    Parameters
    ----------
    ax : matplotlib Axes
    current : str, optional
        Key of the step to highlight: one of ``embeddings``, ``projections``,
        ``scores``, ``softmax``, ``values``, ``concat``, ``output``; None
        highlights nothing (the overview). ``projections`` highlights both
        the Q/K box and the V box.

    Returns
    -------
    list of Artist

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> artists = plot_pipeline(Figure().add_subplot(), "softmax")
    >>> any("skips the softmax" in a.get_text() for a in artists if hasattr(a, "get_text"))
    True
    """
    check_axes(ax, "plot_pipeline")
    if current is not None and (not isinstance(current, str) or current not in _STEP_KEYS):
        raise ValueError(f"plot_pipeline: current={shown(current)} is not a step; choose one of {_STEP_KEYS} or None")
    ax.set_xlim(0, len(PIPELINE_STEPS))
    ax.set_ylim(-0.12, 1.72)
    ax.set_axis_off()
    artists = []
    labels = {key: label for key, label, _ in PIPELINE_STEPS}
    column = {key: i for i, key in enumerate(_STEP_KEYS)}
    upper, middle, lower = 1.02, 0.72, 0.40  # lanes: queries/keys, the main line, values
    width = 0.8

    def box(key, y, height, label):
        on = key == current
        patch = FancyBboxPatch(
            (column[key] + 0.1, y - height / 2),
            width,
            height,
            boxstyle="round,pad=0.02,rounding_size=0.08",
            facecolor=_HIGHLIGHT if on else _PLAIN,
            edgecolor=_EDGE,
            linewidth=2.2 if on else 1.0,
            zorder=3,
        )
        ax.add_patch(patch)
        text = ax.text(
            column[key] + 0.5,
            y,
            label,
            ha="center",
            va="center",
            fontsize=9,
            zorder=4,
            fontweight="bold" if on else "normal",
            color="black",
        )
        artists.extend([patch, text])

    def arrow(start, end, color=_EDGE, lw=1.0):
        patch = FancyArrowPatch(
            start, end, arrowstyle="-|>", mutation_scale=10, color=color, linewidth=lw, shrinkA=0, shrinkB=0, zorder=2
        )
        ax.add_patch(patch)
        artists.append(patch)

    # The stack of heads behind the steps of one head (projections .. values).
    x0, y0, w, hgt = 0.96, 0.1, 4.08, 1.44
    for k in (2, 1, 0):
        frame = FancyBboxPatch(
            (x0 + 0.05 * k, y0 + 0.05 * k),
            w,
            hgt,
            boxstyle="round,pad=0.01,rounding_size=0.1",
            facecolor="#F7F9FB" if k == 0 else "#EDF1F5",
            edgecolor="#8A9BAD",
            linewidth=0.8,
            zorder=1 - 0.1 * k,
        )
        ax.add_patch(frame)
        artists.append(frame)
    artists.append(
        ax.text(
            x0 + 0.06,
            y0 + hgt - 0.03,
            "head $i$ (all $h$ heads run side by side, each with its own $W_i^Q, W_i^K, W_i^V$)",
            ha="left",
            va="top",
            fontsize=7,
            color="#555555",
            zorder=4,
        )
    )

    box("embeddings", middle, 0.6, labels["embeddings"])
    box("projections", upper, 0.44, "$Q_i$, $K_i$\nprojections")
    box("projections", lower, 0.44, "$V_i$\nprojection")
    box("scores", upper, 0.44, labels["scores"])
    box("softmax", upper, 0.44, labels["softmax"])
    box("values", middle, 1.06, "$\\mathrm{Head}_i$\nweights $\\cdot V_i$")
    box("concat", middle, 0.6, labels["concat"])
    box("output", middle, 0.6, labels["output"])

    arrow((0.9, middle + 0.1), (1.1, upper))  # X -> Q_i, K_i
    arrow((0.9, middle - 0.1), (1.1, lower), color=_V_COLOUR)  # X -> V_i
    arrow((1.9, upper), (2.1, upper))  # Q_i, K_i -> scores
    arrow((2.9, upper), (3.1, upper))  # scores -> softmax
    arrow((3.9, upper), (4.1, upper))  # the weights -> Head_i
    arrow((1.9, lower), (4.1, lower), color=_V_COLOUR, lw=1.4)  # V_i goes round the scores and the softmax
    artists.append(
        ax.text(
            3.0,
            lower + 0.03,
            "$V_i$ skips the softmax",
            ha="center",
            va="bottom",
            fontsize=7.5,
            color=_V_COLOUR,
            style="italic",
            zorder=4,
        )
    )
    arrow((4.9, middle), (5.1, middle))  # every Head_i -> concat
    arrow((5.9, middle), (6.1, middle))  # concat -> output

    for i, (_, _, nb) in enumerate(PIPELINE_STEPS):
        artists.append(ax.text(i + 0.5, -0.05, f"nb {nb}", ha="center", va="center", fontsize=7, color="#555555"))
    return artists


def pipeline_figure(current=None):
    """A small figure of the pipeline with ``current`` highlighted (see :func:`plot_pipeline`).

    Its ``for_slide`` attribute draws the same picture for a slide (:func:`pipeline_slide_figure`), as
    ``tools/export_slides.py`` does: a notebook strip scaled up has room for its words at 9 pt, not at 24."""
    fig = Figure(figsize=(10, 1.9), layout="constrained")
    plot_pipeline(fig.add_subplot(), current)
    fig.for_slide = functools.partial(pipeline_slide_figure, current)
    return fig


def pipeline_slide_figure(current=None, width=12.8, height=6.3, fontsize=24):
    """The pipeline of :func:`plot_pipeline` drawn for a slide of ``width`` x ``height`` inches, every text
    ``fontsize`` points: the same boxes, lanes and arrows, laid out in inches for words that size (long
    words hyphenated, the stack's note on two lines over its boxes)."""
    if current is not None and (not isinstance(current, str) or current not in _STEP_KEYS):
        raise ValueError(
            f"pipeline_slide_figure: current={shown(current)} is not a step; choose one of {_STEP_KEYS} or None"
        )
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    em = fontsize / 72  # inches
    line = 1.25 * em
    cw = width / len(PIPELINE_STEPS)  # a column per step
    bw = min(cw - 0.22, 1.9)
    column = {key: i for i, key in enumerate(_STEP_KEYS)}
    box_h = 3 * line + 0.3  # three lines of words
    nb_y = 0.5 * line
    frame_y0 = nb_y + line
    upper = height - 2 * line - 0.7 - box_h / 2  # under the stack's two-line note
    lower = frame_y0 + 0.2 + box_h / 2
    middle = (upper + lower) / 2

    def box(key, y, height_, label):
        on = key == current
        x = column[key] * cw + (cw - bw) / 2
        ax.add_patch(
            FancyBboxPatch(
                (x, y - height_ / 2),
                bw,
                height_,
                boxstyle="round,pad=0.02,rounding_size=0.12",
                facecolor=_HIGHLIGHT if on else _PLAIN,
                edgecolor=_EDGE,
                linewidth=3.0 if on else 1.5,
                zorder=3,
            )
        )
        ax.text(
            x + bw / 2,
            y,
            label,
            ha="center",
            va="center",
            fontsize=fontsize,
            zorder=4,
            fontweight="bold" if on else "normal",
            linespacing=1.15,
        )

    def arrow(start, end, color=_EDGE, lw=2.0):
        ax.add_patch(
            FancyArrowPatch(
                start, end, arrowstyle="-|>", mutation_scale=22, color=color, linewidth=lw, shrinkA=0, shrinkB=0, zorder=2
            )
        )

    gap = (cw - bw) / 2
    x0, x1 = cw - 0.1, 5 * cw + 0.1 - 0.2
    for k in (2, 1, 0):
        ax.add_patch(
            FancyBboxPatch(
                (x0 + 0.1 * k, frame_y0 + 0.1 * k),
                x1 - x0,
                height - 0.15 - frame_y0 - 0.2,
                boxstyle="round,pad=0.01,rounding_size=0.15",
                facecolor="#F7F9FB" if k == 0 else "#EDF1F5",
                edgecolor="#8A9BAD",
                linewidth=1.2,
                zorder=1 - 0.1 * k,
            )
        )
    ax.text(
        x0 + 0.15,
        height - 0.45,
        "head $i$: all $h$ heads run side by side,\neach with its own $W_i^Q, W_i^K, W_i^V$",
        ha="left",
        va="top",
        fontsize=fontsize,
        color="#555555",
        zorder=4,
        linespacing=1.15,
    )
    box("embeddings", middle, box_h, "$X$\nembed-\ndings")
    box("projections", upper, box_h, "$Q_i$, $K_i$\nprojec-\ntions")
    box("projections", lower, box_h, "$V_i$\nprojec-\ntion")
    box("scores", upper, 2 * line + 0.3, "scores\n$QK^T/\\sqrt{d_k}$")
    box("softmax", upper, 2 * line + 0.3, "weights\nsoftmax")
    box("values", middle, upper - lower + box_h, "$\\mathrm{Head}_i$\nweights\n$\\cdot V_i$")
    box("concat", middle, 2 * line + 0.3, "concat\nheads")
    box("output", middle, 2 * line + 0.3, "output\n$\\cdot W^O$")
    right = [(k + 1) * cw - gap for k in range(len(PIPELINE_STEPS))]
    left = [k * cw + gap for k in range(len(PIPELINE_STEPS))]
    arrow((right[0], middle + 0.3), (left[1], upper))
    arrow((right[0], middle - 0.3), (left[1], lower), color=_V_COLOUR)
    arrow((right[1], upper), (left[2], upper))
    arrow((right[2], upper), (left[3], upper))
    arrow((right[3], upper), (left[4], upper))
    arrow((right[1], lower), (left[4], lower), color=_V_COLOUR, lw=2.8)
    ax.text(
        (right[1] + left[4]) / 2,
        lower + 0.1,
        "$V_i$ skips the softmax",
        ha="center",
        va="bottom",
        fontsize=fontsize,
        color=_V_COLOUR,
        style="italic",
        zorder=4,
    )
    arrow((right[4], middle), (left[5], middle))
    arrow((right[5], middle), (left[6], middle))
    for i, (_, _, nb) in enumerate(PIPELINE_STEPS):
        ax.text((i + 0.5) * cw, nb_y, f"nb {nb}", ha="center", va="center", fontsize=fontsize, color="#555555")
    return fig


def symmetric_limits(*arrays):
    """``(-m, m)`` with m the largest absolute value in the arrays (1.0 if all are zero)."""
    m = max(float(np.max(np.abs(a))) for a in arrays)
    return (-m, m) if m > 0 else (-1.0, 1.0)


MAX_CELLS = (
    1024 * 1024
)  # the most cells a heatmap draws (n = 1024 tokens): more would take minutes, and no screen shows them
MAX_ANNOTATED = 2500  # the most cells written as numbers (50 x 50): one text each, and no one reads more
MAX_LABELS = 512  # the most labels on one axis


def _labels(labels, count, name, where):
    """Labels as literal text, one per row or column: '$' is escaped (a token "$x$" is not mathtext, a lone "$"
    does not break the drawing), and each must be a string (or a number) of whole characters."""
    if isinstance(labels, str) or not isinstance(labels, (list, tuple, np.ndarray)):
        raise TypeError(f"{where}: {name} must be a list of labels (tokens), one per entry, got {type(labels).__name__}")
    labels = list(labels)
    if len(labels) != count:
        raise ValueError(f"{where}: {name} has {len(labels)} labels for {count} entries; give one label each")
    if count > MAX_LABELS:
        raise ValueError(
            f"{where}: {count} labels on one axis are more than the {MAX_LABELS} a picture can show; pass {name}=None"
        )
    text = []
    for label in labels:
        if isinstance(label, (numbers.Number, np.generic)) and not isinstance(label, (bool, np.bool_)):
            label = str(label)
        check_token(label, where, name="label")
        text.append(label.replace("$", r"\$"))  # literal: matplotlib reads text between two $ as mathtext
    return text


def _real(values, name, where):
    """values as a float array (a boolean mask is drawn as 0 and 1); a TypeError for complex numbers, text or
    objects, which a heatmap cannot show (numpy would drop an imaginary part with only a warning)."""
    arr = as_array(values, f"{where}: {name}")
    if arr.dtype != bool and (not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating)):
        raise TypeError(f"{where}: {name} must hold real numbers, got dtype {arr.dtype}")
    return arr.astype(float)


def check_axes(ax, where):
    """``ax`` as it is if it is a matplotlib Axes; else a TypeError with the fix (a figure, a list of axes...)."""
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise TypeError(f"{where}: ax must be a matplotlib Axes, e.g. ax = Figure().add_subplot(), got {type(ax).__name__}")
    return ax


def _check_fontsize(fontsize, where):
    if (
        isinstance(fontsize, (bool, np.bool_))
        or not isinstance(fontsize, numbers.Real)
        or not (np.isfinite(fontsize) and 1 <= fontsize <= 100)
    ):
        raise ValueError(f"{where}: fontsize={shown(fontsize)} must be a size in points between 1 and 100, e.g. 8")
    return float(fontsize)


def plot_matrix(
    ax,
    M,
    row_labels=None,
    col_labels=None,
    *,
    title=None,
    cmap=None,
    vmin=None,
    vmax=None,
    annotate=None,
    fmt=".2f",
    fontsize=8,
):
    """Draw a matrix as a heatmap with labelled rows and columns.

    Parameters
    ----------
    ax : matplotlib Axes
    M : ndarray, shape (rows, cols)
    row_labels, col_labels : sequence of str, optional
        One label per row / column (tokens, usually). Every label is drawn.
    title : str, optional
    cmap : str, optional
        Default: ``viridis`` for non-negative matrices, ``RdBu_r`` with
        symmetric limits for signed ones.
    vmin, vmax : float, optional
        Colour limits; pass the same ones to several panels to share a scale.
    annotate : bool, optional
        Write each value in its cell. Default: only when the matrix has at
        most 64 cells.
    fmt : str
        Format of the annotations.

    Returns
    -------
    AxesImage
    """
    check_axes(ax, "plot_matrix")
    M = _real(M, "M", "plot_matrix")
    if M.ndim != 2 or M.size == 0:
        raise ValueError(f"plot_matrix: M must be a non-empty 2-D array, got shape {M.shape}")
    if np.isnan(M).any():
        raise ValueError("plot_matrix: M contains NaN; find where it came from (a 0/0 upstream) before drawing it")
    if M.size > MAX_CELLS:
        raise ValueError(
            f"plot_matrix: M has {M.size:,} cells (shape {M.shape}), more than the {MAX_CELLS:,} a "
            "heatmap draws; draw a slice of it, e.g. M[:64, :64]"
        )
    fontsize = _check_fontsize(fontsize, "plot_matrix")
    if annotate is not None and not isinstance(annotate, (bool, np.bool_)):
        raise TypeError(f"plot_matrix: annotate must be True, False or None, got {shown(annotate)}")
    if annotate and M.size > MAX_ANNOTATED:
        raise ValueError(
            f"plot_matrix: annotate=True writes one number per cell, and {M.size:,} cells are more "
            f"than the {MAX_ANNOTATED:,} anyone reads; pass annotate=False or draw a slice"
        )
    rows, cols = M.shape
    row_labels = None if row_labels is None else _labels(row_labels, rows, "row_labels", "plot_matrix")
    col_labels = None if col_labels is None else _labels(col_labels, cols, "col_labels", "plot_matrix")
    signed = bool((M < 0).any())
    if cmap is None:
        cmap = SIGNED_CMAP if signed else WEIGHTS_CMAP
    if vmin is None and vmax is None and cmap == SIGNED_CMAP:
        vmin, vmax = symmetric_limits(M)
    im = ax.imshow(M, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    if row_labels is not None:
        ax.set_yticks(range(rows), labels=list(row_labels), fontsize=fontsize)
    if col_labels is not None:
        ax.set_xticks(
            range(cols),
            labels=list(col_labels),
            fontsize=fontsize,
            rotation=45 if cols > 4 else 0,
            ha="right" if cols > 4 else "center",
        )
    if title:
        ax.set_title(title, fontsize=fontsize + 1)
    if annotate is None:
        annotate = M.size <= 64
    if annotate:
        lo, hi = im.get_clim()
        for (r, c), value in np.ndenumerate(M):
            frac = (value - lo) / (hi - lo) if hi > lo else 0.5
            dark_cell = frac < 0.6 if cmap == WEIGHTS_CMAP else abs(frac - 0.5) > 0.3
            ax.text(
                c,
                r,
                format(value, fmt),
                ha="center",
                va="center",
                fontsize=fontsize - 1,
                color="white" if dark_cell else "black",
            )
    return im


def plot_attention(ax, weights, tokens, *, title=None, vmin=0.0, vmax=1.0, annotate=None, fontsize=8):
    """One head's attention weights: row = query token, column = key token.

    Parameters
    ----------
    ax : matplotlib Axes
    weights : ndarray, shape (n, n)
    tokens : sequence of str, length n
    vmin, vmax : float
        Colour limits; the default [0, 1] is the same for every head, so
        panels can be compared.

    Returns
    -------
    AxesImage
    """
    check_axes(ax, "plot_attention")
    weights = np.asarray(weights)
    if isinstance(tokens, str) or not isinstance(tokens, (list, tuple, np.ndarray)):
        raise TypeError(
            f"plot_attention: tokens must be a list of tokens, one per row of weights, got {type(tokens).__name__}"
        )
    if weights.ndim != 2 or weights.shape[0] != weights.shape[1] or weights.shape[0] != len(tokens):
        raise ValueError(f"plot_attention: weights must be (n, n) with n = len(tokens) = {len(tokens)}, got {weights.shape}")
    im = plot_matrix(
        ax,
        weights,
        tokens,
        tokens,
        title=title,
        cmap=WEIGHTS_CMAP,
        vmin=vmin,
        vmax=vmax,
        annotate=annotate,
        fontsize=fontsize,
    )
    ax.set_ylabel("query (looks)", fontsize=fontsize)
    ax.set_xlabel("key (is looked at)", fontsize=fontsize)
    return im


def head_grid(h, ncols=None):
    """(rows, cols) of a grid that holds h panels: 4 columns for up to 8 heads, 8 beyond."""
    if ncols is None:
        ncols = h if h <= 4 else (4 if h <= 8 else 8)
    ncols = max(1, min(ncols, h))
    return int(np.ceil(h / ncols)), ncols


_TOKEN_COLOURS = ("#999999", "#0072B2", "#E69F00", "#009E73")  # Okabe-Ito: colour-blind safe


def _check_axes_list(axes, count, where):
    """``axes`` as a list of ``count`` matplotlib Axes, else a TypeError/ValueError that says so."""
    if not isinstance(axes, (list, tuple, np.ndarray)):
        raise TypeError(
            f"{where}: axes must be a sequence of {count} matplotlib Axes, e.g. "
            f"fig.subplots(1, {count}), got {type(axes).__name__}"
        )
    axes = list(np.ravel(np.asarray(axes, dtype=object)))
    if len(axes) != count:
        raise ValueError(f"{where}: axes must hold {count} Axes, e.g. fig.subplots(1, {count}), got {len(axes)}")
    return [check_axes(ax, where) for ax in axes]


def plot_soft_lookup(axes, look, token="it"):
    """Notebook 00's soft dictionary lookup, seen from one word, on three axes.

    Left: the keys as arrows and the word's query (a wide grey arrow under them, from the same origin);
    middle: the word's weights as bars;
    right: the values and the word's output (a star), the weighted average of the values.

    Parameters
    ----------
    axes : sequence of 3 matplotlib Axes
    look : SoftLookup
        ``mha_lib.soft_lookup_example()``: 4 tokens, 2-D queries, keys and values.
    token : str
        The word whose lookup is drawn (default "it").

    Returns
    -------
    list of Artist

    Examples
    --------
    >>> import mha_lib
    >>> fig = Figure(figsize=(11, 3.4), layout="constrained")
    >>> artists = plot_soft_lookup(fig.subplots(1, 3), mha_lib.soft_lookup_example())
    """
    ax_k, ax_w, ax_v = _check_axes_list(axes, 3, "plot_soft_lookup")
    tokens = tuple(look.tokens)
    if len(tokens) > len(_TOKEN_COLOURS):
        raise ValueError(f"plot_soft_lookup: look has {len(tokens)} tokens; it draws at most {len(_TOKEN_COLOURS)}")
    if not isinstance(token, str) or token not in tokens:
        raise ValueError(f"plot_soft_lookup: token={shown(token)} is not one of the lookup's words {tokens}")
    m = tokens.index(token)
    colours = _TOKEN_COLOURS[: len(tokens)]
    # clear of the arrows, the origin and each other (the keys of "the" and "it" lie on the axis, half a unit apart)
    label_at = {"the": (-4, -22), "cat": (0, 24), "sat": (6, -4), "it": (-2, 6)}
    artists = []
    for tok, k, c in zip(tokens, look.K, colours, strict=False):  # keys: what each word offers
        artists.append(ax_k.annotate("", k, (0, 0), arrowprops=dict(arrowstyle="->", color=c, lw=2)))
        artists += ax_k.plot(*k, "o", color=c, ms=7)
        artists.append(
            ax_k.annotate(
                f"key of '{tok}'", k, xytext=label_at.get(tok, (6, 6)), textcoords="offset points", color=c, fontsize=9
            )
        )
    q = np.asarray(look.Q[m], dtype=float)  # the query, full size, from the origin like the keys, drawn under them
    artists.append(
        ax_k.annotate("", q, (0, 0), arrowprops=dict(arrowstyle="-|>", color="#bbbbbb", lw=7, mutation_scale=22), zorder=0)
    )
    q_text = ", ".join(f"{x:g}" for x in look.Q[m])
    artists.append(
        ax_k.annotate(f"query of '{token}', ({q_text})", q, xytext=(-70, -22), textcoords="offset points", fontsize=9)
    )
    reach = max(1.8, float(q[0]) + 0.3)  # the whole query in view
    ax_k.set(xlim=(-0.3, reach), ylim=(-0.6, 1.25), aspect="equal", xlabel=look.query_axes[0], ylabel=look.query_axes[1])
    ax_k.set_title("query and keys: a match points the same way", fontsize=10)
    bars = ax_w.bar(tokens, look.weights[m], color=colours)
    artists += [bars, *ax_w.bar_label(bars, fmt="%.2f", fontsize=9)]
    ax_w.set(ylim=(0, 1), ylabel="weight")
    ax_w.set_title(f"weights of '{token}' (softmax of its scores)", fontsize=10)
    for v, c in zip(look.V, colours, strict=False):  # values: what each word passes on
        artists += ax_v.plot(*v, "o", color=c, ms=9)
    for j, tok in enumerate(tokens):
        if np.any(look.V[j]):
            artists.append(
                ax_v.annotate(
                    f"value of '{tok}'",
                    look.V[j],
                    xytext=(8, -4) if look.V[j][1] else (-30, -18),
                    textcoords="offset points",
                    color=colours[j],
                    fontsize=9,
                )
            )
    zeros = [tok for j, tok in enumerate(tokens) if not np.any(look.V[j])]
    if zeros:
        artists.append(
            ax_v.annotate(
                ", ".join(f"'{t}'" for t in zeros) + ": (0, 0)",
                (0, 0),
                xytext=(8, 6),
                textcoords="offset points",
                color="#555555",
                fontsize=9,
            )
        )
    artists += ax_v.plot(*look.output[m], "*", color="black", ms=16)
    artists.append(
        ax_v.annotate(f"output of '{token}'", look.output[m], xytext=(-40, 12), textcoords="offset points", fontsize=9)
    )
    ax_v.set(xlim=(-0.2, 1.4), ylim=(-0.2, 1.25), aspect="equal", xlabel=look.value_axes[0], ylabel=look.value_axes[1])
    best = tokens[int(np.argmax(look.weights[m]))]
    ax_v.set_title(f"values: '{token}' receives mostly '{best}'", fontsize=10)
    return artists


def plot_two_heads(ax_weights, ax_values, demo, *, distances=False):
    """One head against two on "cat chased mouse" (``mha_lib.two_heads_demo()``), seen from "chased".

    Left: the weights of "chased" in the one head and in heads "who" and "whom"; right: the two values, the
    line of every blend of them, and each head's output.

    Parameters
    ----------
    ax_weights, ax_values : matplotlib Axes
    demo : TwoHeadsDemo
    distances : bool
        Say in the legend how far each output is from the values (notebook 07).

    Returns
    -------
    list of Artist

    Examples
    --------
    >>> import mha_lib
    >>> fig = Figure(figsize=(9.6, 3.4), layout="constrained")
    >>> artists = plot_two_heads(*fig.subplots(1, 2), mha_lib.two_heads_demo())
    """
    check_axes(ax_weights, "plot_two_heads")
    check_axes(ax_values, "plot_two_heads")
    if not isinstance(distances, (bool, np.bool_)):
        raise TypeError(f"plot_two_heads: distances must be True or False, got {shown(distances)}")
    artists = []
    x = np.arange(len(demo.tokens))
    for k, (label, w, colour) in enumerate(
        [
            ("one head", demo.one_head_weights, "#888888"),
            ("head 'who'", demo.two_heads_weights[0], "#0072B2"),
            ("head 'whom'", demo.two_heads_weights[1], "#D55E00"),
        ]
    ):
        bars = ax_weights.bar(x + (k - 1) * 0.27, w, width=0.25, color=colour, label=label)
        artists += [bars, *ax_weights.bar_label(bars, fmt="%.2f", fontsize=8)]
    ax_weights.set(xticks=x, xticklabels=demo.tokens, ylim=(0, 1.2), xlabel="key token", ylabel="weight")
    ax_weights.set_title("where 'chased' looks", fontsize=10)
    ax_weights.legend(fontsize=8, loc="upper center", ncol=3)
    if distances:
        labels = (
            f"one head: {demo.one_head_distances[0]:.2f} from each value",
            f"head 'who': {demo.two_heads_distances[0, 0]:.2f} from v(cat)",
            f"head 'whom': {demo.two_heads_distances[1, 1]:.2f} from v(mouse)",
        )
    else:
        labels = ("one head: half of each", "head 'who': cat", "head 'whom': mouse")
    artists += ax_values.plot(*demo.values.T, color="#BBBBBB", lw=4, zorder=0, label="every blend of the two values")
    artists.append(ax_values.scatter(*demo.values.T, s=140, color=["#009E73", "#CC79A7"], edgecolor="black", zorder=3))
    for name, v in zip(["v(cat)", "v(mouse)"], demo.values, strict=False):
        artists.append(ax_values.annotate(name, v, xytext=(10, 4), textcoords="offset points", fontsize=10))
    for out, marker, size, colour, z, label in [
        (demo.one_head_output, "*", 300, "#888888", 4, labels[0]),
        (demo.two_heads_outputs[0], "^", 90, "#0072B2", 5, labels[1]),
        (demo.two_heads_outputs[1], "v", 90, "#D55E00", 5, labels[2]),
    ]:
        artists.append(
            ax_values.scatter(*out, marker=marker, s=size, color=colour, edgecolor="black", zorder=z, label=label)
        )
    ax_values.set(
        xlim=(-0.3, 1.9 if not distances else 2.05),
        ylim=(-0.3, 1.3 if not distances else 1.5),
        aspect="equal",
        xlabel="value coordinate 1",
        ylabel="value coordinate 2",
    )
    ax_values.set_title("what 'chased' receives", fontsize=10)
    # beside the plot, not on it: grown for a slide, a legend inside covered the label of v(mouse)
    ax_values.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.03, 1.0), borderaxespad=0)
    return artists


def plot_concat_blocks(fig, heads, tokens, *, titles=None, colors=None):
    """Concat as its blocks: one panel per head, the head's columns numbered as in Concat (counting from 1).

    Every panel uses one colour scale, symmetric around 0, so the heads can be compared; equal tokens give
    equal stripes.

    Parameters
    ----------
    fig : matplotlib Figure
        An empty figure; the panels and one colour bar are added to it.
    heads : ndarray, shape (h, n, d_v)
    tokens : sequence of str, length n
    titles : sequence of str, length h, optional
    colors : sequence of at least h colours, optional
        The frame of each head's panel: head i gets colour i.

    Returns
    -------
    list of AxesImage

    Examples
    --------
    >>> import mha_lib
    >>> ex = mha_lib.designed_example()
    >>> r = mha_lib.multi_head_attention(ex.X, ex.params)
    >>> images = plot_concat_blocks(Figure(figsize=(10, 2.9)), r.heads, ex.tokens)
    """
    if not isinstance(fig, Figure):
        raise TypeError(
            f"plot_concat_blocks: fig must be a matplotlib Figure, e.g. Figure(figsize=(10, 3)), got {type(fig).__name__}"
        )
    heads = _real(heads, "heads", "plot_concat_blocks")
    if heads.ndim != 3:
        raise ValueError(f"plot_concat_blocks: heads must be (h, n, d_v), got shape {heads.shape}")
    h, n, d_v = heads.shape
    tokens = _labels(tokens, n, "tokens", "plot_concat_blocks")
    titles = [f"head {i + 1}" for i in range(h)] if titles is None else list(titles)
    if len(titles) != h:
        raise ValueError(f"plot_concat_blocks: titles must hold one title per head ({h}), got {len(titles)}")
    colors = [None] * h if colors is None else list(colors)
    if len(colors) < h:  # a longer palette is fine: head i gets colour i
        raise ValueError(f"plot_concat_blocks: colors must hold a colour for each of the {h} heads, got {len(colors)}")
    axes = np.atleast_1d(
        fig.subplots(1, h, sharey=True, gridspec_kw=dict(left=0.06, right=0.91, bottom=0.2, top=0.74, wspace=0.08))
    )
    lo, hi = symmetric_limits(heads)  # one colour scale for every head
    images = []
    for i, ax in enumerate(axes):
        first, last = i * d_v + 1, (i + 1) * d_v  # head i's columns in Concat, counting from 1
        images.append(
            ax.imshow(
                heads[i],
                cmap=SIGNED_CMAP,
                vmin=lo,
                vmax=hi,
                aspect="auto",
                interpolation="nearest",
                extent=(first - 0.5, last + 0.5, n - 0.5, -0.5),
            )
        )
        ax.set_xticks([first, last], labels=[str(first), str(last)], fontsize=8)
        ax.set_yticks(range(n), labels=tokens, fontsize=9)
        ax.set_title(titles[i], fontsize=9)
        if colors[i] is not None:
            for side in ax.spines.values():
                side.set(color=colors[i], linewidth=3)
    fig.supxlabel("column of Concat (counting from 1)", fontsize=9)
    fig.colorbar(images[-1], cax=fig.add_axes([0.93, 0.2, 0.012, 0.54]), label="value (shared scale)")
    return images
