"""The machinery every explorer shares: controls -> compute -> picture (:func:`build_explorer`). The kernel sends
numbers, never pixels; matplotlib draws the still figures from the same numbers on demand (:mod:`mha_lib.viz`).
"""

from __future__ import annotations

import contextlib
import functools
import html
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from IPython import get_ipython
from threadpoolctl import ThreadpoolController

from .._checks import check_token, shown
from ..attention import divisors, row_entropy
from ..data import load_running_example
from ..designed import designed_example
from ..params import MHAParams, init_params, parameter_count
from ..viz import check_dpi
from .chart import Chart
from .widget import Picture, PictureBox

TIE_LABEL = "d_k = d_model / h"  # the one wording of the tie control, in every explorer
SCALE_LABEL = "divide by √d_k"  # the one wording of the scaling control
MEMORY_BUDGET = 200 * 2**20  # bytes an explorer setting may need (parameters + intermediates)


class Result:
    """Base of the explorers' frozen result dataclasses: fields also readable as ``res["name"]``."""

    def __getitem__(self, name):
        return getattr(self, name)


@dataclass(frozen=True)
class HeadsSetting:
    """Every head's scores and weights (h, n, n) in one setting of the scores or softmax explorer, and the largest
    weight and entropy (bits) of every row (h, n); ``kind``: the parameters, "random", "designed" or "trained"."""

    h: int
    d_k: int
    tokens: tuple
    scores: np.ndarray
    weights: np.ndarray
    max_weight: np.ndarray
    entropy: np.ndarray
    roles: tuple  # what each head does (designed parameters), else None
    kind: str
    scaled: bool = True
    temperature: float = 1.0
    mask_kind: str = "none"
    mask: np.ndarray | None = None  # (n, n), True = may attend

    @classmethod
    def of(cls, tokens, params, r, roles, kind, **how):
        """The setting of :func:`mha_lib.multi_head_attention`'s result ``r``; ``how``: scaled, temperature, mask."""
        stats = r.weights.max(-1), row_entropy(r.weights)
        return cls(params.h, params.d_k, tuple(tokens), r.scores, r.weights, *stats, roles, kind, **how)


def check_budget(numbers, what, budget=MEMORY_BUDGET):
    """Bytes of ``numbers`` float64s; a ValueError saying what they would need when over ``budget``."""
    need = 8 * int(numbers)
    if need > budget:
        raise ValueError(
            f"{what} would need about {need / 2**20:,.0f} MB of memory; this explorer stays "
            f"under {budget / 2**20:.0f} MB: choose smaller sizes"
        )
    return need


_PARAMS: dict = {}
_PARAMS_KEPT = 4_000_000  # numbers of parameters kept between settings (32 MB; the newest set is always kept)


