"""The machinery every explorer shares: controls -> compute -> draw -> picture.

An explorer is a ``widgets.VBox`` holding its controls, a one-line message
area and an ``ipywidgets.Image`` that shows the rendered figure. The figure is
a plain ``matplotlib.figure.Figure`` drawn with the Agg renderer (no pyplot,
so nothing global changes and nothing is displayed twice); after each change
it is encoded as PNG and sent as the Image's new value.

A test, or a curious student, can reach everything through attributes of the
returned container:

    box.controls   dict name -> widget (move one: box.controls["h"].value = 4)
    box.drawer     the drawing function (a LayoutDrawer: its current layout is box.drawer.layout)
    box.message    HTML widget: empty, or the explanation of an impossible setting
    box.image      Image widget with the PNG of the current picture
    box.figure     the matplotlib Figure
    box.result     what the compute function returned for the current setting
    box.refresh()  recompute and redraw now
    box.hold()     context manager: change several controls, redraw once at the end
    box.prepare()  draw now the pictures one slider step away (a kernel does it while idle)

Why it is quick (``benchmarks/README.md`` has the measurements):

* the PNG of every setting shown is kept (:data:`KEEP_PNGS`), and while the kernel
  is idle the pictures one slider step away are drawn ahead (the slider moved
  last first, in the direction it moved; one picture per turn of the event
  loop, across all explorers of the kernel, so a key press waits for one at
  most). A key press on a slider then costs the compute function and sending
  a PNG; the figure itself is brought up to date only when it is read;
* pictures are drawn by a :class:`LayoutDrawer`: the axes of a layout (how
  many heads, which tokens) are built once, at positions computed by hand (no
  layout engine), and a slider move only updates the data of images and
  texts (``im.set_data``, ``text.set_text``), matplotlib's recipe for fast
  redraws. The drawer returns a :class:`Frame` naming the artists it
  updated; the static rest is rendered once per layout and kept as a bitmap;
* the PNG is written with fast zlib settings (level 1);
* inside a running kernel a burst of slider changes produces one render, of
  the latest values; reading ``box.figure``, ``box.image`` or ``box.result``
  finishes any pending redraw first.

User text (tokens, sentences) goes through :func:`literal` (a ``$`` is a
dollar sign, not mathtext) and :func:`short` (long words end in "...");
:func:`text_family` lists the installed fonts that cover Chinese and emoji.
"""

from __future__ import annotations

import contextlib
import functools
import html
import io

import ipywidgets as widgets
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..attention import divisors

__all__ = ["Result", "build_explorer", "render_png", "Frame", "ExplorerBox", "LayoutDrawer", "int_slider", "dropdown",
           "checkbox", "heads_control", "link_heads", "TIE_LABEL", "SCALE_LABEL", "D_K_OPTIONS", "TOKEN_COLORS", "HEAD_COLORS", "literal", "short", "text_family",
           "MEMORY_BUDGET", "check_budget", "explorer_params", "running_inputs", "WEIGHT_KINDS", "weights_control", "fixed_layer", "single_blas_thread", "inch_box", "kernel_loop"]

_PNG_COMPRESS_LEVEL = 1
TIE_LABEL = "d_k = d_model / h"  # the one wording of the tie control, in every explorer
# Choices of a d_k dropdown: "d_model / h" (tied, the usual choice) or a fixed size.
D_K_OPTIONS = ((TIE_LABEL, 0), ("8", 8), ("16", 16), ("32", 32), ("64", 64), ("128", 128))
# Okabe-Ito colours (colour-blind safe): one per token, one per head.
TOKEN_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
HEAD_COLORS = TOKEN_COLORS[:-1] + ("#999999",)
SCALE_LABEL = "divide by √d_k"  # the one wording of the scaling control
MEMORY_BUDGET = 200 * 2**20  # bytes an explorer setting may need (parameters + intermediates)
KEEP_PNGS = 64  # PNGs kept per explorer (settings shown or drawn ahead); 0: every picture is drawn on demand


class Result:
    """Base of the explorers' frozen result dataclasses: fields also readable as ``res["name"]``."""

    def __getitem__(self, name):
        return getattr(self, name)


