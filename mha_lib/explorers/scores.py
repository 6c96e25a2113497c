"""Explorers for notebook 03 (scores): why divide by sqrt(d_k), and every head's scores.

Two widgets:

``make_scaling_explorer()``
    Random queries and keys of size d_k (from ``np.random.default_rng(seed)``),
    scaling on or off: the spread of the dot products, and how peaked the
    softmax rows become.
``make_scores_explorer()``
    The running example "humpty dumpty sat on" with h heads of size d_k
    (tied to d_model/h, or free), scaling on or off: each head's scores, and the
    largest weight and entropy of every row of the resulting weights.

The compute functions (:func:`random_scores`, :func:`scores_setting`) are pure
and are what the tests and the notebook call; the widgets only draw them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from .. import attention_scores, divisors, init_params, load_running_example, multi_head_attention, softmax
from ..plotting import SIGNED_CMAP, WEIGHTS_CMAP, head_grid, plot_matrix
from ._base import Frame, build_explorer, checkbox, int_slider
from .lecture import CellLabels

__all__ = [
    "row_entropy",
    "RandomScores",
    "random_scores",
    "ScoresSetting",
    "scores_setting",
    "make_scaling_explorer",
    "ScalingDrawer",
    "make_scores_explorer",
    "ScoresDrawer",
    "HeadGrid",
    "heads_picture",
]


def row_entropy(weights):
    """Entropy of every row of attention weights, in bits.

    0 bits: all the weight on one key (one-hot). ``log2(n)`` bits: spread
    evenly over n keys (for n = 4 tokens, 2 bits). Zero weights contribute 0.

    Parameters
    ----------
    weights : ndarray, shape (..., n)
        Rows that sum to 1 (or are all 0, for a fully masked row: entropy 0).

    Returns
    -------
    ndarray, shape (...)
    """
    w = np.asarray(weights, dtype=float)
    logs = np.log2(np.where(w > 0, w, 1.0))  # log2(1) = 0 where w = 0, so 0*log 0 counts as 0
    return -(w * logs).sum(axis=-1) + 0.0  # + 0.0 turns -0.0 into 0.0


# --------------------------------------------------------------------------- random vectors


@dataclass(frozen=True)
class RandomScores:
    """Scores and weights of random "sentences" (see :func:`random_scores`)."""

    d_k: int
    scaled: bool
    scores: np.ndarray  # (trials, n, n)
    weights: np.ndarray  # (trials, n, n)

    @property
    def std(self):
        """Standard deviation of all the scores (about sqrt(d_k) unscaled, about 1 scaled)."""
        return float(self.scores.std())

    @property
    def mean_max_weight(self):
        """Average over all rows of the largest weight in the row (1 = one-hot)."""
        return float(self.weights.max(axis=-1).mean())

    @property
    def mean_entropy(self):
        """Average over all rows of the row's entropy in bits (log2 n = uniform)."""
        return float(row_entropy(self.weights).mean())


def random_scores(d_k, scaled=True, n=4, trials=500, rng=0):
    """Scores of ``trials`` random sentences of n tokens with standard-normal queries and keys.

    Parameters
    ----------
    d_k : int
        Size of each query and key.
    scaled : bool
        Divide by sqrt(d_k) (True) or not (``scale=1.0``).
    n : int
        Tokens per sentence.
    trials : int
        Number of random sentences.
    rng : int or numpy.random.Generator
        Seed or generator for the queries and keys.

    Returns
    -------
    RandomScores
    """
    if isinstance(d_k, bool) or not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k={d_k!r} must be a whole number of at least 1")
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    Q = rng.standard_normal((trials, n, d_k))  # (trials, n, d_k)
    K = rng.standard_normal((trials, n, d_k))  # (trials, n, d_k)
    scores = attention_scores(Q, K, scale=None if scaled else 1.0)  # (trials, n, n)
    return RandomScores(d_k=int(d_k), scaled=bool(scaled), scores=scores, weights=softmax(scores))


