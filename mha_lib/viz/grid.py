"""The still heatmaps of the series (matplotlib): the notebooks' and slides' per-head pictures.

:func:`plot_heatmap` draws one matrix (the still figures of the browser pictures too, :func:`.frames.frame_figure`),
:class:`HeadGrid` h of them on a shared scale (both update in place); :func:`heads_picture` is the notebooks' still
picture of every head; :func:`bar_panel` draws labelled bars.
"""

from __future__ import annotations

import numpy as np
from matplotlib import colormaps, rcParams
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.patches import Patch, PathPatch
from matplotlib.path import Path
from matplotlib.text import Text

from ..plotting import SIGNED_CMAP, WEIGHTS_CMAP, head_grid, symmetric_limits
from .base import LayoutDrawer, check_dpi, inch_box, literal, short, text_family

__all__ = [
    "MASKED_COLOR",
    "CellNumbers",
    "Heatmap",
    "plot_heatmap",
    "HeadGrid",
    "HeadGridDrawer",
    "heads_picture",
    "head_titles",
    "token_labels",
    "bar_panel",
]

MASKED_COLOR = "#C8C8C8"  # masked cells: light grey, hatched
_CHAR = 0.64 / 72  # inches per character per point of font size, roughly (DejaVu Sans, lower case)


def head_titles(h, roles=None):
    """Panel titles: "head 1", "head 2", ... or "head 1: previous token", ... when the heads have roles."""
    return [f"head {i + 1}" + (f": {roles[i]}" if roles else "") for i in range(h)]


def token_labels(tokens, max_chars=14):
    """Labels for tokens: shortened with "..." and escaped so they are drawn as typed."""
    return [literal(short(t, max_chars)) for t in tokens]


class CellNumbers(Artist):
    """The numbers in the cells of one heatmap, white on dark cells, black on light ones; none in masked cells.

    Drawn as text, made smaller when the widest number would not fit its cell (e.g. bold, in high contrast).
    """

    def __init__(self, ax, fontsize, image, fmt=".2f", signed=False):
        super().__init__()
        self.ax, self.fontsize, self.image, self.fmt, self.signed = ax, fontsize, image, fmt, signed
        self.values = None
        self.set_figure(ax.figure)
        self.set_transform(ax.transData)

    def set_values(self, values):
        self.values = np.asarray(values, dtype=float)
        self.stale = True

    def texts(self):
        """The strings shown, row by row ("" for a masked cell): what a test compares."""
        if self.values is None or not self.get_visible():
            return []
        return ["" if np.isnan(v) else format(v, self.fmt) for v in self.values.ravel()]

    def cells(self, transform=None):
        """(x, y, text, white) of every cell with a number: its centre (column, row in data coordinates, or through
        ``transform``); white on dark cells (tools/slides_layout.py reads them too)."""
        lo, hi = self.image.get_clim()
        for (row, col), value in np.ndenumerate(self.values):
            if not np.isnan(value):
                frac = (value - lo) / (hi - lo) if hi > lo else 0.5
                x, y = (col, row) if transform is None else transform.transform((col, row))
                yield x, y, format(value, self.fmt), abs(frac - 0.5) > 0.3 if self.signed else frac < 0.6

    def draw(self, renderer):
        if self.values is None or not self.get_visible():
            return
        cells = list(self.cells())
        cell_px = abs(self.ax.transData.transform((1, 0))[0] - self.ax.transData.transform((0, 0))[0])
        widest = max((len(text) for *_xy, text, _w in cells), default=1)
        bold = rcParams["font.weight"] in ("bold", 700, "heavy")
        # a digit is about 0.64 em wide (0.7 bold): the widest number stays inside 90 % of its cell
        size = min(self.fontsize, 0.9 * cell_px / (widest * (0.7 if bold else 0.64)) * 72 / renderer.dpi)
        self.drawn_size = size  # points: what a test measures
        for x, y, text, white in cells:
            Text(
                x,
                y,
                text,
                color="white" if white else "black",
                fontsize=size,
                ha="center",
                va="center",
                figure=self.figure,
                transform=self.ax.transData,
            ).draw(renderer)
        self.stale = False


_T = np.arange(-5, 6, 2) / 6  # a cell's hatch lines, 1/3 apart: y = t - x (data units) from its bottom-left corner
_SX, _EX = np.maximum(_T, 0), np.minimum(_T + 1, 1)  # where each line enters and leaves the cell
_CELL_HATCH = np.stack([np.stack([_SX, _T - _SX], -1), np.stack([_EX, _T - _EX], -1)], 1)  # (6, 2, 2)


