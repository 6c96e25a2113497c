"""The machinery every explorer shares: controls -> compute -> draw -> picture.

:func:`build_explorer` wires them into an :class:`ExplorerBox`; a :class:`LayoutDrawer` builds the axes of a
layout once, then updates artists only. Why it is quick: ``benchmarks/README.md`` §1.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import html
import io
import math

from typing import NamedTuple

import ipywidgets as widgets
import matplotlib
import numpy as np
from matplotlib import font_manager
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from threadpoolctl import threadpool_limits

from ..attention import divisors
from ..data import load_running_example
from ..designed import designed_example
from ..params import init_params, parameter_count

__all__ = ["Result", "build_explorer", "render_png", "Frame", "ExplorerBox", "LayoutDrawer", "still_figure",
           "collect_soon", "int_slider", "dropdown", "checkbox", "text_box", "selection_slider", "heads_control",
           "link_heads", "TIE_LABEL", "SCALE_LABEL", "D_K_OPTIONS", "TOKEN_COLORS", "HEAD_COLORS", "literal", "short",
           "text_family", "MEMORY_BUDGET", "check_budget", "explorer_params", "running_inputs", "WEIGHT_KINDS",
           "weights_control", "fixed_layer", "explorer_layer", "single_blas_thread", "inch_box", "kernel_loop"]

TIE_LABEL = "d_k = d_model / h"  # the one wording of the tie control, in every explorer
# Choices of a d_k dropdown: "d_model / h" (tied, the usual choice) or a fixed size.
D_K_OPTIONS = ((TIE_LABEL, 0), ("8", 8), ("16", 16), ("32", 32), ("64", 64), ("128", 128))
# Okabe-Ito colours (colour-blind safe): one per token, one per head.
TOKEN_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
HEAD_COLORS = TOKEN_COLORS[:-1] + ("#999999",)
SCALE_LABEL = "divide by √d_k"  # the one wording of the scaling control
MEMORY_BUDGET = 200 * 2**20  # bytes an explorer setting may need (parameters + intermediates)
KEEP_PNGS = 64  # PNGs kept per explorer (settings shown or drawn ahead); 0: every picture is drawn on demand
PNG_BYTES_KEPT = 12 * 2**20  # and at most this many bytes of them (30 pictures at the lecture screen's 250 dpi)
BACKGROUNDS_KEPT = 32 * 2**20  # bytes of static pictures (RGBA) kept per explorer: 1-2 at 250 dpi (lecture screen)


class Result:
    """Base of the explorers' frozen result dataclasses: fields also readable as ``res["name"]``."""

    def __getitem__(self, name):
        return getattr(self, name)


def literal(text):
    """``text`` escaped so that matplotlib draws it as typed (``$`` is a dollar, not mathtext)."""
    return str(text).replace("$", r"\$")


def short(text, max_chars=14):
    """``text`` cut to ``max_chars`` characters, ending in "..." when it was longer."""
    text = str(text)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


_FALLBACK_FONTS = ("Noto Sans CJK JP", "Noto Sans CJK SC", "Noto Emoji", "Symbola")  # Chinese, Japanese; emoji


@functools.lru_cache(maxsize=1)
def text_family():
    """Font family list for user text: DejaVu Sans, then the installed CJK and emoji fonts (fallback).

    Emoji need an outline font (matplotlib cannot draw Noto Color Emoji's bitmaps). A font installed after
    matplotlib built its font cache is added (public ``fontManager.addfont``): no cache rebuild needed.
    """
    names = {f.name for f in font_manager.fontManager.ttflist}
    if not all(name in names for name in _FALLBACK_FONTS):
        wanted = {name.replace(" ", "").lower() for name in _FALLBACK_FONTS} | {"notosanscjk"}
        for path in font_manager.findSystemFonts():
            if path.rsplit("/", 1)[-1].split(".")[0].split("-")[0].split("_")[0].lower() in wanted:
                with contextlib.suppress(OSError, RuntimeError, ValueError):
                    font_manager.fontManager.addfont(path)
        names = {f.name for f in font_manager.fontManager.ttflist}
    return [name for name in ("DejaVu Sans", *_FALLBACK_FONTS) if name in names] or ["sans-serif"]