# --------------------------------------------------------------------------- text


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

    Emoji come from an outline font (Noto Emoji, Symbola): matplotlib cannot draw the bitmap glyphs of
    Noto Color Emoji. A font installed after matplotlib built its font cache is added (public
    ``fontManager.addfont``), so a fresh process finds it without a cache rebuild.
    """
    from matplotlib import font_manager

    names = {f.name for f in font_manager.fontManager.ttflist}
    if not all(name in names for name in _FALLBACK_FONTS):
        wanted = {name.replace(" ", "").lower() for name in _FALLBACK_FONTS} | {"notosanscjk"}
        for path in font_manager.findSystemFonts():
            stem = path.rsplit("/", 1)[-1].split(".")[0].split("-")[0].split("_")[0].lower()
            if stem in wanted:
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):
                    continue
        names = {f.name for f in font_manager.fontManager.ttflist}
    return [name for name in ("DejaVu Sans", *_FALLBACK_FONTS) if name in names] or ["sans-serif"]


# --------------------------------------------------------------------------- budgets and threads


def check_budget(numbers, what, budget=MEMORY_BUDGET):
    """Refuse a setting that would need more than ``budget`` bytes of float64 numbers.

    Raises
    ------
    ValueError
        Saying how much the setting would need and what the budget is.
    """
    need = 8 * int(numbers)
    if need > budget:
        raise ValueError(f"{what} would need about {need / 2**20:,.0f} MB of memory; this explorer stays "
                         f"under {budget / 2**20:.0f} MB: choose smaller sizes")
    return need


_PARAMS: dict = {}
_PARAMS_KEPT = 12_000_000  # numbers of parameters kept between settings (about 100 MB)


def explorer_params(d_model, h, d_k=None, seed=0):
    """``mha_lib.init_params(d_model, h, d_k, seed=seed)``, budget-checked and kept for the last settings.

    The rule d_k = d_model / h (d_k None) and its message come from the library; a setting whose
    parameters would exceed :data:`MEMORY_BUDGET` is refused before anything is allocated. With
    d_model=512, h=8 and seed=0 these are the running example's parameters.
    """
    from ..params import init_params, parameter_count

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
    """The choice of parameters (random, designed or trained W matrices) of the explorers of 03, 04, 05 and 08.

    Labelled "parameters": in this series "weights" means the attention weights (the softmax output).
    """
    return dropdown("parameters", list(WEIGHT_KINDS), value)


@functools.lru_cache(maxsize=8)
def fixed_layer(kind, sentence=None):
    """``(tokens, X, params, roles)`` of a layer whose weights are not random.

    ``"designed"``: :func:`mha_lib.designed_example` (4 heads, each with a named job; ``roles``
    names them). ``"trained"``: layer 1 of the trained all-MiniLM-L6-v2 of notebook 09, run
    through mha_lib (X = its input on the sentence, WordPiece tokens; ``roles`` is None).
    ``sentence`` None: the designed example's own sentence, or the running example's for the
    trained model. The arrays are shared between calls: read them, do not change them.

    Raises
    ------
    ValueError
        For another kind, a sentence the layer cannot take, or the model not installed.
    """
    if kind == "designed":
        from ..designed import designed_example

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
    from ..data import load_running_example

    ex = load_running_example()
    ex.X.setflags(write=False)
    return ex.X, tuple(ex.tokens)


def running_inputs(X=None, tokens=None):
    """X and tokens to explore: the running example ("humpty dumpty sat on") unless given.

    Raises
    ------
    ValueError
        When X is not (n, d_model) with one token per row.
    """
    import numpy as np

    if X is None:
        return _running_example()
    X = np.asarray(X, dtype=float)
    tokens = tuple(tokens) if tokens is not None else tuple(f"t{m + 1}" for m in range(len(X)))
    if X.ndim != 2 or X.shape[0] != len(tokens):
        raise ValueError(f"X must have shape (n, d_model) with n = len(tokens) = {len(tokens)}, got shape "
                         f"{X.shape}: give one token per row of X")
    return X, tokens


@contextlib.contextmanager
def single_blas_thread():
    """Run the block with one BLAS thread, then restore the previous count (threadpoolctl).

    The explorers multiply small matrices (4 x 512 by 512 x 512); splitting such a product over
    several BLAS threads costs more than it saves, and on a busy machine the threads wait for each
    other (measured: 0.7 ms on one thread against 14-47 ms on two).
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # best effort
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


# --------------------------------------------------------------------------- rendering