class ScalingDrawer:
    """Draws a :class:`RandomScores`: histogram of the scores (left), softmax of six rows (right).

    The axes are made once at fixed positions (no layout engine); each setting replaces the
    histogram's data, the limits, the titles and the heatmap's numbers.
    """

    WIDTH, HEIGHT = 9.0, 3.4  # inches

    def __init__(self):
        self.fig = None

    def _build(self, fig, n, rows):
        fig.clear()
        fig.set_layout_engine("none")
        W, H = self.WIDTH, self.HEIGHT
        fig.set_size_inches(W, H)
        box = _inch_box(W, H)
        self.ax_hist = fig.add_axes(box(0.75, 0.5, 3.9, H - 1.0))
        self.stairs = self.ax_hist.stairs(np.zeros(60), np.linspace(-4, 4, 61), fill=True, color="#0072B2",
                                          alpha=0.85)
        self.ax_hist.set_xlabel("score", fontsize=9)
        self.ax_hist.set_ylabel("count", fontsize=9)
        self.ax_hist.tick_params(labelsize=8)
        self.hist_title = self.ax_hist.set_title("", fontsize=9)
        self.rows_panel = _matrix_panel(
            fig, box, (5.65, 0.5, 2.35, H - 1.0), (rows, n), [f"sentence {i + 1}" for i in range(rows)],
            [f"key {j + 1}" for j in range(n)], cmap=WEIGHTS_CMAP, vmin=0.0, vmax=1.0, title="", xlabel="",
            ylabel="", cbar_label="weight", annotate=True, fs=8)
        self.rows_title = self.rows_panel[0].title
        self.rows_title.set_fontsize(9)
        self.fig, self.shape = fig, (rows, n)
        return True

    def __call__(self, fig, res):
        n = res.weights.shape[-1]
        rows = res.weights[:6, 0, :]  # first query row of the first 6 random sentences
        new_layout = self.fig is not fig or not fig.axes or self.shape != rows.shape
        if new_layout:
            self._build(fig, n, rows.shape[0])
        values = res.scores.ravel()
        lim = max(4.0, float(np.abs(values).max()))
        counts, edges = np.histogram(values, bins=np.linspace(-lim, lim, 61))
        self.stairs.set_data(counts, edges)
        self.ax_hist.set_xlim(-lim, lim)
        self.ax_hist.set_ylim(0, counts.max() * 1.05)
        how = "q·k / √d_k" if res.scaled else "q·k (not scaled)"
        self.hist_title.set_text(f"d_k = {res.d_k}: {values.size} scores {how}\n"
                                 f"standard deviation {res.std:.2f}")
        _, im, labels = self.rows_panel
        im.set_data(rows)
        labels.set_values(rows)
        self.rows_title.set_text(f"softmax of one row each\nmean largest weight {res.mean_max_weight:.2f}, "
                                 f"entropy {res.mean_entropy:.2f} / {math.log2(n):.0f} bits")
        # the histogram's axes change their ticks with the data: the whole axes is repainted
        dynamic = [self.ax_hist, im] + ([labels] if labels.get_visible() else []) + [self.rows_title]
        return Frame(dynamic + list(self.rows_panel[0].spines.values()), new_layout)


def make_scaling_explorer(seed=0, n=4, trials=500):
    """Widget: d_k (a power of two) and scaling on/off -> spread of q·k and peakedness of softmax.

    Returns
    -------
    ipywidgets.VBox
        See :func:`mha_lib.explorers._base.build_explorer`; controls ``d_k``
        (1, 2, 4, ..., 1024) and ``scaled``.
    """
    import ipywidgets as widgets

    controls = {
        "d_k": widgets.SelectionSlider(options=[2**i for i in range(11)], value=64, description="d_k",
                                       continuous_update=False, style={"description_width": "initial"}),
        "scaled": checkbox("divide by √d_k", True),
    }

    def compute(d_k, scaled):
        return random_scores(d_k, scaled=scaled, n=n, trials=trials, rng=seed)

    drawer = ScalingDrawer()
    box = build_explorer(controls, compute, drawer, figsize=(ScalingDrawer.WIDTH, ScalingDrawer.HEIGHT), layout=None,
                         title="Random queries and keys")
    box.drawer = drawer
    return box


# --------------------------------------------------------------------------- the running example