def check_budget(numbers, what, budget=MEMORY_BUDGET):
    """Bytes of ``numbers`` float64s; a ValueError saying what they would need when over ``budget``."""
    need = 8 * int(numbers)
    if need > budget:
        raise ValueError(f"{what} would need about {need / 2**20:,.0f} MB of memory; this explorer stays "
                         f"under {budget / 2**20:.0f} MB: choose smaller sizes")
    return need


_PARAMS: dict = {}
_PARAMS_KEPT = 4_000_000  # numbers of parameters kept between settings (32 MB; the newest set is always kept)


def explorer_params(d_model, h, d_k=None, seed=0):
    """``mha_lib.init_params(d_model, h, d_k, seed=seed)``, kept for the last settings; a setting over
    :data:`MEMORY_BUDGET` is refused before anything is allocated. d_model=512, h=8, seed=0: the running example's.
    """
    try:
        count = parameter_count(d_model, h, d_k=d_k)["total"]  # the library says when h does not divide d_model
    except ValueError as exc:
        raise ValueError(str(exc).removeprefix("parameter_count: ")) from None
    key = (d_model, h, d_k, seed)
    if key not in _PARAMS:
        check_budget(count, f"W^Q, W^K, W^V and W^O for d_model={d_model}, h={h}, d_k={d_k or d_model // h}")
        _PARAMS[key] = init_params(d_model, h, d_k=d_k, seed=seed)
        while len(_PARAMS) > 1 and sum(p.count()["total"] for p in _PARAMS.values()) > _PARAMS_KEPT:
            del _PARAMS[next(iter(_PARAMS))]  # the oldest
    _PARAMS[key] = _PARAMS.pop(key)  # most recently used last
    return _PARAMS[key]


WEIGHT_KINDS = (("random (running example)", "random"), ("designed (4 heads with a job)", "designed"),
                ("trained (MiniLM, layer 1)", "trained"))


def weights_control(value="random"):
    """The choice of W matrices (random, designed or trained) of the explorers of 03, 04, 05 and 08.

    Labelled "parameters": in this series "weights" means the attention weights (the softmax output).
    """
    return dropdown("parameters", list(WEIGHT_KINDS), value)


@functools.lru_cache(maxsize=8)
def fixed_layer(kind, sentence=None):
    """``(tokens, X, params, roles)`` of a layer whose weights are not random (shared arrays: do not change).

    ``"designed"``: :func:`mha_lib.designed_example` (``roles`` names the heads' jobs); ``"trained"``: layer 1 of
    notebook 09's all-MiniLM-L6-v2 (X its input, roles None). ``sentence`` None: the designed or running example's.
    """
    if kind == "designed":
        d = designed_example(sentence)
        return tuple(d.tokens), d.X, d.params, tuple(d.roles)
    if kind == "trained":
        from .. import minilm

        try:
            model = minilm.load_minilm()
        except minilm.ModelNotInstalledError as exc:
            raise ValueError(str(exc)) from None
        out = minilm.run_minilm(sentence or "humpty dumpty sat on", model)
        return tuple(out.tokens), out.hidden_states[0], model.layers[0].attention, None  # input of layer 1
    raise ValueError(f"weights={kind!r}: choose one of {[k for _, k in WEIGHT_KINDS]}")


@functools.lru_cache(maxsize=1)
def _running_example():
    """The running example's X (read-only, shared) and tokens, loaded once (loading checks a hash: 20 ms)."""
    ex = load_running_example()
    ex.X.setflags(write=False)
    return ex.X, tuple(ex.tokens)


def running_inputs(X=None, tokens=None):
    """X and tokens to explore: the running example ("humpty dumpty sat on") unless given (X: (n, d_model))."""
    if X is None:
        return _running_example()
    X = np.asarray(X, dtype=float)
    tokens = tuple(tokens) if tokens is not None else tuple(f"t{m + 1}" for m in range(len(X)))
    if X.ndim != 2 or X.shape[0] != len(tokens):
        raise ValueError(f"X must have shape (n, d_model) with n = len(tokens) = {len(tokens)}, got shape "
                         f"{X.shape}: give one token per row of X")
    return X, tokens