class Frame:
    """What a drawing function may return to say "only these artists changed".

    Parameters
    ----------
    dynamic : list of Artist
        Artists whose data changed. They are marked animated, left out of the
        cached static picture and painted on top of it each time.
    new_layout : bool
        True when the drawing function (re)built or switched the figure's axes.
    key : hashable, optional
        Names the layout; the static picture cached for a key is reused when
        the key comes back (h 8 -> 4 -> 8).
    """

    __slots__ = ("dynamic", "new_layout", "key")

    def __init__(self, dynamic, new_layout, key=None):
        self.dynamic = list(dynamic)
        self.new_layout = bool(new_layout)
        self.key = key


def _encode(canvas):
    """PNG bytes of what the Agg canvas holds now."""
    from PIL import Image as PILImage  # matplotlib depends on Pillow

    width, height = canvas.get_width_height(physical=True)
    img = PILImage.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB")
    out = io.BytesIO()  # RGB (the figures are opaque): a fifth quicker to encode than RGBA
    img.save(out, format="png", compress_level=_PNG_COMPRESS_LEVEL)
    return out.getvalue()


def _restore(canvas, region):
    """Paste a kept background into the canvas; False (nothing pasted) when it is not of the canvas's size.

    The renderer is made for the figure's size first: pasting a region of another size (a figure resized
    since it was kept) would write outside the renderer's buffer.
    """
    canvas.get_renderer()
    width, height = canvas.get_width_height(physical=True)
    if tuple(region.get_extents()) != (0, 0, width, height):
        return False
    canvas.restore_region(region)
    return True


def render_png(fig, dpi=None, frame=None, state=None, _state=None):
    """Render a figure with Agg and encode it as PNG bytes (the value of an ``ipywidgets.Image``).

    Parameters
    ----------
    fig : matplotlib Figure
    dpi : float, optional
        Render at this resolution (sets ``fig.dpi``; default: the figure's).
    frame : Frame, optional
        What the drawing function said changed: the static rest of the picture is
        rendered once per layout and kept (in ``state``).
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
    state = state if state is not None else (_state if _state is not None else {})
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
            while len(backgrounds) > 8:
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

    Subclasses define ``key(res)`` (what fixes the static picture: h, tokens, ...),
    ``build(fig, res)`` (make the axes of that layout; returns any object, the
    "layout") and ``update(layout, res)`` (set the data of its artists; returns
    the list of artists that changed). Layouts seen before are kept hidden on the
    figure (at most ``keep``) so that going back to one only switches visibility.
    Called as ``drawer(fig, res)``, it returns a :class:`Frame`.
    """

    size = (10.0, 5.2)  # inches: the figure size build() starts from
    keep = 8

    def __init__(self):
        self.fig, self.layouts, self.current, self.layout = None, {}, None, None

    def key(self, res):
        return None

    def static(self, res):
        """What else fixes the static picture without needing new axes (default: nothing)."""
        return None

    def build(self, fig, res):
        raise NotImplementedError

    def update(self, layout, res):
        raise NotImplementedError

    def __call__(self, fig, res):
        key = self.key(res)
        new_layout = self.fig is not fig or key != self.current or not fig.axes
        if self.fig is not fig or not fig.axes:
            fig.clear()
            fig.set_layout_engine("none")
            self.fig, self.layouts, self.current = fig, {}, None
        if key != self.current:
            if self.current in self.layouts:
                for artist in self.layouts[self.current][1]:
                    artist.set_visible(False)
            if key in self.layouts:
                self.layouts[key] = self.layouts.pop(key)  # most recently used last
                layout, artists, size = self.layouts[key]
                fig.set_size_inches(size)
                for artist in artists:
                    artist.set_visible(True)
            else:
                if len(self.layouts) >= self.keep:
                    for artist in self.layouts.pop(next(iter(self.layouts)))[1]:
                        artist.remove()
                before = set(fig.axes) | set(fig.texts) | set(fig.legends)
                fig.set_size_inches(self.size)
                layout = self.build(fig, res)
                artists = [a for a in (*fig.axes, *fig.texts, *fig.legends) if a not in before]
                self.layouts[key] = (layout, artists, tuple(fig.get_size_inches()))
            self.current = key
        self.layout = self.layouts[key][0]
        static = self.static(res)  # e.g. tick labels that update() rewrites without building axes
        new_layout = new_layout or static != self.__dict__.get("_static")
        self._static = static
        return Frame(self.update(self.layout, res), new_layout, key=(type(self).__name__, key, static))


# --------------------------------------------------------------------------- controls


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