def _hatch_segments(masked):
    """Diagonal segments (data coordinates) hatching the masked cells: plain lines draw 10x faster than a hatch."""
    rows, cols = np.nonzero(masked)
    return (_CELL_HATCH + np.stack([cols - 0.5, rows + 0.5], -1)[:, None, None]).reshape(-1, 2, 2)


class Heatmap:
    """One heatmap drawn by :func:`plot_heatmap`: ``ax``, ``image``, ``numbers``, ``hatch``."""

    __slots__ = ("ax", "image", "numbers", "hatch", "cbar")

    def __init__(self, ax, image, numbers, hatch):
        self.ax, self.image, self.numbers, self.hatch, self.cbar = ax, image, numbers, hatch, None

    def set_data(self, M, mask=None, clim=None):
        """Show matrix M; ``mask`` (True = may attend) greys out the other cells; ``clim`` = (lo, hi)."""
        M = np.asarray(M, dtype=float)
        masked = np.zeros(M.shape, bool) if mask is None else ~np.broadcast_to(np.asarray(mask, bool), M.shape)
        self.image.set_data(np.ma.array(M, mask=masked))
        if clim is not None:
            self.image.set_clim(*clim)
        self.numbers.set_values(np.where(masked, np.nan, M))
        seg = _hatch_segments(masked).reshape(-1, 2)  # (2k, 2): start, end, start, end, ...
        self.hatch.set_path(Path(seg, np.tile([Path.MOVETO, Path.LINETO], len(seg) // 2)))
        self.hatch.set_visible(bool(masked.any()))
        return self.artists()

    def artists(self):
        """The artists that change with the data (in drawing order)."""
        numbers = [self.numbers] if self.numbers.get_visible() else []
        return [self.image, self.hatch, *numbers, *self.ax.spines.values()]


def plot_heatmap(
    ax,
    M,
    row_labels=None,
    col_labels=None,
    *,
    mask=None,
    cmap=WEIGHTS_CMAP,
    vmin=0.0,
    vmax=1.0,
    numbers=True,
    fmt=".2f",
    fontsize=8,
    number_size=None,
    signed=None,
    rotate=None,
):
    """Draw a (rows, cols) matrix on ``ax`` with labelled rows and columns; return a :class:`Heatmap`.

    Parameters
    ----------
    ax : matplotlib Axes
    M : ndarray, shape (rows, cols)
    row_labels, col_labels : sequence of str, optional
        Tokens (drawn literally, shortened with "..." past 14 characters); None: no ticks.
    mask : ndarray of bool, shape (rows, cols), optional
        True = may attend. The other cells are grey and hatched, and get no number.
    cmap, vmin, vmax, numbers, fmt, number_size, signed, rotate
        Colour map and limits (the same limits share a scale); the values written in the cells (format,
        size: default fontsize - 1; colours for a diverging map, default: cmap is the signed map); turn the
        column labels (default: when they would not fit).

    Returns
    -------
    Heatmap
        Its ``set_data(M, mask=None, clim=None)`` updates the picture in place.
    """
    M = np.asarray(M, dtype=float)
    if M.ndim != 2:
        raise ValueError(f"plot_heatmap: M must be 2-D (rows, cols), got shape {M.shape}")
    rows, cols = M.shape
    for name, labels, size in (("row_labels", row_labels, rows), ("col_labels", col_labels, cols)):
        if labels is not None and len(labels) != size:
            raise ValueError(f"plot_heatmap: {len(labels)} {name} for {size} {name[:3]}s of M; give one per {name[:3]}")
    image = ax.imshow(
        np.zeros((rows, cols)),
        cmap=colormaps[cmap].with_extremes(bad=MASKED_COLOR),
        vmin=vmin,
        vmax=vmax,
        interpolation="nearest",
        aspect="auto",
        extent=(-0.5, cols - 0.5, rows - 0.5, -0.5),
    )
    hatch = ax.add_patch(PathPatch(Path(np.zeros((0, 2))), fill=False, edgecolor="#737373", linewidth=0.7))
    xlabels, ylabels = (token_labels(() if t is None else t) for t in (col_labels, row_labels))
    if rotate is None:  # turn the column labels when the longest is wider than a column
        width = ax.get_position().width * ax.figure.figure.get_size_inches()[0]
        rotate = max(map(len, xlabels), default=0) * fontsize * _CHAR > 0.9 * width / max(cols, 1)
    ax.set_xticks(
        range(len(xlabels)), labels=xlabels, fontsize=fontsize, rotation=90 if rotate else 0, fontfamily=text_family()
    )
    ax.set_yticks(range(len(ylabels)), labels=ylabels, fontsize=fontsize, fontfamily=text_family())
    ax.set(xlim=(-0.5, cols - 0.5), ylim=(rows - 0.5, -0.5))
    ax.tick_params(length=2, pad=1)
    cells = CellNumbers(
        ax, number_size or fontsize - 1, image, fmt=fmt, signed=cmap == SIGNED_CMAP if signed is None else signed
    )
    cells.set_visible(bool(numbers))
    ax.add_artist(cells)
    heat = Heatmap(ax, image, cells, hatch)
    heat.set_data(M, mask)
    return heat


class HeadGrid:
    """h heatmaps (one per head) in a region of a figure, one shared colour scale and colour bar.

    Built once per layout (h, tokens, region); afterwards :meth:`update` only changes data, colour
    limits, titles, caption and the masked-cell legend. Sizes are in inches.

    Parameters
    ----------
    fig : matplotlib Figure
        Without a layout engine; its size is read to place the axes.
    h : int
        Number of panels.
    row_tokens, col_tokens : sequence of str
        Row labels (queries, n) and column labels (keys, m; default: the row tokens).
    region : (left, top, width, height), optional
        From the figure's top-left corner; default: the whole figure.
    cmap, vmin, vmax, signed, cbar_label, annotate, number_fs
        Colour map, initial shared limits, number colours for a diverging map, colour-bar label; numbers
        in the cells (only while they fit; largest size ``number_fs``, default fs - 1).
    titles, caption, row_label, col_label : str
        Panel titles (default "head 1", ...), a line above the grid (None: no room kept for it), axis names.
    fs, panel_cap, ncols, shrink
        Font size, largest panel side, columns (default: the largest cells), make the figure as tall as needed.
    min_label_fs : float
        Key labels are made smaller to stay level down to this size, then turned (the lecture screen asks
        for large labels: turned rather than small).
    mask_label : str
        The legend's name for the hatched cells (shown while some cell is masked).

    Its ``panels`` (Heatmaps), ``cbar`` (Colorbar), ``caption`` (Text) and ``legend`` are the artists it drew.
    """

    def __init__(
        self,
        fig,
        h,
        row_tokens,
        col_tokens=None,
        region=None,
        *,
        cmap=WEIGHTS_CMAP,
        vmin=0.0,
        vmax=1.0,
        cbar_label="attention weight (shared scale)",
        annotate=True,
        titles=None,
        caption="",
        row_label="query",
        col_label="key",
        fs=8,
        panel_cap=2.3,
        shrink=False,
        ncols=None,
        signed=None,
        min_label_fs=6.5,
        number_fs=None,
        mask_label="masked",
    ):
        W, H = fig.get_size_inches()
        col_tokens = row_tokens if col_tokens is None else col_tokens
        x0, top, width, height = region if region is not None else (0.05, 0.05, W - 0.1, H - 0.1)
        n, m = len(row_tokens), len(col_tokens)
        cap = panel_cap / max(n, m)  # the largest cell side
        if ncols is None:  # the number of columns that gives the largest cells in this region

            def cell_of(c):
                r = -(-h // c)
                return min((width - 1.3 - (c - 1) * 0.1) / c / m, (height - 1.0 - r * 0.3) / r / n, cap)

            ncols = max(range(1, h + 1), key=lambda c: (round(cell_of(c), 2), -c))
        rows, cols = head_grid(h, ncols)
        row_long, col_long = (max(map(len, token_labels(t))) for t in (row_tokens, col_tokens))
        cap_h = (fs / 72 * 1.6 + 0.05) if caption is not None else 0.0
        ylab = fs / 72 + 0.12 if row_label else 0.0  # room for the axis names, when there are any
        xlab = fs / 72 * 1.4 if col_label else 0.0
        title_h, gap_x = fs / 72 * 1.5 + 0.05, 0.1
        gap_y = title_h + 0.06
        left_labels = row_long * fs * _CHAR + 0.08
        avail_w = width - ylab - left_labels - 0.92 - 0.15  # 0.92: the colour bar and its labels
        panel_w = min(panel_cap, (avail_w - gap_x * (cols - 1)) / cols)
        tfs = min(fs, max(5.0, 0.8 * panel_w * 72 / max(n, m)))

        def fit(rotate):  # room under the panels for the key labels, and the (square) cell side that is left
            bottom = (col_long * tfs * _CHAR if rotate else tfs / 72 * 1.4) + 0.08 + xlab
            return bottom, min(panel_w / m, (height - cap_h - title_h - bottom - gap_y * (rows - 1)) / rows / n, cap)

        bottom_labels, cell = fit(False)
        rotate = col_long * tfs * _CHAR > 0.95 * cell  # the key labels are wider than their cells
        if rotate and 0.95 * cell / (col_long * _CHAR) >= min_label_fs:  # a smaller font fits: no need to turn them
            tfs, rotate = 0.95 * cell / (col_long * _CHAR), False
        elif rotate:
            bottom_labels, cell = fit(True)
        panel_w, panel_h = cell * m, cell * n
        grid_w, grid_h = cols * panel_w + (cols - 1) * gap_x, rows * panel_h + (rows - 1) * gap_y
        gx = x0 + ylab + left_labels + max(0.0, (avail_w - grid_w) / 2)
        spare = max(0.0, height - cap_h - title_h - grid_h - bottom_labels)
        if shrink:
            H, spare = H - spare, 0.0
            fig.set_size_inches(W, H)
        box = inch_box(W, H)
        gy = top + cap_h + title_h + (spare / 2 if caption is None else 0.0)  # under its caption
        signed = cmap == SIGNED_CMAP if signed is None else signed
        afs = min(number_fs or fs - 1, cell * 72 / (3.0 if signed else 2.6))
        annotate = bool(annotate) and afs >= 5.0
        self.caption = fig.text(
            gx / W,
            1 - (top + 0.02) / H,
            literal(caption or ""),
            ha="left",
            va="top",
            fontsize=fs + 1,
            fontfamily=text_family(),
        )
        self.panels, self.titles = [], []
        titles = [literal(t) for t in titles] if titles else head_titles(h)
        for i in range(h):
            r, c = divmod(i, cols)
            ax = fig.add_axes(box(gx + c * (panel_w + gap_x), gy + r * (panel_h + gap_y), panel_w, panel_h))
            bottom, first = i + cols >= h, c == 0
            self.panels.append(
                plot_heatmap(
                    ax,
                    np.zeros((n, m)),
                    row_tokens if first else None,
                    col_tokens if bottom else None,
                    cmap=cmap,
                    vmin=vmin,
                    vmax=vmax,
                    numbers=annotate,
                    fontsize=tfs,
                    number_size=afs,
                    signed=signed,
                    rotate=rotate,
                )
            )
            self.titles.append(ax.set_title(titles[i], fontsize=fs, pad=3))
            ax.set_xlabel(col_label if bottom else "", fontsize=fs, labelpad=2)
            ax.set_ylabel(row_label if first else "", fontsize=fs, labelpad=2)
        self.cbar = fig.colorbar(self.panels[0].image, cax=fig.add_axes(box(gx + grid_w + 0.15, gy, 0.12, grid_h)))
        self.cbar.set_label(cbar_label, fontsize=fs)
        self.cbar.ax.tick_params(labelsize=fs - 1)
        handle = Patch(facecolor=MASKED_COLOR, edgecolor="#737373", hatch="///", label=mask_label)
        self.legend = fig.legend(
            handles=[handle],
            loc="upper left",
            fontsize=fs - 1,
            frameon=False,
            bbox_to_anchor=box(gx + grid_w + 0.05, gy + grid_h + 0.05, 0, 0)[:2],
            handlelength=1.2,
            borderaxespad=0,
        )
        self.legend.set_visible(False)
        self.shape, self.dynamic_titles = (h, n, m), False

    def update(self, matrices, clim=None, mask=None, titles=None, caption=None):
        """Show these (h, n, m) matrices and return the artists that changed.

        ``clim`` = (lo, hi) changes the shared colour scale; ``mask`` (True = may attend, shape
        (n, m) or (h, n, m)) greys out the other cells; ``titles`` / ``caption`` replace texts.
        """
        matrices = np.asarray(matrices, dtype=float)
        if matrices.shape != self.shape:
            raise ValueError(f"HeadGrid.update: matrices must have shape {self.shape}, got {matrices.shape}")
        masks = None if mask is None else np.broadcast_to(np.asarray(mask, bool), self.shape)
        changed = []
        for i, (heat, M) in enumerate(zip(self.panels, matrices, strict=False)):
            changed += heat.set_data(M, None if masks is None else masks[i], clim)
        if titles is not None:
            self.dynamic_titles = True  # from now on the titles are redrawn with the data
            for t, s in zip(self.titles, titles, strict=False):
                t.set_text(literal(s))
        if caption is not None:
            self.caption.set_text(literal(caption))
        self.legend.set_visible(masks is not None and not masks.all())
        changed += self.titles if self.dynamic_titles else []
        return changed + [self.caption, self.legend] + ([self.cbar.ax] if clim is not None else [])


class HeadGridDrawer(LayoutDrawer):
    """A :class:`~mha_lib.viz.base.LayoutDrawer` whose layout is a :class:`HeadGrid` (or holds one as
    ``.grid``): what a test reads of the head panels on screen."""

    def head_panels(self):
        """The axes of the head panels now shown."""
        return [heat.ax for heat in getattr(self.layout, "grid", self.layout).panels]

    def cell_texts(self, i):
        """The numbers written in head i's cells (0-based), row by row ([] when none are written)."""
        return getattr(self.layout, "grid", self.layout).panels[i].numbers.texts()


def heads_picture(
    matrices,
    tokens,
    *,
    signed=None,
    cbar_label=None,
    title=None,
    dpi=90,
    col_tokens=None,
    mask=None,
    titles=None,
    annotate=None,
    fig=None,
):
    """A still figure of every head's (n, m) matrix, drawn by :class:`HeadGrid` (as the explorers draw).

    Parameters
    ----------
    matrices : ndarray, shape (h, n, m)
        Scores (signed: diverging colours, symmetric limits) or weights (shared scale [0, 1]).
    tokens : sequence of str, length n
        Query (row) tokens.
    signed : bool, optional
        Default: True when any value is negative.
    cbar_label, title : str, optional
    col_tokens : sequence of str, length m, optional
        Key (column) tokens; default: ``tokens``.
    mask : ndarray of bool, shape (n, m) or (h, n, m), optional
        True = may attend; the other cells are drawn grey and hatched.
    titles : sequence of str, optional
        Panel titles (default "head 1", ...).
    annotate : bool, optional
        Numbers in the cells (default: up to 8 heads).
    fig : matplotlib Figure, optional
        Draw on this figure (its axes are replaced; its height fits the grid); default: a new 10 x 5.2 inch one.

    Returns
    -------
    matplotlib.figure.Figure
    """
    matrices = np.asarray(matrices, dtype=float)
    cols = tokens if col_tokens is None else col_tokens
    if matrices.ndim != 3 or matrices.shape[1:] != (len(tokens), len(cols)):
        raise ValueError(
            f"heads_picture: matrices must have shape (h, n, m) with n = {len(tokens)} tokens and "
            f"m = {len(cols)} key tokens, got {matrices.shape}"
        )
    signed = bool(np.nanmin(matrices) < 0) if signed is None else signed
    region = None if fig is not None else (0.05, 0.05, 9.9, 5.1)  # None: the whole figure
    fig = Figure(figsize=(10.0, 5.2), dpi=check_dpi(dpi, "heads_picture")) if fig is None else fig
    fig.clear()
    fig.set_layout_engine("none")
    grid = HeadGrid(
        fig,
        len(matrices),
        tokens,
        cols,
        region,
        signed=signed,
        caption=title,
        titles=titles,
        cmap=SIGNED_CMAP if signed else WEIGHTS_CMAP,
        cbar_label=cbar_label or "",
        panel_cap=2.2,
        annotate=len(matrices) <= 8 if annotate is None else annotate,
        shrink=True,
    )
    grid.update(matrices, clim=symmetric_limits(matrices) if signed else None, mask=mask)
    return fig


def bar_panel(ax, labels, *, horizontal=False, fontsize=8, **bar_kw):
    """One bar per label (``horizontal``: from top to bottom) with a text at its end; ``bar_kw`` go to ``ax.bar(h)``.

    Returns a function ``set_bars(values, texts, pad=0.0, factor=1.0, color=None)``: it makes the bars ``values``
    long, writes ``texts`` at ``value * factor + pad`` and returns the bars and texts (the artists that changed).
    """
    at = np.arange(len(labels))
    bars = list((ax.barh if horizontal else ax.bar)(at, np.ones(len(labels)), **bar_kw))
    texts = [
        ax.text(0, k, "", va="center", fontsize=8) if horizontal else ax.text(k, 0, "", ha="center", va="bottom", fontsize=8)
        for k in at
    ]
    (ax.set_yticks if horizontal else ax.set_xticks)(at, labels=labels, fontsize=fontsize, fontfamily=text_family())
    if horizontal:
        ax.invert_yaxis()

    def set_bars(values, strings, pad=0.0, factor=1.0, color=None):
        for bar, text, value, string in zip(bars, texts, values, strings, strict=False):
            (bar.set_width if horizontal else bar.set_height)(value)
            (text.set_x if horizontal else text.set_y)(value * factor + pad)
            text.set_text(string)
            if color is not None:
                bar.set_color(color)
        return [*bars, *texts]

    return set_bars