def explorer_layer(weights, X=None, tokens=None, h=8, d_k=None, seed=0, sentence=None):
    """``(tokens, X, params, roles)`` of the parameters a :func:`weights_control` names.

    "random": :func:`explorer_params` (d_k None: d_model / h) on X and tokens (default: the running example), roles
    None; "designed" / "trained": :func:`fixed_layer` on ``sentence`` (its own h, d_k; X and tokens are ignored).
    """
    if weights != "random":
        return fixed_layer(weights, sentence)
    X, tokens = running_inputs(X, tokens)  # checks one token per row of X
    return tokens, X, explorer_params(X.shape[-1], h, d_k, seed), None


def single_blas_thread():
    """Context manager: the block runs on one BLAS thread (threadpoolctl): 0.7 ms against 14-47 ms on two."""
    return threadpool_limits(limits=1, user_api="blas")


class Frame(NamedTuple):
    """What a drawing function returns to say "only these artists changed".

    ``dynamic``: the artists whose data changed (left out of the kept static picture, painted on top of
    it); ``new_layout``: the function (re)built or switched the figure's axes; ``key``: names the layout,
    whose static picture is reused when the key comes back (h 8 -> 4 -> 8).
    """

    dynamic: list
    new_layout: bool
    key: object = None


def _encode(canvas):
    """PNG bytes of the Agg canvas: RGB (the figures are opaque; a fifth quicker than RGBA), zlib level 1."""
    from PIL import Image as PILImage  # matplotlib depends on Pillow

    size = canvas.get_width_height(physical=True)
    img = PILImage.frombuffer("RGBA", size, canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB")
    out = io.BytesIO()
    img.save(out, format="png", compress_level=1)
    return out.getvalue()


def _restore(canvas, region):
    """Paste a kept background; False (nothing pasted) unless it has the size of the renderer, made first."""
    canvas.get_renderer()  # pasting into a renderer of another size would write outside its buffer
    if tuple(region.get_extents()) != (0, 0, *canvas.get_width_height(physical=True)):
        return False
    canvas.restore_region(region)
    return True


def render_png(fig, dpi=None, frame=None, state=None):
    """Render a figure with Agg and encode it as PNG bytes (the value of an ``ipywidgets.Image``).

    Parameters
    ----------
    fig : matplotlib Figure
    dpi : float, optional
        Render at this resolution (sets ``fig.dpi``; default: the figure's).
    frame : Frame, optional
        What the drawing function changed: the static rest is rendered once per layout and kept in ``state``.
    state : dict, optional
        The cache of one explorer (static pictures per layout).

    Returns
    -------
    bytes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> render_png(Figure(figsize=(1, 1)))[:4]
    b'\\x89PNG'
    """
    state = {} if state is None else state
    if dpi is not None and fig.dpi != dpi:
        fig.set_dpi(dpi)
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    if frame is None or fig.get_layout_engine() is not None:
        state["background"] = None
        canvas.draw()
        return _encode(canvas)
    for artist in frame.dynamic:
        artist.set_animated(True)
    backgrounds = state.setdefault("backgrounds", {})
    key = None if frame.key is None else (frame.key, fig.dpi, tuple(fig.get_size_inches()))
    if frame.new_layout and key in backgrounds and _restore(canvas, backgrounds[key]):
        state["background"] = backgrounds[key]
    elif frame.new_layout or state.get("background") is None or not _restore(canvas, state["background"]):
        canvas.draw()
        state["background"] = canvas.copy_from_bbox(fig.bbox)
        if key is not None:
            backgrounds[key] = state["background"]
            pixels = math.prod(canvas.get_width_height(physical=True))  # 8 layouts, fewer for large pictures
            while len(backgrounds) > max(1, min(8, BACKGROUNDS_KEPT // (4 * pixels))):
                del backgrounds[next(iter(backgrounds))]
    renderer = canvas.get_renderer()
    for artist in frame.dynamic:
        if artist.get_visible():
            artist.draw(renderer)
        artist.set_animated(False)  # so that fig.savefig (a still picture of the explorer) draws them too
    return _encode(canvas)


def inch_box(W, H):
    """``box(left, top, width, height)`` in inches from the top-left corner -> figure fractions."""
    def box(x0, y_top, w, h):
        return [x0 / W, 1 - (y_top + h) / H, w / W, h / H]
    return box


class LayoutDrawer:
    """Draws results by layouts: build the axes once per layout, afterwards update artists only.

    Subclasses define ``key(res)`` (what fixes the axes: h, tokens, ...), ``build(fig, res)`` (make the
    axes of that layout; returns the "layout", any object) and ``update(layout, res)`` (set the data of
    its artists; returns those that changed). Layouts seen before stay hidden on the figure (at most
    ``keep``): going back to one only switches visibility. ``drawer(fig, res)`` returns a :class:`Frame`.
    """

    size = (10.0, 5.2)  # inches: the figure size build() starts from
    keep = 8

    def __init__(self):
        self.fig, self.layouts, self.current, self.layout, self._static = None, {}, None, None, None

    def key(self, res):
        return None

    def reset(self):
        """Forget every layout, and with them their artists and the renderers their texts hold: the next call
        builds anew."""
        vars(self).clear()
        self.__init__()

    def static(self, res):
        """What else fixes the static picture without needing new axes (default: nothing)."""
        return None

    def __call__(self, fig, res):
        key = self.key(res)
        new_layout = self.fig is not fig or key != self.current or not fig.axes
        if self.fig is not fig or not fig.axes:
            fig.clear()
            fig.set_layout_engine("none")
            self.fig, self.layouts, self.current = fig, {}, None
        if key != self.current:
            for artist in self.layouts[self.current][1] if self.current in self.layouts else ():
                artist.set_visible(False)
            if key in self.layouts:
                self.layouts[key] = self.layouts.pop(key)  # most recently used last
                fig.set_size_inches(self.layouts[key][2])
                for artist in self.layouts[key][1]:
                    artist.set_visible(True)
            else:
                # a hidden layout's texts hold the renderer they were drawn with (a pixel buffer): fewer at high dpi
                keep = max(1, min(self.keep, BACKGROUNDS_KEPT // (4 * int(fig.dpi ** 2 * np.prod(self.size)))))
                while len(self.layouts) >= keep:
                    for artist in self.layouts.pop(next(iter(self.layouts)))[1]:
                        artist.remove()
                    collect_soon()
                before = set(fig.axes) | set(fig.texts) | set(fig.legends)
                fig.set_size_inches(self.size)
                layout = self.build(fig, res)
                artists = [a for a in (*fig.axes, *fig.texts, *fig.legends) if a not in before]
                self.layouts[key] = (layout, artists, tuple(fig.get_size_inches()))
            self.current = key
        self.layout = self.layouts[key][0]
        static = self.static(res)  # e.g. tick labels that update() rewrites without building axes
        new_layout, self._static = new_layout or static != self._static, static
        return Frame(list(self.update(self.layout, res)), new_layout, key=(type(self).__name__, key, static))


def still_figure(drawer, result, dpi=90):
    """A still figure of ``result`` drawn by ``drawer`` (an explorer's own :class:`LayoutDrawer`) at its size."""
    fig = Figure(figsize=drawer.size, dpi=dpi)
    drawer(fig, result)
    return fig


def int_slider(description, value, min, max, step=1, **kwargs):
    """An IntSlider that updates on release and on key presses (not on every pixel of a drag)."""
    return widgets.IntSlider(value=value, min=min, max=max, step=step, description=description,
                             continuous_update=False, style={"description_width": "initial"}, **kwargs)


def dropdown(description, options, value=None, **kwargs):
    """A Dropdown with a readable description width."""
    if value is None:
        value = options[0][1] if isinstance(options[0], tuple) else options[0]
    return widgets.Dropdown(options=options, value=value, description=description,
                            style={"description_width": "initial"}, **kwargs)


def checkbox(description, value=False, **kwargs):
    """A Checkbox whose description is not cut off."""
    return widgets.Checkbox(value=value, description=description, indent=False, **kwargs)


def text_box(description, value, width=None):
    """A Text box (e.g. a sentence) that updates on Enter or when it loses focus, ``width`` a CSS size."""
    return widgets.Text(value=value, description=description, continuous_update=False,
                        style={"description_width": "initial"}, layout=widgets.Layout(width=width))


def selection_slider(description, options, value):
    """A SelectionSlider (only the values in ``options``) that updates on release and on key presses."""
    return widgets.SelectionSlider(options=options, value=value, description=description, continuous_update=False,
                                   style={"description_width": "initial"})


def _h_options(d_model, tied, max_h):
    return [k for k in divisors(d_model) if k <= max_h] if tied else list(range(1, max_h + 1))


def heads_control(d_model=512, value=8, tied=True, max_h=16):
    """The h control: a SelectionSlider over the divisors of d_model when d_k is tied, else 1..max_h."""
    options = _h_options(d_model, tied, max_h)
    return selection_slider("heads h", options, min(options, key=lambda k: abs(k - value)))


def link_heads(box, d_model_of, max_h=16, tie="tie", h="h", d_k="d_k", head=None):
    """Keep the h control on valid values, and the (disabled) d_k control showing d_model/h while tied.

    ``d_model_of()`` gives the current d_model (it may depend on another control). ``tie`` is the
    name of the tie checkbox, or a function of the controls saying whether d_k is tied (e.g. a d_k
    dropdown whose "d_model / h" entry is 0). ``head``, the name of a "which head" slider, keeps its
    maximum at h. The options change inside ``box.hold()``: one redraw, for the nearest valid h.
    """
    controls = box.controls
    tied_of = tie if callable(tie) else (lambda c: c[tie].value if tie in c else True)
    saved, busy = {}, []  # the student's values of the controls that show a fixed layer's sizes; sync running

    def show_sizes(params):
        """Designed or trained parameters fix d_model, h and d_k: the greyed controls show theirs (where offered)."""
        tied = params.h * params.d_k == params.d_model
        saved.setdefault(h, controls[h].value)
        in_menu = isinstance(controls.get(d_k), widgets.Dropdown)  # a d_k menu whose "d_model / h" entry is 0
        for name, value in ((tie, tied), (d_k, (0 if tied else params.d_k) if in_menu else params.d_k),
                            ("d_model", params.d_model)):
            w = controls.get(name) if isinstance(name, str) else None
            offered = [o[1] if isinstance(o, tuple) else o for o in getattr(w, "options", None) or [value]]
            if w is not None and value in offered:
                saved.setdefault(name, w.value)
                if isinstance(w, widgets.IntSlider):
                    w.max = max(w.max, value)
                w.value = value
            elif name in saved:  # not offered (MiniLM's d_model 384): the student's own value, greyed
                w.value = saved[name]

    def sync(change=None):
        if busy:  # a change made by sync itself: the call that made it sees it
            return
        fixed = None  # designed or trained weights fix h and d_k: the controls show them, disabled
        if "weights" in controls and controls["weights"].value != "random":
            fixed = fixed_layer(controls["weights"].value)[2]
        d_k_slider, back = isinstance(controls.get(d_k), widgets.IntSlider), {}
        busy.append(True)
        try:
            with box.hold():
                if fixed is not None:
                    show_sizes(fixed)
                elif saved:  # back to random parameters: the student's own values (h once its options are set)
                    back = dict(saved)
                    saved.clear()
                    for name, value in back.items():
                        if name != h:
                            controls[name].value = value
                tied, d_model = tied_of(controls), d_model_of()
                options = [fixed.h] if fixed else _h_options(d_model, tied, max_h)
                if list(controls[h].options) != options:
                    old = back.get(h, controls[h].value)
                    controls[h].options = options
                    controls[h].value = min(options, key=lambda k: abs(k - old))
                for name in (h, tie, "d_model", "preset", d_k):
                    if isinstance(name, str) and name in controls:
                        controls[name].disabled = fixed is not None or (name == d_k and d_k_slider and tied)
                if d_k_slider and tied and not fixed:
                    controls[d_k].value = d_model // controls[h].value
                if head is not None:
                    controls[head].max = controls[h].value
        finally:
            busy.clear()

    for name in {tie if isinstance(tie, str) else None, h, d_k, "d_model", "sentence", "weights"} - {None}:
        if name in controls:
            controls[name].observe(sync, names="value")
    sync()
    return sync


def kernel_loop():
    """The asyncio loop of a Jupyter kernel, when we are inside one (else None: elsewhere, e.g. under Playwright's
    sync API, a running loop may answer, and work scheduled there would never run)."""
    import asyncio

    try:
        from IPython import get_ipython

        return asyncio.get_running_loop() if getattr(get_ipython(), "kernel", None) is not None else None
    except (ImportError, RuntimeError):
        return None


_SLIDERS = (widgets.IntSlider, widgets.FloatSlider, widgets.FloatLogSlider, widgets.SelectionSlider)


def _neighbours(w):
    """The values one step right and left of an enabled slider's value ([] for another control)."""
    if w.disabled or not isinstance(w, _SLIDERS):
        return []
    if isinstance(w, widgets.SelectionSlider):
        return [w.options[j] for j in (w.index + 1, w.index - 1) if 0 <= j < len(w.options)]
    if isinstance(w, widgets.FloatLogSlider):
        e = w.min + round((math.log(w.value, w.base) - w.min) / w.step) * w.step  # on the slider's grid
        return [w.base ** x for x in (e + w.step, e - w.step) if w.min <= x + 1e-9 and x - 1e-9 <= w.max]
    return [v for v in (w.value + w.step, w.value - w.step) if w.min <= v <= w.max]


def _flushed(name, sync_figure=False):
    """A property reading ``name`` once a pending redraw is done (and the figure is up to date)."""
    def get(box):
        box._flush(sync_figure)
        return getattr(box, name)
    return property(get, lambda box, value: setattr(box, name, value))


class ExplorerBox(widgets.VBox):
    """What :func:`build_explorer` returns: a VBox of the controls, a one-line ``message`` and the PNG ``image`` of
    a plain Agg ``figure``; also ``controls`` (name -> widget), ``drawer``, ``result`` (what compute returned),
    ``refresh()``, ``hold()`` (several changes, one redraw), ``prepare()`` (draw ahead now), ``release()``
    (free its pixels) and ``redraw()`` (everything drawn anew: in a new style, or for a window of another size);
    ``style``: matplotlib settings (rcParams) its pictures are drawn with, e.g. high contrast (default: none)."""

    figure, drawer = _flushed("_figure", sync_figure=True), _flushed("_drawer", sync_figure=True)
    image, result = _flushed("_image"), _flushed("_result")

    def _flush(self, sync_figure=False):
        if self._pending:
            self._pending = False
            self._render()
        if sync_figure:
            self._sync_figure()


_AHEAD = {"moved": [], "new": [], "scheduled": False}  # explorers with pictures to draw ahead


def _draw_ahead_later(warm, first=True):
    """Queue an explorer's ``warm`` for the kernel's idle time, one picture per turn of the event loop.

    ``first``: the explorer was just moved: it goes first, and the explorers nobody has moved yet leave the
    line (drawing ahead for a whole notebook would keep a key press waiting). Else it waits behind the others.
    """
    loop = kernel_loop()
    if loop is None:
        return
    if first:
        _AHEAD["new"].clear()
        _AHEAD["moved"][:] = [warm] + [w for w in _AHEAD["moved"] if w is not warm]
    elif warm not in _AHEAD["new"]:
        _AHEAD["new"].append(warm)
    if not _AHEAD["scheduled"]:
        _AHEAD["scheduled"] = True
        loop.call_later(0.1, _draw_ahead)


def collect_soon():
    """One full garbage collection in the kernel's idle time (a second from now), after big objects were dropped.

    Matplotlib's artists live in reference cycles, which Python frees only when its collector runs, and it runs
    after so many new objects, not so many bytes: the texts of a removed layout keep the renderer they were drawn
    with (a pixel buffer of 15-22 MB at the lecture screen's 250 dpi), and several could pile up (130 MB).
    """
    loop = kernel_loop()
    if loop is not None and not _AHEAD.get("collect"):
        _AHEAD["collect"] = True
        loop.call_later(1.0, lambda: (_AHEAD.update(collect=False), gc.collect()))


def _draw_ahead():
    _AHEAD["scheduled"] = False
    for queue in (_AHEAD["moved"], _AHEAD["new"]):
        while queue:
            done = 0
            with contextlib.suppress(Exception):  # drawing ahead is a bonus: a failure shows when the setting is chosen
                done = queue[0]()
            loop = kernel_loop()
            if done and loop is not None:
                _AHEAD["scheduled"] = True
                loop.call_later(0.02, _draw_ahead)
                return
            queue.pop(0)


def build_explorer(controls, compute, draw, *, figsize=None, dpi=90, title=None, extra=None, layout=None):
    """Wire controls, a pure compute function and a drawing function together.

    Parameters
    ----------
    controls : dict of str -> ipywidgets.ValueWidget
        The knobs. Their ``.value`` s are passed to ``compute`` as keyword arguments.
    compute : callable(**values) -> result
        Pure: no drawing, no widgets. Raises ``ValueError`` or ``TypeError`` with a one-line explanation
        for an impossible combination; the explanation then replaces the picture (no blank gap).
    draw : callable(fig, result) -> None or Frame
        Draws the result on the figure; a :class:`LayoutDrawer` returns a Frame.
    figsize, dpi, layout
        The figure's size (inches; default: a LayoutDrawer's ``size``, else 8 x 4), the PNG's resolution (a
        number, or a function of the figure's size giving one: the lecture screen fits each layout to the
        window), its layout engine (None: the drawer places its axes).
    title, extra : str and list of widgets, optional
        A heading above the controls, widgets under the picture.

    Returns
    -------
    ExplorerBox (an ipywidgets.VBox)
    """
    if hasattr(draw, "picture"):  # drawn in the browser from the numbers the drawer picks (widget.py)
        from .widget import picture_explorer

        return picture_explorer(controls, compute, draw, title=title, extra=extra)
    fit = dpi if callable(dpi) else lambda _inches: dpi
    figsize = figsize or getattr(draw, "size", (8, 4))
    fig = Figure(figsize=figsize, dpi=fit(tuple(figsize)), layout=layout)
    FigureCanvasAgg(fig)
    message, image = widgets.HTML(value=""), widgets.Image(format="png")
    rows = [widgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
    rows.append(widgets.HBox(list(controls.values()), layout=widgets.Layout(flex_flow="row wrap")))
    box = ExplorerBox(rows + [message, image] + list(extra or []))
    box._figure, box._image, box._result, box._pending, box._drawer = fig, image, None, False, draw
    box.controls, box.message, box.style = controls, message, {}
    state = {"held": 0, "scheduled": False, "drawn": None, "warmed": 0}
    cache, pngs, failed = {}, {}, set()  # static pictures per layout; PNG per setting; settings refused

    def warn(text):  # the message line in place of the picture
        message.value = f'<span style="color:#B03A2E">&#9888; {html.escape(text)}</span>'

    def render():
        values = {name: w.value for name, w in controls.items()}
        if state["drawn"] is not None and values == state["drawn"]:
            return  # this exact setting is already on screen
        state["drawn"] = None
        try:
            with single_blas_thread():
                box._result = compute(**values)
        except (ValueError, TypeError) as exc:
            box._result = None
            warn(str(exc))
            image.layout.display = "none"  # the message takes the picture's place
            return
        message.value = ""
        state["warmed"] = 0
        key = setting_key(values)
        state["figure_behind"] = key in pngs  # drawn before or ahead: not drawn now; the figure catches up when read
        if key in pngs:
            pngs[key] = pngs.pop(key)  # most recently used last
        image.value = pngs[key] if key in pngs else draw_png(key, box._result)
        image.layout.display = None
        state["drawn"], old = values, state.get("shown") or {}
        moved = [(name, old[name], values[name]) for name in old if values[name] != old[name]]
        if len(moved) == 1 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in moved[0][1:]):
            state["last_move"] = (moved[0][0], 1 if moved[0][2] > moved[0][1] else -1)
        # a new explorer's first picture waits its turn and draws 2 ahead (a notebook builds many at once)
        state["budget"] = 6 if "shown" in state else 2
        _draw_ahead_later(warm, first="shown" in state)
        state["shown"] = values

    def setting_key(values):
        # What fixes the picture: the values of the enabled controls (a disabled one shows a value derived from
        # the others, e.g. d_k = d_model / h), floats to 12 digits (a browser's 10**0.25 is Python's).
        return repr([(name, f"{v:.12g}" if isinstance(v, float) else v) for name, v in values.items()
                     if not controls[name].disabled])

    @contextlib.contextmanager
    def drawing():
        """One BLAS thread, and matplotlib's settings of ``box.style`` (e.g. high contrast) for this explorer only."""
        with single_blas_thread(), matplotlib.rc_context(box.style):
            yield

    def draw_png(key, result):
        """Draw ``result`` and render it; the PNG is kept for ``key`` (a setting)."""
        with drawing():
            frame = draw(fig, result)
            png = render_png(fig, dpi=fit(tuple(fig.get_size_inches())),
                             frame=frame if isinstance(frame, Frame) else None, state=cache)
        pngs[key] = png
        while len(pngs) > KEEP_PNGS or (len(pngs) > 1 and sum(map(len, pngs.values())) > PNG_BYTES_KEPT):
            del pngs[next(iter(pngs))]  # the least recently used
        return png

    def sync_figure():
        """Draw the setting on screen on the figure (it was shown from a kept PNG)."""
        if state.get("figure_behind") and box._result is not None:
            state["figure_behind"] = False
            with drawing():
                frame = draw(fig, box._result)
            if not isinstance(frame, Frame) or frame.new_layout:
                cache["background"] = None  # the kept static picture is of another layout: render in full next time

    def ahead():
        """The settings one slider step away: the slider moved last first, in the direction it moved."""
        name0, direction = state.get("last_move", (None, 1))
        for name in sorted(controls, key=lambda name: name != name0):
            for value in _neighbours(controls[name])[:: direction if name == name0 else 1]:
                yield {**state["drawn"], name: value}

    def warm(budget=None):
        """Draw and keep the PNG of one setting a slider step away: 1, or 0 when none is left (or ``budget`` were
        drawn since the last move). The figure is brought back to the setting shown when it is read."""
        budget = state.get("budget", 6) if budget is None else budget
        if not KEEP_PNGS or state["drawn"] is None or box._pending or state["held"] or state["warmed"] >= budget:
            return 0
        for values in ahead():
            key = setting_key(values)
            if key in pngs or key in failed:
                continue
            try:
                with single_blas_thread():
                    res = compute(**values)
            except (ValueError, TypeError):
                failed.add(key)
                continue
            draw_png(key, res)
            state["figure_behind"] = True
            state["warmed"] += 1
            return 1
        return 0

    def deferred():
        state["scheduled"] = False
        try:
            box._flush()
        except Exception as exc:  # nothing would show it: say it in the message line
            warn(f"could not draw this setting: {type(exc).__name__}: {exc}")

    def refresh(change=None):
        """Recompute and redraw (deferred and coalesced inside a kernel, immediate elsewhere)."""
        if change is None:  # an explicit refresh always redraws: something besides the controls changed
            state["drawn"] = None
            pngs.clear()
            failed.clear()
        box._pending = True
        if state["held"]:
            return
        loop = kernel_loop() if change is not None else None
        if loop is None:
            box._flush()
        elif not state["scheduled"]:
            state["scheduled"] = True
            loop.call_soon(deferred)

    @contextlib.contextmanager
    def hold():
        """Change several controls at once; the picture is redrawn once, at the end."""
        state["held"] += 1
        try:
            yield box
        finally:
            state["held"] -= 1
            if not state["held"] and box._pending:
                refresh(change=True)

    def prepare(budget=100):
        """Draw now the pictures one slider step away (what the kernel does while idle); returns how many."""
        box._flush()
        done = 0
        while done < budget and warm(budget=budget):
            done += 1
        return done

    def release(keep_pngs=False):
        """Drop the figure's drawing and the kept pictures: memory now, not at the next garbage collection; a later
        redraw builds everything again. ``keep_pngs``: keep the PNGs (small), e.g. while the explorer is hidden."""
        if not keep_pngs:
            pngs.clear()
            state["drawn"] = None
        elif not fig.axes and not cache:
            return  # nothing drawn since the last release
        cache.clear()
        if hasattr(draw, "reset"):
            draw.reset()
        fig.clear()
        FigureCanvasAgg(fig)  # a fresh canvas: the old renderer's pixel buffer goes
        state["figure_behind"] = True  # the figure is drawn again when read
        state["warmed"] = math.inf  # and nothing is drawn ahead until a control moves
        # the cleared artists are in reference cycles, with the renderers their texts were drawn with: collected now
        # before a new drawing (a full collection: 0.1 s in a kernel, seconds in a big process), else when idle
        if keep_pngs:
            collect_soon()
        else:
            gc.collect()

    def redraw():
        """Draw the setting on screen anew: after a change of ``style`` (rcParams are read when artists are made) or
        of what ``dpi`` gives (a window of another size). The widgets stay: no new ones to send."""
        release()
        refresh()

    box._render, box._sync_figure, box.release, box.redraw = render, sync_figure, release, redraw
    for w in controls.values():
        w.observe(refresh, names="value")
    box.refresh, box.hold, box.prepare = refresh, hold, prepare
    refresh()
    return box