@dataclass(frozen=True)
class ScoresSetting:
    """One setting of the scores explorer and what it computes."""

    h: int
    d_k: int
    scaled: bool
    tokens: tuple
    scores: np.ndarray  # (h, n, n)
    weights: np.ndarray  # (h, n, n)

    @property
    def max_weight(self):
        """Largest weight of every row: shape (h, n)."""
        return self.weights.max(axis=-1)

    @property
    def entropy(self):
        """Entropy of every row in bits: shape (h, n)."""
        return row_entropy(self.weights)


def scores_setting(h=8, d_k=64, tie=True, scaled=True, X=None, tokens=None, seed=0):
    """Scores and weights of every head for the running example (or X) with h heads of size d_k.

    Parameters
    ----------
    h : int
        Number of heads.
    d_k : int
        Query/key size per head; ignored when ``tie`` is True (then d_k = d_model/h).
    tie : bool
        Use d_k = d_model / h (then h must divide d_model).
    scaled : bool
        Divide the dot products by sqrt(d_k) (True) or not (``scale=1.0``).
    X : ndarray, shape (n, d_model), optional
        Default: the running example's X (4, 512).
    tokens : sequence of str, optional
        Labels for the rows of X (default: the running example's tokens).
    seed : int
        Seed of :func:`mha_lib.init_params` (0 gives the running example's
        parameters for h=8).

    Raises
    ------
    ValueError
        With a one-line explanation when h does not divide d_model and ``tie`` is on.
    """
    if X is None:
        ex = load_running_example()
        X = ex.X  # (4, 512)
        if tokens is None:
            tokens = ex.tokens
    tokens = tuple(tokens) if tokens is not None else tuple(f"t{i + 1}" for i in range(len(X)))
    d_model = X.shape[-1]
    _check_heads(h)
    if tie:
        if d_model % h:
            raise ValueError(f"d_model={d_model} is not divisible by h={h}, so d_k = d_model/h is not a whole "
                             f"number: choose h in {divisors(d_model)}, or untick 'd_k = d_model / h'")
        d_k = d_model // h
    params = _cached_params(d_model, h, d_k, seed)
    r = multi_head_attention(X, params, scale=None if scaled else 1.0)
    return ScoresSetting(h=h, d_k=d_k, scaled=bool(scaled), tokens=tokens, scores=r.scores, weights=r.weights)


@functools.lru_cache(maxsize=8)
def _cached_params(d_model, h, d_k, seed):
    """``init_params(d_model, h, d_k=d_k, seed=seed)``, kept for the last few settings.

    Drawing 4 x 512 x 512 random numbers takes tens of ms; a slider that only changes the
    scaling or the temperature should not pay for it again. The explorers never modify them.
    """
    return init_params(d_model, h, d_k=d_k, seed=seed)


def _check_heads(h):
    if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h < 1:
        raise ValueError(f"h={h!r} is impossible: the number of heads must be a whole number of at least 1")


class _LayoutPool:
    """Keeps every layout already built on the figure (hidden when not in use); shows the current one.

    Building a layout (axes, ticks, titles, colour bars) is the slow part of a new picture; going
    back to a layout seen before (h = 4, then 8, then 4 again) only switches visibilities. At most
    ``KEEP`` layouts are kept (the oldest is removed).
    """

    WIDTH, HEIGHT = 10.0, 5.2  # inches
    KEEP = 8

    def __init__(self):
        self.key = None
        self.fig = None
        self.layouts = {}
        self.layout = None

    def _switch(self, fig, key, res):
        """Show the layout for ``key`` (building it if needed). True when the layout changed."""
        if self.fig is not fig or not fig.axes:
            fig.clear()
            fig.set_layout_engine("none")
            fig.set_size_inches(self.WIDTH, self.HEIGHT)
            self.fig, self.layouts, self.key = fig, {}, None
            self.title = fig.suptitle("", fontsize=10, y=1 - 0.1 / self.HEIGHT, va="top")
        if key == self.key:
            return False
        if self.layout is not None and self.key in self.layouts:
            for ax in self.layout.axes:
                ax.set_visible(False)
        if key in self.layouts:
            self.layouts[key] = self.layouts.pop(key)  # most recently used last
            fig.set_size_inches(self.layouts[key].size)
            for ax in self.layouts[key].axes:
                ax.set_visible(True)
        else:
            if len(self.layouts) >= self.KEEP:
                oldest = next(iter(self.layouts))
                for ax in self.layouts.pop(oldest).axes:
                    ax.remove()
            before = set(fig.axes)
            fig.set_size_inches(self.WIDTH, self.HEIGHT)  # the largest picture; _build may make it shorter
            layout = self._build(fig, res)
            layout.axes = [ax for ax in fig.axes if ax not in before]
            layout.size = tuple(fig.get_size_inches())
            self.layouts[key] = layout
        self.layout = self.layouts[key]
        self.key = key
        self.title.set_y(1 - 0.1 / self.layout.size[1])
        return True

    def head_panels(self):
        """The axes of the head panels now shown."""
        return [ax for ax, _, _ in self.layout.grid.panels]

    def cell_texts(self, i):
        """The numbers written in head i's cells (0-based), row by row ([] when none are written)."""
        labels = self.layout.grid.panels[i][2]
        return labels.texts() if labels.get_visible() else []