def _h_options(d_model, tied, max_h):
    return [k for k in divisors(d_model) if k <= max_h] if tied else list(range(1, max_h + 1))


def heads_control(d_model=512, value=8, tied=True, max_h=16):
    """The h control: a SelectionSlider over the divisors of d_model when d_k is tied, else 1..max_h."""
    options = _h_options(d_model, tied, max_h)
    if value not in options:
        value = min(options, key=lambda k: abs(k - value))
    return widgets.SelectionSlider(options=options, value=value, description="heads h", continuous_update=False,
                                   style={"description_width": "initial"})


def link_heads(box, d_model_of, max_h=16, tie="tie", h="h", d_k="d_k", head=None):
    """Keep the h control on valid values, and the (disabled) d_k control showing d_model/h while tied.

    ``d_model_of()`` gives the current d_model (it may depend on another control). ``tie`` is the
    name of the tie checkbox, or a function of the controls saying whether d_k is tied (e.g. a d_k
    dropdown whose "d_model / h" entry is 0). ``head``, the name of a "which head" slider, keeps its
    maximum at h. The options change inside ``box.hold()``: one redraw, for the nearest valid h.
    """
    controls = box.controls
    tied_of = tie if callable(tie) else (lambda c: c[tie].value if tie in c else True)

    def sync(change=None):
        tied, d_model = tied_of(controls), d_model_of()
        fixed = None  # designed or trained weights fix h and d_k: the controls show them, disabled
        if "weights" in controls and controls["weights"].value != "random":
            params = fixed_layer(controls["weights"].value)[2]
            fixed = params.h, params.d_k
        options = [fixed[0]] if fixed else _h_options(d_model, tied, max_h)
        with box.hold():
            if list(controls[h].options) != options:
                old = controls[h].value
                controls[h].options = options
                controls[h].value = min(options, key=lambda k: abs(k - old))
            controls[h].disabled = fixed is not None
            for name in (tie, "d_model", "preset"):
                if isinstance(name, str) and name in controls:
                    controls[name].disabled = fixed is not None
            if d_k in controls and isinstance(controls[d_k], widgets.IntSlider):
                controls[d_k].disabled = tied or fixed is not None
                if fixed:
                    controls[d_k].max = max(controls[d_k].max, fixed[1])
                    controls[d_k].value = fixed[1]
                elif tied:
                    controls[d_k].value = d_model // controls[h].value
            elif d_k in controls:
                controls[d_k].disabled = fixed is not None
            if head is not None:
                controls[head].max = controls[h].value

    for name in {tie if isinstance(tie, str) else None, h, d_k, "d_model", "sentence", "weights"} - {None}:
        if name in controls:
            controls[name].observe(sync, names="value")
    sync()
    return sync


# --------------------------------------------------------------------------- the explorer


def kernel_loop():
    """The asyncio loop of a Jupyter kernel, when we are inside one (else None).

    Only a kernel counts: outside one (a script, a test), ``asyncio.get_running_loop()`` can still
    answer, e.g. while Playwright's sync API is active, and work scheduled there would never run.
    """
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    ip = get_ipython()
    if ip is None or getattr(ip, "kernel", None) is None:
        return None
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _neighbours(w):
    """The values one step left and right of a slider's value."""
    if isinstance(w, widgets.SelectionSlider):
        i = w.index
        return [w.options[j] for j in (i + 1, i - 1) if 0 <= j < len(w.options)]
    if isinstance(w, widgets.FloatLogSlider):
        import math

        e = w.min + round((math.log(w.value, w.base) - w.min) / w.step) * w.step  # on the slider's grid
        return [w.base ** x for x in (e + w.step, e - w.step) if w.min <= x + 1e-9 and x - 1e-9 <= w.max]
    return [v for v in (w.value + w.step, w.value - w.step) if w.min <= v <= w.max]


class ExplorerBox(widgets.VBox):
    """The container :func:`build_explorer` returns (a VBox with a few extra attributes)."""

    def _flush(self):
        if self.__dict__.get("_pending"):
            self.__dict__["_pending"] = False
            self.__dict__["_render"]()

    @property
    def figure(self):
        self._flush()
        self.__dict__["_sync_figure"]()
        return self.__dict__["_figure"]

    @property
    def drawer(self):
        self._flush()
        self.__dict__["_sync_figure"]()
        return self.__dict__["_drawer"]

    @drawer.setter
    def drawer(self, value):
        self.__dict__["_drawer"] = value

    @property
    def image(self):
        self._flush()
        return self.__dict__["_image"]

    @property
    def result(self):
        self._flush()
        return self.__dict__.get("_result")

    @result.setter
    def result(self, value):
        self.__dict__["_result"] = value


