"""The machinery every explorer shares: controls -> compute -> draw -> picture.

An explorer is a ``widgets.VBox`` holding its controls, a one-line message
area and an ``ipywidgets.Image`` that shows the rendered figure. The figure is
a plain ``matplotlib.figure.Figure`` drawn with the Agg renderer (no pyplot,
so nothing global changes and nothing is displayed twice); after each change
it is encoded as PNG and sent as the Image's new value. Updating one Image
widget replaces the picture in place, with no flicker from clearing an Output
area.

A test, or a curious student, can reach everything through attributes of the
returned container:

    box.controls   dict name -> widget (move one: box.controls["h"].value = 4)
    box.message    HTML widget: empty, or the explanation of an impossible setting
    box.image      Image widget with the PNG of the current picture
    box.figure     the matplotlib Figure
    box.result     what the compute function returned for the current setting
    box.refresh()  recompute and redraw now
    box.hold()     context manager: change several controls, redraw once at the end

Why it is quick (see ``benchmarks/README.md`` for the measurements). A slider
move costs compute + draw + render + PNG; a naive ``interact`` that builds a
new figure of eight annotated heatmaps each time spends most of its ~1 s in
the constrained-layout engine (which measures every text on the figure) and
in building axes, ticks and texts. Here:

* the figure is made once and rendered at its final dpi by an Agg canvas
  (``savefig`` at another dpi would re-run the layout);
* **layout cache**: when a drawing function rebuilds a figure whose structure
  did not change (same axes grid, titles, tick labels, figure size), the
  positions the layout engine computed last time are reused and the engine
  is skipped;
* **artist reuse (opt-in)**: a drawing function that updates the artists of
  the figure it drew last time (``im.set_data``, ``text.set_text``) can return
  :class:`Frame` listing those artists; the static part (axes, ticks, labels,
  colour bar) is then rendered once and cached as a bitmap, and each update
  only repaints the listed artists on top of it;
* the PNG is written with fast zlib settings (level 1): a few ms instead of
  tens for a picture that goes over a local socket;
* **coalescing**: inside a running Jupyter kernel the redraw is scheduled on
  the event loop, so a burst of slider changes that arrived while one picture
  was being rendered produces one render, of the latest values. Reading
  ``box.figure``, ``box.image`` or ``box.result`` finishes any pending redraw
  first, so code and tests always see the current state.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import html
import io
import os

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["build_explorer", "render_png", "Frame", "ExplorerBox", "int_slider", "dropdown", "checkbox"]

_PNG_COMPRESS_LEVEL = 1


class Frame:
    """What a drawing function may return to say "only these artists changed".

    Parameters
    ----------
    dynamic : list of Artist
        Artists whose data changed (images, annotation texts, titles). They are
        marked animated, left out of the cached static picture and painted on
        top of it each time.
    new_layout : bool
        True when the drawing function (re)built the figure's axes this time:
        the static picture is rendered again and cached.
    key : hashable, optional
        Names the layout. When the same key comes back (h 8 -> 9 -> 8), the
        static picture cached for it is reused instead of rendered again; so
        only give a key that fixes everything static (axes, ticks, labels, size).
    """

    __slots__ = ("dynamic", "new_layout", "key")

    def __init__(self, dynamic, new_layout, key=None):
        self.dynamic = list(dynamic)
        self.new_layout = bool(new_layout)
        self.key = key


def _find_openblas_local_setter():
    """``openblas_set_num_threads_local`` of the OpenBLAS numpy wheels ship, or None."""
    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in glob.glob(os.path.join(libs, "*openblas*")):
        try:
            fn = ctypes.CDLL(path).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int]
        return fn
    return None


_OPENBLAS_LOCAL = []


@contextlib.contextmanager
def single_blas_thread():
    """Run the block with one BLAS thread (in this thread only), then restore the previous count.

    The explorers multiply small matrices (4 x 512 by 512 x 512). Splitting such a product over
    several BLAS threads costs more than it saves, and on a busy machine the threads wait for each
    other: measured here, 0.7 ms on one thread against 14-47 ms on two. Best effort: where numpy
    does not use the OpenBLAS of its wheels, this does nothing.
    """
    if not _OPENBLAS_LOCAL:
        _OPENBLAS_LOCAL.append(_find_openblas_local_setter())
    setter = _OPENBLAS_LOCAL[0]
    if setter is None:
        yield
        return
    previous = setter(1)
    try:
        yield
    finally:
        setter(previous)


def _canvas(fig):
    canvas = fig.canvas
    if not isinstance(canvas, FigureCanvasAgg):
        canvas = FigureCanvasAgg(fig)
    return canvas


def _encode(canvas):
    """PNG bytes of what the Agg canvas holds now."""
    from PIL import Image as PILImage  # matplotlib depends on Pillow

    buf = canvas.buffer_rgba()
    width, height = canvas.get_width_height(physical=True)
    img = PILImage.frombuffer("RGBA", (width, height), buf, "raw", "RGBA", 0, 1)
    out = io.BytesIO()
    img.save(out, format="png", compress_level=_PNG_COMPRESS_LEVEL)
    return out.getvalue()


def _layout_signature(fig):
    """Everything a layout engine looks at, as a hashable value (None if unknown)."""
    try:
        sig = [tuple(np.round(fig.get_size_inches(), 4)), fig.dpi]
        for text in fig.texts:
            sig.append(("figtext", text.get_text(), text.get_fontsize()))
        for ax in fig.axes:
            spec = ax.get_subplotspec()
            geometry = None if spec is None else (spec.get_geometry(), spec.rowspan, spec.colspan)
            sig.append((
                type(ax).__name__, geometry, ax.axison, ax.get_visible(),
                ax.get_title(), ax.get_title("left"), ax.get_title("right"), ax.title.get_fontsize(),
                ax.get_xlabel(), ax.get_ylabel(),
                tuple((t.get_text(), t.get_fontsize(), t.get_rotation()) for t in ax.get_xticklabels()),
                tuple((t.get_text(), t.get_fontsize(), t.get_rotation()) for t in ax.get_yticklabels()),
                ax.get_legend() is not None,
                None if geometry is not None else tuple(np.round(ax.get_position().bounds, 4)),
            ))
        return tuple(sig)
    except Exception:  # an unusual axes type: do not cache its layout
        return None


def render_png(fig, dpi=None, frame=None, _state=None):
    """Render a figure with Agg and encode it as PNG bytes.

    Parameters
    ----------
    fig : matplotlib Figure
    dpi : float, optional
        Render at this resolution (sets ``fig.dpi``; default: the figure's).
    frame : Frame, optional
        What the drawing function said changed; enables the cached-background path.
    _state : dict, optional
        Per-explorer cache (layout positions, background bitmap).

    Returns
    -------
    bytes
    """
    if dpi is not None and fig.dpi != dpi:
        fig.set_dpi(dpi)
    canvas = _canvas(fig)
    state = _state if _state is not None else {}
    if frame is not None and fig.get_layout_engine() is None:
        for artist in frame.dynamic:
            artist.set_animated(True)
        backgrounds = state.setdefault("backgrounds", {})
        cache_key = None if frame.key is None else (frame.key, fig.dpi, tuple(fig.get_size_inches()))
        if frame.new_layout and cache_key in backgrounds:
            state["background"] = backgrounds[cache_key]
            canvas.get_renderer()  # a renderer of this figure's size
            canvas.restore_region(state["background"])
        elif frame.new_layout or state.get("background") is None:
            canvas.draw()
            state["background"] = canvas.copy_from_bbox(fig.bbox)
            if cache_key is not None:
                backgrounds[cache_key] = state["background"]
                while len(backgrounds) > 8:
                    del backgrounds[next(iter(backgrounds))]
        else:
            canvas.restore_region(state["background"])
        renderer = canvas.get_renderer()
        for artist in frame.dynamic:
            artist.draw(renderer)
        return _encode(canvas)
    state["background"] = None
    engine = fig.get_layout_engine()
    if engine is None:
        canvas.draw()
        return _encode(canvas)
    signature = _layout_signature(fig)
    cached = state.get("layout")
    if signature is not None and cached is not None and cached[0] == signature:
        for ax, position in zip(fig.axes, cached[1]):
            ax._set_position(position, which="both")
        fig._layout_engine = None  # positions are known: skip the engine for this draw
        try:
            canvas.draw()
        finally:
            fig._layout_engine = engine
    else:
        canvas.draw()
        state["layout"] = (signature, [ax.get_position(original=True).frozen() for ax in fig.axes])
    return _encode(canvas)


def int_slider(description, value, min, max, step=1, **kwargs):
    """An IntSlider that updates on release and on key presses (not on every pixel of a drag)."""
    return widgets.IntSlider(value=value, min=min, max=max, step=step, description=description,
                             continuous_update=False, style={"description_width": "initial"}, **kwargs)


def dropdown(description, options, value=None, **kwargs):
    """A Dropdown with a readable description width."""
    return widgets.Dropdown(options=options, value=value if value is not None else options[0][1]
                            if isinstance(options[0], tuple) else options[0], description=description,
                            style={"description_width": "initial"}, **kwargs)


def checkbox(description, value=False, **kwargs):
    """A Checkbox whose description is not cut off."""
    return widgets.Checkbox(value=value, description=description, indent=False, **kwargs)


def _running_loop():
    """The asyncio loop of a Jupyter kernel, when we are inside one (else None)."""
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


class ExplorerBox(widgets.VBox):
    """The container :func:`build_explorer` returns (a VBox with a few extra attributes)."""

    _pending = False

    def _flush(self):
        if self.__dict__.get("_pending"):
            self.__dict__["_pending"] = False
            self.__dict__["_render"]()

    @property
    def figure(self):
        self._flush()
        return self.__dict__["_figure"]

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


def build_explorer(controls, compute, draw, *, figsize=(8, 4), dpi=90, title=None, extra=None,
                   layout="constrained"):
    """Wire controls, a pure compute function and a drawing function together.

    Parameters
    ----------
    controls : dict of str -> ipywidgets.ValueWidget
        The knobs. Their ``.value`` s are passed to ``compute`` as keyword
        arguments under the same names.
    compute : callable(**values) -> result
        Pure: no drawing, no widgets. Raises ``ValueError`` or ``TypeError``
        with a one-line explanation for an impossible combination.
    draw : callable(fig, result) -> None or Frame
        Draws the result on the figure (it may reuse the figure's axes). It
        may return a :class:`Frame` naming the artists it updated, when it
        reused the previous figure's layout (fastest path; needs
        ``layout=None`` and fixed axes positions).
    figsize : (float, float)
        Figure size in inches.
    dpi : int
        Resolution of the PNG sent to the browser.
    title : str, optional
        A heading shown above the controls.
    extra : list of widgets, optional
        Shown under the picture (e.g. a table of shapes that ``draw`` fills).
    layout : "constrained" or None
        The figure's layout engine. With "constrained", positions are computed
        once per layout and reused while the layout does not change.

    Returns
    -------
    ExplorerBox (an ipywidgets.VBox)
        With the attributes listed in this module's docstring.
    """
    fig = Figure(figsize=figsize, dpi=dpi, layout=layout)
    FigureCanvasAgg(fig)
    message = widgets.HTML(value="")
    image = widgets.Image(format="png")
    rows = []
    if title:
        rows.append(widgets.HTML(f"<b>{html.escape(title)}</b>"))
    rows.append(widgets.HBox(list(controls.values()), layout=widgets.Layout(flex_flow="row wrap")))
    rows += [message, image] + list(extra or [])
    box = ExplorerBox(rows)
    box.controls, box.message = controls, message
    box.__dict__.update(_figure=fig, _image=image, _result=None)
    state = {"held": 0, "scheduled": False, "drawn": None}
    cache = {}

    def render(force=False):
        values = {name: w.value for name, w in controls.items()}
        if not force and state["drawn"] is not None and values == state["drawn"]:
            return  # this exact setting is already on screen
        state["drawn"] = None
        try:
            with single_blas_thread():
                result = compute(**values)
        except (ValueError, TypeError) as exc:
            box.result = None
            message.value = f'<span style="color:#B03A2E">&#9888; {html.escape(str(exc))}</span>'
            image.layout.visibility = "hidden"
            return
        box.result = result
        message.value = ""
        with single_blas_thread():
            frame = draw(fig, result)
        image.value = render_png(fig, dpi=dpi, frame=frame if isinstance(frame, Frame) else None, _state=cache)
        image.layout.visibility = "visible"
        state["drawn"] = values

    def deferred():
        state["scheduled"] = False
        try:
            box._flush()
        except Exception as exc:  # nothing would show it: say it in the message line
            message.value = (f'<span style="color:#B03A2E">&#9888; could not draw this setting: '
                             f'{html.escape(type(exc).__name__)}: {html.escape(str(exc))}</span>')

    def refresh(change=None):
        """Recompute and redraw (deferred and coalesced inside a kernel, immediate elsewhere)."""
        if change is None:
            state["drawn"] = None  # an explicit refresh always redraws
        if state["held"]:
            box.__dict__["_pending"] = True
            return
        loop = _running_loop() if change is not None else None
        box.__dict__["_pending"] = True
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
                box.__dict__["_pending"] = False
                refresh()

    box.__dict__["_render"] = render
    for w in controls.values():
        w.observe(refresh, names="value")
    box.refresh = refresh
    box.hold = hold
    refresh()
    return box