class ScoresDrawer(_LayoutPool):
    """Draws a :class:`ScoresSetting`: every head's scores (left) and two row statistics (right).

    Call it as ``drawer(fig, res)``; it returns a :class:`~mha_lib.explorers._base.Frame`. The axes
    are placed by hand (no layout engine) and built once per layout (h, tokens); a setting with the
    same layout only changes the data of the images, the numbers in the cells, the colour scale and
    the title, and only those are painted again over a cached picture of the rest.
    """

    WIDTH, HEIGHT = 11.0, 5.2  # inches
    RIGHT = 3.2  # inches for the two row-statistics panels

    def _build(self, fig, res):
        W, H = self.WIDTH, self.HEIGHT
        box = _inch_box(W, H)
        n = len(res.tokens)
        annotate = res.h <= 8
        lay = SimpleNamespace()
        lay.grid = HeadGrid(fig, res.h, res.tokens, (0.05, 0.4, W - self.RIGHT - 0.1, H - 0.45),
                            cmap=SIGNED_CMAP, vmin=-1.0, vmax=1.0, cbar_label="score (shared scale)",
                            annotate=annotate, signed=True)
        heads = [str(i + 1) for i in range(res.h)]
        x0 = W - self.RIGHT + 0.45
        w = self.RIGHT - 0.45 - 0.65
        block = (H - 0.4) / 2
        title_h, bottom = 0.42, 0.42
        ax_h = block - title_h - bottom
        lay.max_panel = _matrix_panel(
            fig, box, (x0, 0.4 + title_h, w, ax_h), (res.h, n), heads, res.tokens, cmap=WEIGHTS_CMAP,
            vmin=0.0, vmax=1.0, title="largest weight in each row\n(1 = all on one token)", xlabel="query token",
            ylabel="head", cbar_label="weight", annotate=annotate)
        lay.ent_panel = _matrix_panel(
            fig, box, (x0, 0.4 + block + title_h, w, ax_h), (res.h, n), heads, res.tokens, cmap=WEIGHTS_CMAP,
            vmin=0.0, vmax=math.log2(n) if n > 1 else 1.0,
            title=f"entropy of each row, bits\n({math.log2(n):.0f} = spread evenly, 0 = one token)",
            xlabel="query token", ylabel="head", cbar_label="bits", annotate=annotate)
        return lay

    def __call__(self, fig, res):
        new_layout = self._switch(fig, (res.h, res.tokens), res)
        lay = self.layout
        lay.grid.update(res.scores, clim=_symmetric(res.scores))
        dynamic = lay.grid.dynamic(with_colorbar=True)
        for (ax, im, labels), M in ((lay.max_panel, res.max_weight), (lay.ent_panel, res.entropy)):
            im.set_data(M)
            labels.set_values(M)
            dynamic += [im] + ([labels] if labels.get_visible() else []) + list(ax.spines.values())
        how = "scaled by 1/√d_k" if res.scaled else "NOT scaled"
        self.title.set_text(f"scores of h = {res.h} heads, d_k = {res.d_k}, {how}  "
                            "(rows: query token, columns: key token)")
        dynamic.append(self.title)
        return Frame(dynamic, new_layout)