_AHEAD = {"moved": [], "new": [], "scheduled": False}  # explorers with pictures to draw ahead


def _draw_ahead_later(warm, first=True):
    """Queue an explorer's ``warm`` for the kernel's idle time.

    ``first``: the explorer was just moved; it goes first in line, and the explorers nobody has moved yet
    leave the line (drawing ahead for all the explorers of a notebook at once would keep a key press
    waiting). Otherwise (an explorer's first picture) it waits behind the others.
    One picture per turn of the event loop, so that a key press waits for one at most.
    """
    loop = kernel_loop()
    if loop is None:
        return
    if first:
        _AHEAD["new"].clear()
        moved = _AHEAD["moved"]
        if warm in moved:
            moved.remove(warm)
        moved.insert(0, warm)
    elif warm not in _AHEAD["new"]:
        _AHEAD["new"].append(warm)
    if not _AHEAD["scheduled"]:
        _AHEAD["scheduled"] = True
        loop.call_later(0.1, _draw_ahead)


def _draw_ahead():
    _AHEAD["scheduled"] = False
    for queue in (_AHEAD["moved"], _AHEAD["new"]):
        while queue:
            try:
                done = queue[0]()
            except Exception:  # drawing ahead is a bonus: a failure shows when the setting is chosen
                done = 0
            loop = kernel_loop()
            if done and loop is not None:
                _AHEAD["scheduled"] = True
                loop.call_later(0.02, _draw_ahead)
                return
            queue.pop(0)