def explorer_params(d_model, h, d_k=None, seed=0):
    """``mha_lib.init_params(d_model, h, d_k, seed=seed)``, kept for the last settings (over :data:`MEMORY_BUDGET`:
    refused before allocating). With d_k = d_model / h every h draws the same numbers in the same order, so one draw
    per d_model serves every h (a reshape)."""
    try:
        count = parameter_count(d_model, h, d_k=d_k)["total"]  # the library says when h does not divide d_model
    except ValueError as exc:
        raise ValueError(str(exc).removeprefix("parameter_count: ")) from None
    tied = (d_k or d_model // h) * h == d_model
    key = (d_model, 1, None, seed) if tied else (d_model, h, d_k, seed)
    if key not in _PARAMS:
        check_budget(count, f"W^Q, W^K, W^V and W^O for d_model={d_model}, h={h}, d_k={d_k or d_model // h}")
        _PARAMS[key] = init_params(d_model, key[1], d_k=key[2], seed=seed)
        while len(_PARAMS) > 1 and sum(p.count()["total"] for p in _PARAMS.values()) > _PARAMS_KEPT:
            del _PARAMS[next(iter(_PARAMS))]  # the oldest
    _PARAMS[key] = p = _PARAMS.pop(key)  # most recently used last
    if tied and h > 1:
        heads = (h, d_model, d_model // h)
        p = MHAParams(W_q=p.W_q.reshape(heads), W_k=p.W_k.reshape(heads), W_v=p.W_v.reshape(heads), W_o=p.W_o)
    return p


WEIGHT_KINDS = (
    ("random (running example)", "random"),
    ("designed (4 heads with a job)", "designed"),
    ("trained (MiniLM, layer 1)", "trained"),
)


def weights_control(value="random"):
    """The choice of W matrices, labelled "parameters" ("weights" are the attention weights in this series). The
    trained model's file starts being checked now (a thread): its first choice waits 20 ms, not 0.1 s more."""
    from .. import minilm

    minilm.check_soon()
    return dropdown("parameters", list(WEIGHT_KINDS), value)


@functools.lru_cache(maxsize=8)
def fixed_layer(kind, sentence=None):
    """``(tokens, X, params, roles)`` (shared, read-only) of :func:`mha_lib.designed_example` (``"designed"``) or
    layer 1 of all-MiniLM-L6-v2 (``"trained"``, roles None); ``sentence`` None: the example's own."""
    if kind == "designed":
        d = designed_example(sentence)
        return tuple(d.tokens), d.X, d.params, tuple(d.roles)
    if kind == "trained":
        from .. import minilm

        try:
            model = minilm.load_minilm()
        except minilm.ModelNotInstalledError as exc:
            raise ValueError(str(exc)) from None
        # layer 1's input is the embeddings: the other layers' pages of the mapped file are never touched (28 MB)
        tokens, ids = minilm.encode_tokens(sentence or "humpty dumpty sat on", model)
        return tuple(tokens), minilm.embed(np.asarray(ids), model), model.layers[0].attention, None
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
        raise ValueError(
            f"X must have shape (n, d_model) with n = len(tokens) = {len(tokens)}, got shape "
            f"{X.shape}: give one token per row of X"
        )
    if X.size == 0:
        raise ValueError(f"X has shape {X.shape}: give at least one token (a row) of at least one number")
    return X, tuple(check_token(t, "explorer", "token in tokens") for t in tokens)


def explorer_layer(weights, X=None, tokens=None, h=8, d_k=None, seed=0, sentence=None):
    """``(tokens, X, params, roles)`` of the parameters a :func:`weights_control` names: "random" is
    :func:`explorer_params` on X and tokens; "designed" / "trained" :func:`fixed_layer` (X, tokens, h, d_k ignored)."""
    if weights != "random":
        return fixed_layer(weights, sentence)
    X, tokens = running_inputs(X, tokens)  # checks one token per row of X
    return tokens, X, explorer_params(X.shape[-1], h, d_k, seed), None


@functools.cache
def _blas():  # the process's BLAS libraries, found once (0.2 ms a search)
    return ThreadpoolController()


def single_blas_thread():
    """Context manager: the block runs on one BLAS thread (threadpoolctl): 0.7 ms against 14-47 ms on two."""
    return _blas().limit(limits=1, user_api="blas")


def _start_value(description, value, allowed):  # ipywidgets would clamp a slider's start value silently, or fail
    raise ValueError(f"{description.split(' (')[0]} cannot start at {shown(value)}: choose {allowed}")


def _control(cls, description, **kwargs):  # the description is never cut off
    return cls(description=description, style={"description_width": "initial"}, **kwargs)


def int_slider(description, value, min, max, step=1, **kwargs):
    """An IntSlider that updates on release and on key presses (not on every pixel of a drag)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not min <= value <= max:
        _start_value(description, value, f"a whole number from {min} to {max}")
    return _control(
        widgets.IntSlider, description, value=value, min=min, max=max, step=step, continuous_update=False, **kwargs
    )


def log_slider(description, value, min, max, **kwargs):
    """A FloatLogSlider from 10**min to 10**max (e.g. a temperature) that updates on release and on key presses."""
    kwargs.update(value=value, base=10, min=min, max=max, continuous_update=False)
    return _control(widgets.FloatLogSlider, description, **kwargs)


def _check_choice(description, value, options):
    values = [o[1] if isinstance(o, tuple) else o for o in options]
    if not any(value is v or (type(value) is not bool and value == v) for v in values):
        _start_value(description, value, f"one of {values}")


def dropdown(description, options, value=None, **kwargs):
    """A Dropdown (``options``: values or (label, value) pairs; default: the first)."""
    if value is None:
        value = options[0][1] if isinstance(options[0], tuple) else options[0]
    _check_choice(description, value, options)
    return _control(widgets.Dropdown, description, options=options, value=value, **kwargs)


def checkbox(description, value=False, **kwargs):
    """A Checkbox whose description is not cut off."""
    return widgets.Checkbox(value=value, description=description, indent=False, **kwargs)


def text_box(description, value, width=None):
    """A Text box (e.g. a sentence) that updates on Enter or when it loses focus, ``width`` a CSS size."""
    return _control(widgets.Text, description, value=value, continuous_update=False, layout=widgets.Layout(width=width))


def selection_slider(description, options, value, **kwargs):
    """A SelectionSlider (only the values in ``options``) that updates on release and on key presses."""
    _check_choice(description, value, options)
    return _control(widgets.SelectionSlider, description, options=options, value=value, continuous_update=False, **kwargs)


def d_k_menu():
    """The d_k (= d_v) menu: "d_model / h" (tied, the usual choice: 0) or a fixed size."""
    return dropdown("d_k = d_v", [(TIE_LABEL, 0), ("8", 8), ("16", 16), ("32", 32), ("64", 64), ("128", 128)], 0)


def _h_options(d_model, tied, max_h):
    return [k for k in divisors(d_model) if k <= max_h] if tied else list(range(1, max_h + 1))


def heads_control(d_model=512, value=8, tied=True, max_h=16):
    """The h control: a SelectionSlider over the divisors of d_model when d_k is tied, else 1..max_h."""
    options = _h_options(d_model, tied, max_h)
    return selection_slider("heads h", options, min(options, key=lambda k: abs(k - value)))


def link_heads(box, d_model_of, max_h=16, tie="tie", head=None):  # noqa: C901  h, d_k and the tie box follow each other both ways
    """Keep the h control on valid values and a d_k slider on d_model/h while tied (the ``tie`` checkbox ticked, or
    a :func:`d_k_menu` on 0); ``d_model_of()`` gives d_model, ``head`` names a slider kept at most h. Designed or
    trained parameters: the controls show their sizes, disabled. One redraw per change (``box.hold()``)."""
    controls = box.controls
    menu = isinstance(controls.get("d_k"), widgets.Dropdown)  # a d_k menu whose "d_model / h" entry is 0
    saved, busy = {}, []  # the student's values of the controls that show a fixed layer's sizes; sync running

    def show_sizes(params):
        tied = params.h * params.d_k == params.d_model
        saved.setdefault("h", controls["h"].value)
        for name, value in ((tie, tied), ("d_k", 0 if menu and tied else params.d_k), ("d_model", params.d_model)):
            w = controls.get(name)
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
        slider, back = isinstance(controls.get("d_k"), widgets.IntSlider), {}
        busy.append(True)
        try:
            with box.hold():
                if fixed is not None:
                    show_sizes(fixed)
                elif saved:  # back to random parameters: the student's own values (h once its options are set)
                    back = dict(saved)
                    saved.clear()
                    for name, value in back.items():
                        if name != "h":
                            controls[name].value = value
                tied = controls["d_k"].value == 0 if menu else controls[tie].value if tie in controls else True
                d_model, h = d_model_of(), controls["h"]
                options = [fixed.h] if fixed else _h_options(d_model, tied, max_h)
                if list(h.options) != options:
                    old = back.get("h", h.value)
                    h.options = options
                    h.value = min(options, key=lambda k: abs(k - old))
                for name in ("h", tie, "d_model", "preset", "d_k"):
                    if name in controls:
                        controls[name].disabled = fixed is not None or (name == "d_k" and slider and tied)
                if slider and tied and not fixed:
                    controls["d_k"].value = d_model // h.value
                if head is not None:
                    controls[head].max = h.value
        finally:
            busy.clear()

    for name in {tie, "h", "d_k", "d_model", "sentence", "weights"} & set(controls):
        controls[name].observe(sync, names="value")
    sync()
    return sync


def kernel_loop():
    """The asyncio loop of a Jupyter kernel, when inside one (else None: a loop elsewhere may never run our work)."""
    import asyncio

    try:
        return asyncio.get_running_loop() if getattr(get_ipython(), "kernel", None) is not None else None
    except RuntimeError:
        return None


def warning(message, text):
    """Write ``text`` into an explorer's message line (the line that replaces its picture), escaped."""
    message.value = f'<span style="color:#B03A2E">&#9888; {html.escape(text)}</span>'


def _body(draw):  # (the box shown, {part name: Chart or Picture}, res -> {part name: frame})
    if hasattr(draw, "parts"):
        parts = {name: Chart() if kind == "chart" else Picture() for name, kind in draw.parts.items()}
        widths = getattr(draw, "widths", {})
        for name, w in parts.items():
            w.layout = widgets.Layout(flex=f"{widths.get(name, 1)} 1 0px", min_width="0")
        rows = [widgets.HBox([parts[n] for n in names], layout=widgets.Layout(width="100%")) for names in draw.rows]
        return widgets.VBox(rows, layout=widgets.Layout(width="100%")), parts, draw.frames
    if hasattr(draw, "picture"):
        body = Picture()
        return body, {"picture": body}, lambda res: {"picture": draw.picture(res)}
    raise TypeError(f"build_explorer: draw must have a picture(result) method, got {type(draw).__name__}")


def build_explorer(controls, compute, draw, *, dpi=90, title=None, extra=None):
    """Wire controls, a pure compute function and a drawer together: an explorer drawn in the browser.

    ``compute(**{name: control.value})`` is pure; its ``ValueError`` or ``TypeError`` (one line) replaces the picture.
    ``draw``: ``picture(result)`` -> :class:`~.widget.Frame`, or ``parts`` ({name: "chart" or "picture"}) in ``rows``
    (``widths`` their shares) and ``frames(result)`` -> {name: frame}. ``dpi``: the still picture's resolution (or a
    function of the figure's size in inches giving it); ``title``: a heading above the controls; ``extra``: widgets
    under the picture. Returns a :class:`~.widget.PictureBox`: a change makes one update, deferred inside a kernel,
    at once elsewhere.
    """
    check_dpi(dpi, "build_explorer")
    body, parts, frames_of = _body(draw)
    message = widgets.HTML(value="")
    head = [widgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
    head.append(widgets.HBox(list(controls.values()), layout=widgets.Layout(flex_flow="row wrap")))
    box = PictureBox(head + [message, body] + list(extra or []), draw)
    box.controls, box.message, box.picture, box.parts, box.dpi = controls, message, body, parts, dpi
    state = {"held": 0, "scheduled": False, "pending": False}

    def flush():
        if not state["pending"] or state["held"]:
            return
        state["pending"] = False
        try:
            with single_blas_thread():
                box._result = compute(**{name: w.value for name, w in controls.items()})
            frames = frames_of(box._result)
        except (ValueError, TypeError) as exc:
            box._result = None
            warning(message, str(exc))
            body.layout.display = "none"  # the message takes the picture's place
            return
        message.value = ""
        for name, frame in frames.items():
            parts[name].show(frame)
        body.layout.display = None

    def deferred():
        state["scheduled"] = False
        try:
            flush()
        except Exception as exc:  # nothing would show it: say it in the message line
            warning(message, f"could not draw this setting: {type(exc).__name__}: {exc}")

    def refresh(change=None):
        state["pending"] = True
        if state["held"]:
            return
        loop = kernel_loop() if change is not None else None
        if loop is None:
            flush()
        elif not state["scheduled"]:
            state["scheduled"] = True
            loop.call_soon(deferred)

    @contextlib.contextmanager
    def hold():
        """Changes to the controls inside give one redraw, and each control one message to the page, however many
        of its traits change (value, range, options, greyed or not)."""
        state["held"] += 1
        try:
            with contextlib.ExitStack() as messages:
                for w in controls.values():
                    messages.enter_context(w.hold_sync())
                yield box
        finally:
            state["held"] -= 1
            if not state["held"] and state["pending"]:
                refresh(change=True)

    for w in controls.values():
        w.observe(refresh, names="value")
    box.refresh, box.hold, box.flush = refresh, hold, flush
    refresh()
    return box