def _link_dk_to_h(box, d_model_of):
    """Keep the (disabled) d_k slider showing d_model/h while "d_k = d_model / h" is ticked.

    The slider is moved without triggering a redraw: the compute function
    ignores d_k when tied, so the picture is already right. ``d_model_of()``
    gives the current d_model (it may depend on another control).
    """
    controls = box.controls

    def sync(change=None):
        tied = controls["tie"].value
        controls["d_k"].disabled = tied
        d_model, h = d_model_of(), controls["h"].value
        if tied and d_model % h == 0:
            controls["d_k"].unobserve(box.refresh, names="value")
            try:
                controls["d_k"].value = d_model // h
            finally:
                controls["d_k"].observe(box.refresh, names="value")

    for name in ("h", "tie", "sentence"):
        if name in controls:
            controls[name].observe(sync, names="value")
    sync()


def make_scores_explorer(X=None, tokens=None, seed=0):
    """Widget: h, d_k (tied to d_model/h or free) and scaling -> every head's scores and row statistics.

    Controls: ``h``, ``d_k``, ``tie`` (d_k = d_model/h), ``scaled``. An
    impossible combination (h not dividing d_model while tied) shows a message.

    Returns
    -------
    ipywidgets.VBox
        See :func:`mha_lib.explorers._base.build_explorer`.
    """
    controls = {
        "h": int_slider("heads h", 8, 1, 16),
        "d_k": int_slider("d_k", 64, 1, 512, disabled=True),
        "tie": checkbox("d_k = d_model / h", True),
        "scaled": checkbox("divide by √d_k", True),
    }
    d_model = 512 if X is None else np.shape(X)[-1]

    def compute(h, d_k, tie, scaled):
        return scores_setting(h=h, d_k=d_k, tie=tie, scaled=scaled, X=X, tokens=tokens, seed=seed)

    drawer = ScoresDrawer()
    box = build_explorer(controls, compute, drawer, figsize=(ScoresDrawer.WIDTH, ScoresDrawer.HEIGHT),
                         layout=None, title="Scores of every head (running example)")
    box.drawer = drawer
    _link_dk_to_h(box, lambda: d_model)
    return box


# --------------------------------------------------------------------------- fast drawing (shared with softmax.py)

_CHAR = 0.6 / 72  # inches per character per point of font size, roughly (DejaVu Sans)


class CellNumbers(CellLabels):
    """The numbers written in the cells of one heatmap, pasted as cached bitmaps (see ``CellLabels``).

    Unlike ``CellLabels`` (weights on [0, 1] only), the format and the colour
    scale are free: each number is white on a dark cell and black on a light
    one, by the same rule as :func:`mha_lib.plotting.plot_matrix`.
    """

    def __init__(self, ax, fontsize, image, fmt=".2f", signed=False):
        super().__init__(ax, fontsize)
        self.image, self.fmt, self.signed = image, fmt, signed

    def texts(self):
        """The strings shown, in row-major order (what a test compares)."""
        return [] if self.values is None else [format(v, self.fmt) for v in self.values.ravel()]

    def draw(self, renderer):
        if self.values is None or not self.get_visible() or not hasattr(renderer, "buffer_rgba"):
            return
        buf = np.asarray(renderer.buffer_rgba())  # (H, W, 4) uint8, the canvas itself
        height, width = buf.shape[:2]
        rows, cols = self.values.shape
        lo, hi = self.image.get_clim()
        rr, cc = np.mgrid[0:rows, 0:cols]
        centres = self.ax.transData.transform(np.column_stack([cc.ravel(), rr.ravel()]))  # pixels, y up
        for (x, y), value in zip(centres, self.values.ravel()):
            sprite = self._sprite(renderer, format(value, self.fmt))
            sh, sw = sprite.shape[:2]
            x0, y0 = int(round(x - sw / 2)), int(round(height - y - sh / 2))
            if x0 < 0 or y0 < 0 or x0 + sw > width or y0 + sh > height:
                continue
            frac = (value - lo) / (hi - lo) if hi > lo else 0.5
            dark = abs(frac - 0.5) > 0.3 if self.signed else frac < 0.6
            color = 255.0 if dark else 0.0
            region = buf[y0:y0 + sh, x0:x0 + sw, :3]
            region[...] = (region * (1.0 - sprite) + color * sprite).astype(np.uint8)
        self.stale = False