def build_explorer(controls, compute, draw, *, figsize=(8, 4), dpi=90, title=None, extra=None, layout=None):
    """Wire controls, a pure compute function and a drawing function together.

    Parameters
    ----------
    controls : dict of str -> ipywidgets.ValueWidget
        The knobs. Their ``.value`` s are passed to ``compute`` as keyword arguments.
    compute : callable(**values) -> result
        Pure: no drawing, no widgets. Raises ``ValueError`` or ``TypeError``
        with a one-line explanation for an impossible combination; the
        explanation then replaces the picture (no blank gap).
    draw : callable(fig, result) -> None or Frame
        Draws the result on the figure; a :class:`LayoutDrawer` returns a Frame.
    figsize : (float, float)
    dpi : int
        Resolution of the PNG sent to the browser.
    title : str, optional
        A heading shown above the controls.
    extra : list of widgets, optional
        Shown under the picture.
    layout : None or "constrained"
        The figure's layout engine (None: the drawer places its axes itself).

    Returns
    -------
    ExplorerBox (an ipywidgets.VBox)
    """
    fig = Figure(figsize=figsize, dpi=dpi, layout=layout)
    FigureCanvasAgg(fig)
    message = widgets.HTML(value="")
    image = widgets.Image(format="png")
    rows = [widgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
    rows.append(widgets.HBox(list(controls.values()), layout=widgets.Layout(flex_flow="row wrap")))
    rows += [message, image] + list(extra or [])
    box = ExplorerBox(rows)
    box.__dict__.update(_figure=fig, _image=image, _result=None, _pending=False, _drawer=draw,
                        _sync_figure=lambda: None)
    box.controls, box.message = controls, message
    state = {"held": 0, "scheduled": False, "drawn": None, "warmed": 0}
    cache, pngs, failed = {}, {}, set()  # static pictures per layout; PNG per setting; settings refused

    def render():
        values = {name: w.value for name, w in controls.items()}
        if state["drawn"] is not None and values == state["drawn"]:
            return  # this exact setting is already on screen
        state["drawn"] = None
        try:
            with single_blas_thread():
                result = compute(**values)
        except (ValueError, TypeError) as exc:
            box.result = None
            message.value = f'<span style="color:#B03A2E">&#9888; {html.escape(str(exc))}</span>'
            image.layout.display = "none"  # the message takes the picture's place
            return
        box.result = result
        message.value = ""
        state["warmed"] = 0
        key = setting_key(values)
        if key in pngs:  # drawn before, or ahead by prepare(): no drawing at all
            pngs[key] = pngs.pop(key)  # most recently used last
            image.value = pngs[key]
            state["figure_behind"] = True  # the figure is brought up to date when it is read
        else:
            image.value = draw_png(key, result)
            state["figure_behind"] = False
        image.layout.display = None
        state["drawn"] = values
        moved = [name for name in values if state.get("shown") and values[name] != state["shown"].get(name)]
        if len(moved) == 1 and isinstance(values[moved[0]], (int, float)) and \
                not isinstance(values[moved[0]], bool) and isinstance(state["shown"][moved[0]], (int, float)):
            state["last_move"] = (moved[0], 1 if values[moved[0]] > state["shown"][moved[0]] else -1)
        # a new explorer's first picture waits its turn and draws 2 ahead (a notebook builds many at once)
        state["budget"] = 6 if "shown" in state else 2
        _draw_ahead_later(warm, first="shown" in state)
        state["shown"] = values

    def setting_key(values):
        """What fixes the picture: the values of the enabled controls (a disabled one shows a value derived
        from the others, e.g. d_k = d_model / h), floats to 12 digits (a browser's 10**0.25 is Python's)."""
        return repr([(name, f"{v:.12g}" if isinstance(v, float) else v) for name, v in values.items()
                     if not controls[name].disabled])

    def draw_png(key, result):
        """Draw ``result`` and render it; the PNG is kept for ``key`` (a setting)."""
        with single_blas_thread():
            frame = draw(fig, result)
        png = render_png(fig, dpi=dpi, frame=frame if isinstance(frame, Frame) else None, state=cache)
        pngs[key] = png
        while len(pngs) > KEEP_PNGS or (len(pngs) > 1 and sum(map(len, pngs.values())) > 24 * 2**20):
            del pngs[next(iter(pngs))]  # the least recently used
        return png

    def sync_figure():
        """Draw the setting on screen on the figure (it was shown from a kept PNG)."""
        if state.get("figure_behind") and box.__dict__.get("_result") is not None:
            state["figure_behind"] = False
            with single_blas_thread():
                frame = draw(fig, box.__dict__["_result"])
            if not isinstance(frame, Frame) or frame.new_layout:
                cache["background"] = None  # the kept static picture is of another layout: render in full next time

    def ahead():
        """The settings one slider step away, those of the slider moved last (its direction first) first."""
        current = state["drawn"]
        name0, direction = state.get("last_move", (None, 1))
        order = sorted(controls, key=lambda name: name != name0)
        for name in order:
            w = controls[name]
            if w.disabled or not isinstance(w, (widgets.IntSlider, widgets.FloatSlider, widgets.FloatLogSlider,
                                                widgets.SelectionSlider)):
                continue
            for value in _neighbours(w)[:: direction if name == name0 else 1]:
                yield dict(current, **{name: value})

    def warm(budget=None):
        """Draw one picture one slider step away and keep its PNG (a key press then only sends it).

        Returns 1, or 0 when there is nothing left to draw ahead (or ``budget`` pictures were drawn
        since the last move). The picture on screen stays; the figure is brought back when it is read.
        """
        budget = state.get("budget", 6) if budget is None else budget
        if not KEEP_PNGS or state["drawn"] is None or box.__dict__.get("_pending") or state["held"] or state["warmed"] >= budget:
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
            with single_blas_thread():
                compute(**state["drawn"])  # what compute shows besides its result (a table) is the current setting's
            return 1
        return 0

    def deferred():
        state["scheduled"] = False
        try:
            box._flush()
        except Exception as exc:  # nothing would show it: say it in the message line
            message.value = (f'<span style="color:#B03A2E">&#9888; could not draw this setting: '
                             f'{html.escape(type(exc).__name__)}: {html.escape(str(exc))}</span>')

    def refresh(change=None):
        """Recompute and redraw (deferred and coalesced inside a kernel, immediate elsewhere)."""
        if change is None:  # an explicit refresh always redraws: something besides the controls changed
            state["drawn"] = None
            pngs.clear()
            failed.clear()
        box.__dict__["_pending"] = True
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
            if not state["held"] and box.__dict__.get("_pending"):
                refresh(change=True)

    def prepare(budget=100):
        """Draw now the pictures one slider step away (what the kernel does while idle); returns how many."""
        box._flush()
        done = 0
        while done < budget and warm(budget=budget):
            done += 1
        return done

    box.__dict__.update(_render=render, _sync_figure=sync_figure)
    for w in controls.values():
        w.observe(refresh, names="value")
    box.refresh, box.hold, box.prepare = refresh, hold, prepare
    refresh()
    return box
