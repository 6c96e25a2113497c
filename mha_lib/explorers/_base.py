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
"""

from __future__ import annotations

import html
import io

import ipywidgets as widgets
from matplotlib.figure import Figure

__all__ = ["build_explorer", "render_png", "int_slider", "dropdown", "checkbox"]


def render_png(fig, dpi=90):
    """Encode a figure as PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


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


def build_explorer(controls, compute, draw, *, figsize=(8, 4), dpi=90, title=None, extra=None):
    """Wire controls, a pure compute function and a drawing function together.

    Parameters
    ----------
    controls : dict of str -> ipywidgets.ValueWidget
        The knobs. Their ``.value`` s are passed to ``compute`` as keyword
        arguments under the same names.
    compute : callable(**values) -> result
        Pure: no drawing, no widgets. Raises ``ValueError`` or ``TypeError``
        with a one-line explanation for an impossible combination.
    draw : callable(fig, result) -> None
        Draws the result on the figure (it may reuse the figure's axes).
    figsize : (float, float)
        Figure size in inches.
    dpi : int
        Resolution of the PNG sent to the browser.
    title : str, optional
        A heading shown above the controls.
    extra : list of widgets, optional
        Shown under the picture (e.g. a table of shapes that ``draw`` fills).

    Returns
    -------
    ipywidgets.VBox
        With the attributes listed in this module's docstring.
    """
    fig = Figure(figsize=figsize, layout="constrained")
    message = widgets.HTML(value="")
    image = widgets.Image(format="png")
    rows = []
    if title:
        rows.append(widgets.HTML(f"<b>{html.escape(title)}</b>"))
    rows.append(widgets.HBox(list(controls.values()), layout=widgets.Layout(flex_flow="row wrap")))
    rows += [message, image] + list(extra or [])
    box = widgets.VBox(rows)
    box.controls, box.message, box.image, box.figure, box.result = controls, message, image, fig, None

    def refresh(change=None):
        values = {name: w.value for name, w in controls.items()}
        try:
            result = compute(**values)
        except (ValueError, TypeError) as exc:
            box.result = None
            message.value = f'<span style="color:#B03A2E">&#9888; {html.escape(str(exc))}</span>'
            image.layout.visibility = "hidden"
            return
        box.result = result
        message.value = ""
        draw(fig, result)
        image.value = render_png(fig, dpi=dpi)
        image.layout.visibility = "visible"

    for w in controls.values():
        w.observe(refresh, names="value")
    box.refresh = refresh
    refresh()
    return box