def _inch_box(W, H):
    def box(x0, y_top, w, h):  # inches from the top-left corner -> figure fractions
        return [x0 / W, 1 - (y_top + h) / H, w / W, h / H]
    return box


class HeadGrid:
    """h heatmaps (one per head) at positions computed by hand, with one shared colour bar.

    Built once per layout (h, tokens, region); afterwards :meth:`update`
    only changes image data, colour limits and the numbers in the cells.
    ``region`` is (left, top, width, height) in inches on a figure of size
    ``(W, H)`` inches.
    """

    def __init__(self, fig, h, tokens, region, *, cmap, vmin, vmax, cbar_label, annotate, signed,
                 fs=8, panel_cap=2.3, shrink=False):
        W, H = fig.get_size_inches()
        x0, top, width, height = region
        n = len(tokens)
        rows, cols = head_grid(h)
        longest = max(len(t) for t in tokens)
        cbar_w = 0.12 + 0.75  # bar + its tick labels and label
        gap_x = 0.1
        ylab = fs / 72 + 0.12  # the "query" label
        left_labels = longest * fs * _CHAR + 0.08
        title_h = fs / 72 * 1.5 + 0.05
        avail_w = width - ylab - left_labels - cbar_w - 0.15
        panel = min(panel_cap, (avail_w - gap_x * (cols - 1)) / cols)
        tfs = min(fs, max(5.0, 0.8 * panel * 72 / n))  # token labels on the keys axis
        rotate = longest * tfs * _CHAR > 0.9 * panel / n
        bottom_labels = (longest * tfs * _CHAR if rotate else tfs / 72 * 1.4) + 0.08 + fs / 72 * 1.4
        gap_y = title_h + 0.06
        panel = min(panel, (height - title_h - bottom_labels - gap_y * (rows - 1)) / rows)
        grid_w = cols * panel + (cols - 1) * gap_x
        grid_h = rows * panel + (rows - 1) * gap_y
        gx = x0 + ylab + left_labels + max(0.0, (avail_w - grid_w) / 2)
        spare = max(0.0, height - title_h - grid_h - bottom_labels)
        if shrink:  # make the figure just as tall as the grid needs (fewer rows: a shorter picture)
            H -= spare
            fig.set_size_inches(W, H)
            spare = 0.0
        box = _inch_box(W, H)
        gy = top + title_h + spare / 2  # centred in the region
        afs = min(fs - 1, panel * 72 / n / (3.0 if signed else 2.6))
        self.annotate = annotate and afs >= 5.0
        self.panels = []
        extent = (-0.5, n - 0.5, n - 0.5, -0.5)
        for i in range(h):
            r, c = divmod(i, cols)
            ax = fig.add_axes(box(gx + c * (panel + gap_x), gy + r * (panel + gap_y), panel, panel))
            im = ax.imshow(np.zeros((n, n)), cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest",
                           aspect="auto", extent=extent)
            ax.set_title(f"head {i + 1}", fontsize=fs, pad=3)
            if i + cols >= h:  # bottom panel of its column
                ax.set_xticks(range(n), labels=list(tokens), fontsize=tfs, rotation=90 if rotate else 0)
                ax.set_xlabel("key", fontsize=fs, labelpad=2)
            else:
                ax.set_xticks([])
            if c == 0:
                ax.set_yticks(range(n), labels=list(tokens), fontsize=tfs)
                ax.set_ylabel("query", fontsize=fs, labelpad=2)
            else:
                ax.set_yticks([])
            ax.tick_params(length=2, pad=1)
            labels = CellNumbers(ax, afs, im, signed=signed)
            labels.set_visible(self.annotate)
            ax.add_artist(labels)
            self.panels.append((ax, im, labels))
        self.cax = fig.add_axes(box(gx + grid_w + 0.15, gy, 0.12, grid_h))
        self.cbar = fig.colorbar(self.panels[0][1], cax=self.cax)
        self.cbar.set_label(cbar_label, fontsize=fs)
        self.cax.tick_params(labelsize=fs - 1)

    def update(self, matrices, clim=None):
        """Show these (h, n, n) matrices; ``clim`` = (lo, hi) changes the shared colour scale."""
        for (ax, im, labels), M in zip(self.panels, matrices):
            im.set_data(M)
            if clim is not None:
                im.set_clim(*clim)  # the colour bar follows the first image
            labels.set_values(M)

    def dynamic(self, with_colorbar=False):
        """Artists that change with the numbers (images, cell numbers, frames drawn over the images)."""
        out = [im for _, im, _ in self.panels] + [lab for _, _, lab in self.panels if lab.get_visible()]
        out += [spine for ax, _, _ in self.panels for spine in ax.spines.values()]
        if with_colorbar:
            out.append(self.cax)
        return out


def _matrix_panel(fig, box, rect, M_shape, row_labels, col_labels, *, cmap, vmin, vmax, title, xlabel,
                  ylabel, cbar_label, annotate, fs=7):
    """One heatmap with its own colour bar at a fixed position; returns (ax, image, numbers)."""
    x0, top, w, h = rect
    ax = fig.add_axes(box(x0, top, w, h))
    rows, cols = M_shape
    im = ax.imshow(np.zeros(M_shape), cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest", aspect="auto",
                   extent=(-0.5, cols - 0.5, rows - 0.5, -0.5))
    rfs = min(fs, max(4.5, 0.8 * h * 72 / rows))
    ax.set_yticks(range(rows), labels=list(row_labels), fontsize=rfs)
    ax.set_xticks(range(cols), labels=list(col_labels), fontsize=fs)
    ax.tick_params(length=2, pad=1)
    ax.set_title(title, fontsize=fs + 1, pad=3)
    ax.set_xlabel(xlabel, fontsize=fs, labelpad=2)
    ax.set_ylabel(ylabel, fontsize=fs, labelpad=2)
    cax = fig.add_axes(box(x0 + w + 0.08, top, 0.1, h))
    cbar = fig.colorbar(im, cax=cax)
    cbar.set_label(cbar_label, fontsize=fs)
    cax.tick_params(labelsize=fs - 1)
    afs = min(fs, 0.75 * h * 72 / rows, w * 72 / cols / 2.6)
    labels = CellNumbers(ax, afs, im)
    labels.set_visible(annotate and afs >= 5.0)
    ax.add_artist(labels)
    return ax, im, labels


def _symmetric(M):
    m = float(np.max(np.abs(M)))
    return (-m, m) if m > 0 else (-1.0, 1.0)


def heads_picture(matrices, tokens, *, signed=None, cbar_label=None, title=None, dpi=90):
    """A still figure of every head's (n, n) matrix, drawn like the explorers (fast: no layout engine).

    Parameters
    ----------
    matrices : ndarray, shape (h, n, n)
        Scores (signed: diverging colours, symmetric limits) or weights (shared scale [0, 1]).
    tokens : sequence of str, length n
    signed : bool, optional
        Default: True when any value is negative.
    cbar_label, title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.figure import Figure

    matrices = np.asarray(matrices, dtype=float)
    if matrices.ndim != 3 or matrices.shape[1:] != (len(tokens), len(tokens)):
        raise ValueError(f"heads_picture: matrices must have shape (h, n, n) with n = {len(tokens)}, "
                         f"got {matrices.shape}")
    h = matrices.shape[0]
    if signed is None:
        signed = bool((matrices < 0).any())
    fig = Figure(figsize=(10.0, 5.2), dpi=dpi)
    top = 0.4 if title else 0.05
    grid = HeadGrid(fig, h, tokens, (0.05, top, 9.9, 5.2 - top - 0.05), cmap=SIGNED_CMAP if signed else WEIGHTS_CMAP,
                    vmin=0.0, vmax=1.0, cbar_label=cbar_label or "", annotate=h <= 8, signed=signed, panel_cap=2.2,
                    shrink=True)
    grid.update(matrices, clim=_symmetric(matrices) if signed else None)
    if title:
        fig.suptitle(title, fontsize=10, y=1 - 0.1 / fig.get_size_inches()[1], va="top")
    return fig
