"""The lecture's scenes as data: the 35 minutes of a 50-minute lecture as named scenes (settings of the controls of
the lecture explorer or the one-head step view, or a still view of their own), each with the line shown under the
scene bar. :mod:`.screen` shows them.
"""

from __future__ import annotations

import contextlib
import numbers
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs

import ipywidgets as widgets
import numpy as np

from ..attention import multi_head_attention
from ..data import embed_tokens
from ..designed import soft_lookup_example
from ..explorers.toolkit import explorer_params
from ..plotting import SIGNED_CMAP, WEIGHTS_CMAP
from ..viz import colour_table, render_png

__all__ = [
    "Scene",
    "SCENES",
    "scene_line",
    "trained_reading",
    "map_heads",
    "LookupView",
    "PositionsView",
    "BlendView",
    "scene_index",
    "scene_from_query",
]


@dataclass(frozen=True)
class Scene:
    """One scene: its name, which view it shows ("lookup", "lecture", "steps", "blend" or "positions"), the control
    values it sets, its minutes, the step of the computation it is about (one of
    :data:`mha_lib.diagrams.DIAGRAM_STEPS`, orange on the map), and one line shown under the scene bar (what to
    read off the picture)."""

    name: str
    view: str
    settings: dict = field(default_factory=dict)
    minutes: int = 5
    step: str = None
    text: str = ""
    # a step-view scene's line at a given step of the step view (what the next press of ↓ shows, none after the
    # last one the plan uses), instead of ``text``, so the line never names a key that no longer applies
    at_step: dict = field(default_factory=dict)

    @property
    def slug(self):
        """The name in the URL: ``?scene=masks-causal``."""
        return re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")


# Control values are applied in this order (d_model before h, tie before d_k). Names a given explorer
# does not have are skipped, so a scene never fails on an explorer without, e.g., a "weights" control.
# "weights" (the parameters) goes first: designed or trained parameters fix d_model and h, random ones free them.
_RUNNING = {
    "weights": "random",
    "preset": "custom",
    "sentence": "humpty dumpty sat on",
    "d_model": 512,
    "tie": True,
    "h": 8,
    "mask": "none",
    "scaled": True,
    "lecture": True,
}
SCENES = (
    Scene(
        "Why attention: it finds the cat",
        "lookup",
        {},
        4,
        "softmax",
        "query = what a word looks for · key = what it offers · value = what it hands over when found",
    ),
    # opens on the scores (X, Q_i, K_i, V_i shown): three presses of "next step" reach Head_i
    Scene(
        "One head by hand",
        "steps",
        {"source": "random", "head": 1, "step": 4, "temperature": 1.0},
        4,
        "projections",
        "next step (↓) 3 times: scale, softmax row by row, Head_i = weights_i V_i",
        {
            5: "next step (↓) 2 more times: softmax row by row, then Head_i = weights_i V_i",
            6: "next step (↓) once more: Head_i = weights_i V_i",
            7: "Head_i = weights_i V_i: each row a weighted average of the rows of V_i",
        },
    ),
    # no line under the bar: at 1024 x 768 the heads' numbers need its height (the caption says "NOT scaled"; S scales)
    Scene("Why divide by sqrt(d_k)", "lecture", {**_RUNNING, "tie": False, "d_k": 256, "scaled": False}, 4, "scores"),
    # random parameters: at T = 1 head 1's rows are mixed (0.25/0.26/0.03/0.46), so T = 0.1 sharpens them to
    # almost one-hot and T = 10 flattens them to 0.21-0.28 (a designed head is one-hot already at T = 1)
    Scene(
        "Softmax and temperature",
        "steps",
        {"source": "random", "head": 1, "step": 6, "temperature": 1.0},
        4,
        "softmax",
        "press Shift+T: cooler (T = 0.1, sharper) · T: warmer (T = 10, flatter)",
    ),
    Scene("Masks: causal", "lecture", {**_RUNNING, "mask": "causal"}, 3, "softmax"),
    Scene(
        "Masks: you are welcome PAD",
        "lecture",
        {**_RUNNING, "sentence": "you are welcome PAD", "mask": "padding"},
        1,
        "softmax",
    ),
    # random head 1: every row mixes several rows of V_i (a designed head copies one row, so no blend shows);
    # V_1, weights_1 and Head_1 side by side, rows labelled (BlendView)
    Scene(
        "The weighted sum",
        "blend",
        {},
        4,
        "values",
        "Head_1 row “humpty” = 0.25 × V(humpty) + 0.26 × V(dumpty) + 0.03 × V(sat) + 0.46 × V(on)",
    ),
    # trained parameters (MiniLM's layer 1: d_k = d_model / h = 384 / 12 = 32): heads with different patterns, so the
    # point (several heads look at different things, at the cost of one head of d_model) is on the picture; random
    # heads' patterns mean nothing. The line follows the layer shown: {…} are filled in by scene_line; for the trained
    # layer it spells the weights the plan reads (head 3 on the token before, head 4 from [CLS] on [SEP]), whose cells
    # are too small for numbers a hall reads (8 heads of 6 tokens)
    Scene(
        "Several heads",
        "lecture",
        {**_RUNNING, "weights": "trained", "sentence": "the cat saw it"},  # 6 tokens with [CLS] and [SEP]
        3,
        "concat",
        "{rule} · {heads}, {params}",
    ),
    # opens on V_i, before any score: the room predicts where "cat" looks, then "next step" shows the scores
    Scene(
        "What trained heads do",
        "steps",
        {"source": "trained", "head": 3, "step": 3, "temperature": 1.0},
        4,
        "softmax",
        "next step (↓) 3 times: the scores, scaled, then the weights · H: the next head",
        {
            4: "next step (↓) 2 more times: scaled, then the weights · H: the next head",
            5: "next step (↓) once more: the weights · H: the next head",
            6: "H: the next head · Shift+H: the one before",
            7: "H: the next head · Shift+H: the one before",
        },
    ),
    # the two orders side by side, and the second put back in the first order: the same picture, so every number
    # moved with its word (head 1: "cat" puts 0.52 on "dog" in both orders)
    Scene(
        "Positions: cat and dog swapped",
        "positions",
        {},
        4,
        "embeddings",
        "swap “cat” and “dog”: what happens to head 1's weights and to the output rows?",
    ),
)


class _StillView(widgets.VBox):
    """A scene's view with no controls: its HTML picture is made once (the kernel draws no pixels); what the screen
    asks of an explorer: ``controls`` (none), ``message``, ``picture``, ``hold()``, ``flush()``, ``prepare()``.
    The picture's outer element is a ``mha-pic`` (bold under high contrast, found by the browser tests as the
    explorers' pictures are) whose ``data-frame`` names the view."""

    def hold(self):
        return contextlib.nullcontext()

    def flush(self):
        """Nothing waits: the view is drawn once."""

    def prepare(self):
        return 0


# A still scene's answer waits for its poll: the parts marked mha-answer are hidden (those also mha-later take no
# room: the button is in their place) until the next-step key (↓ or ".",
# or the button) reveals them; ↑ or "," hides them again (screen.js toggles mha-revealed on the picture, in the live
# screen and in the USB copy alike; a scene opened again opens without its answer).
REVEAL_STYLE = (
    "<style>.mha-pic:not(.mha-revealed) .mha-answer { visibility: hidden; }"
    " .mha-pic:not(.mha-revealed) .mha-answer.mha-later { display: none; }"
    " .mha-pic.mha-revealed .mha-ask { display: none; }</style>"
)


def reveal_button(what):
    """The button under a still scene's question: what ↓ does (``what``: "the weights")."""
    u = "var(--u, 20px)"
    return (
        f"<button class='mha-reveal mha-ask' style='font-size: calc({u} * 1.1); margin-top: calc({u} * 0.5); "
        f"padding: calc({u} * 0.2) calc({u} * 0.8); cursor: pointer'>after the poll: show {what} (key ↓)</button>"
    )


class _PagedView(_StillView):
    """A still scene with a poll: the fallback deck (``tools/export_scenes.py``) has a page for its question and one
    for its answer, both drawn by matplotlib (``still``) when asked for, never by the screen."""

    @property
    def image(self):
        """The deck's page with the answer."""
        if not hasattr(self, "_image"):
            self._image = widgets.Image(value=self.still(answer=True), format="png")
        return self._image

    @property
    def question_image(self):
        """The deck's page before the poll: the question without its answer."""
        if not hasattr(self, "_question_image"):
            self._question_image = widgets.Image(value=self.still(answer=False), format="png")
        return self._question_image


SENTENCE = ("the", "cat", "sat", "down", "because", "it", "was", "tired")  # the motivation scene's sentence
LOOKUP_OFFERS = {"the": "nothing", "cat": "a thing", "sat": "an action", "it": "half a thing"}  # each key, said
LOOKUP_HANDS = {"the": "nothing", "cat": "“cat”", "sat": "“sitting”", "it": "nothing"}  # each value, said


class LookupView(_PagedView):
    """The motivation scene: "it" finds the noun it refers to (:func:`mha_lib.soft_lookup_example`), as large text
    and bars in HTML (the kernel draws no pixels). Has what the screen asks of an explorer: ``controls`` (none),
    ``message``, ``picture``, ``hold()``, ``flush()`` and ``prepare()``."""

    def __init__(self, dpi=90):
        self.controls, self.message, self.dpi = {}, widgets.HTML(""), dpi
        self.look = look = soft_lookup_example()
        m = look.tokens.index("it")
        offers, hands = LOOKUP_OFFERS, LOOKUP_HANDS
        u = "var(--u, 20px)"
        cell = f"padding: max(calc({u} * 0.25), 1vh) calc({u} * 0.6); font-size: calc({u} * 1.15); text-align: left"
        rows = []
        for j, tok in enumerate(look.tokens):
            w = look.weights[m, j]
            bar = (
                f"<div style='display: inline-block; vertical-align: middle; height: calc({u} * 1.1); "
                f"width: calc({u} * {9 * w:.2f}); background: #0072B2'></div>"
            )
            # no row in bold: the best match is the poll's answer, read off the bars only after the poll
            rows.append(
                f"<tr><td style='{cell}'>{tok}</td><td style='{cell}'>{offers[tok]} "
                f"({', '.join(f'{x:g}' for x in look.K[j])})</td>"
                f"<td style='{cell}'><span class='mha-answer'>{look.scores[m, j]:g}</span></td>"
                f"<td style='{cell}; white-space: nowrap'><span class='mha-answer'>{bar} {w:.2f}</span></td>"
                f"<td style='{cell}'>{hands[tok]}</td></tr>"
            )
        head = "".join(
            f"<th style='{cell}; border-bottom: 2px solid'>{t}</th>"
            for t in ("word", "key: what it offers", "score: query · key", "weight (softmax)", "value: hands over")
        )
        out = ", ".join(f"{x:.2f}" for x in look.output[m])
        # the whole sentence, the words the table leaves out in grey ("it" in bold: the word asked about)
        shown = set(look.tokens)
        sentence = " ".join(
            "<b>it</b>"
            if w == "it"
            else w
            if w in shown
            else f"<span class='mha-keep-colour' style='--c: #767676; color: var(--c)'>{w}</span>"
            for w in SENTENCE
        )
        left_out = ", ".join(w for w in SENTENCE if w not in shown)
        self.picture = widgets.HTML(
            f"{REVEAL_STYLE}<div class='mha-pic mha-still' data-frame='lookup' style='line-height: 1.35'>"
            f"<div style='font-size: calc({u} * 1.6); margin-bottom: calc({u} * 0.2)'>“{sentence}”: which word "
            f"does <b>it</b> mean?</div>"
            f"<div style='font-size: calc({u} * 1.1); margin-bottom: calc({u} * 0.4)' title='left out: {left_out}'>"
            f"The table shows {len(look.tokens)} of its {len(SENTENCE)} words; the grey ones are left out.</div>"
            f"<div style='font-size: calc({u} * 1.2); margin-bottom: calc({u} * 0.6)'>The query of <b>it</b>: "
            f"“I look for a thing” ({', '.join(f'{x:g}' for x in look.Q[m])}). Every word's key says what it "
            f"offers; the score is how well the query matches it.</div>"
            f"<table style='border-collapse: collapse'>{head}{''.join(rows)}</table>"
            + reveal_button("the scores and weights")
            + f"<div class='mha-answer mha-later' style='font-size: calc({u} * 1.2); "
            f"margin-top: calc({u} * 0.6)'><b>it</b> "
            f"receives the weighted sum of the values: ({out}), {look.weights[m, 1]:.0%} “cat”. A soft lookup: every "
            f"word in the table gets some weight, the best match the most (the weights sum to 1); learned W<sup>Q</sup>, "
            f"W<sup>K</sup>, W<sup>V</sup> make the queries, keys and values.</div></div>"
        )
        super().__init__([self.message, self.picture])

    def still(self, answer=True):
        """PNG of the scene as a 16:9 page (text about 40 px high on a 1920 x 1080 page); without its ``answer``, the
        table without the scores, weights and conclusion."""
        from matplotlib.figure import Figure

        look = self.look
        m = look.tokens.index("it")
        fig = Figure(figsize=(11, 6.1875))
        fig.text(0.03, 0.92, "“" + " ".join(SENTENCE) + "”: which word does “it” mean?", fontsize=22, va="top")
        fig.text(
            0.03,
            0.82,
            f"The query of “it”: “I look for a thing” ({', '.join(f'{x:g}' for x in look.Q[m])}). Every word's key "
            "says what it offers;\nthe score is how well the query matches it. The table shows "
            f"{len(look.tokens)} of the {len(SENTENCE)} words.",
            fontsize=15,
            va="top",
        )
        rows = []
        for j, tok in enumerate(look.tokens):
            w = look.weights[m, j]
            key = f"{LOOKUP_OFFERS[tok]} ({', '.join(f'{x:g}' for x in look.K[j])})"
            score, weight = (f"{look.scores[m, j]:g}", f"{'█' * round(12 * w)} {w:.2f}") if answer else ("?", "?")
            rows.append([tok, key, score, weight, LOOKUP_HANDS[tok]])
        ax = fig.add_axes((0.03, 0.3, 0.86, 0.4))
        ax.axis("off")
        table = ax.table(
            cellText=rows,
            colLabels=("word", "key: what it offers", "score: query · key", "weight (softmax)", "value: hands over"),
            colWidths=(0.1, 0.26, 0.22, 0.24, 0.2),
            cellLoc="left",
            loc="upper left",
            edges="horizontal",
        )
        table.auto_set_font_size(False)
        table.set_fontsize(15)
        table.scale(1, 2.6)
        for (r, c), cell in table.get_celld().items():
            if c == 3 and r > 0 and answer:
                cell.get_text().set_color("#0072B2")
        out = ", ".join(f"{x:.2f}" for x in look.output[m])
        end = (
            f"“it” receives the weighted sum of the values: ({out}), {look.weights[m, 1]:.0%} “cat”. A soft lookup:\n"
            "every word gets some weight, the best match the most (the weights sum to 1)."
            if answer
            else "Poll: which word should “it” look at? (next page: the scores and weights)"
        )
        fig.text(0.03, 0.2, end, fontsize=16, va="top")
        return render_png(fig, dpi=self.dpi)


POSITIONS_ORDERS = (("the", "cat", "saw", "the", "dog"), ("the", "dog", "saw", "the", "cat"))
_WORD_COLOURS = {"cat": "#D55E00", "dog": "#0072B2"}  # Okabe-Ito vermilion and blue


class PositionsView(_PagedView):
    """The positions scene: head 1 of the running example's layer (d_model 512, h 8, random parameters) on "the cat
    saw the dog" and on "the dog saw the cat", side by side, and the second with its rows and columns put back in
    the first order: the same picture as the first, so every number moved with its word. Each weight is written in
    its cell, at the size of the other scenes' numbers."""

    def __init__(self, dpi=90):
        self.controls, self.message, self.dpi = {}, widgets.HTML(""), dpi
        params = explorer_params(512, 8)  # the lecture explorer's random layer (shared with it): compute_lecture's default
        results = [multi_head_attention(embed_tokens(list(t), 512), params) for t in POSITIONS_ORDERS]
        back = [1 if k == 4 else 4 if k == 1 else k for k in range(5)]  # swap positions 1 and 4 back
        self.weights = (results[0].weights[0], results[1].weights[0], results[1].weights[0][np.ix_(back, back)])
        self.output_gap = float(np.abs(results[1].output[back] - results[0].output).max())
        self.titles = ("“the cat saw the dog”", "“the dog saw the cat”", "the second, cat and dog put back")
        self.labels = (POSITIONS_ORDERS[0], POSITIONS_ORDERS[1], POSITIONS_ORDERS[0])
        colours = colour_table(WEIGHTS_CMAP)
        u = "var(--u, 20px)"

        def word(t):
            c = _WORD_COLOURS.get(t)
            return f"<b class='mha-keep-colour' style='--c: {c}; color: var(--c)'>{t}</b>" if c else t

        # the cells as large as three grids of five columns and their labels let the window (at most 3.2 units: 58 px
        # at 1280 x 720, 46 px at 1024 x 768), each weight written in its cell at 3.3 % of the window's height (".52":
        # no leading zero), black on pale cells and white on dark ones, as the heads of the other scenes
        size = f"max(30px, min(calc({u} * 3.2), calc((100vw - 340px) / 15)))"
        pair = {("cat", "dog"), ("dog", "cat")}  # the cells of cat's query on dog's key and back: framed in every grid

        def number(w):
            return "1" if w >= 0.995 else "0" if w < 0.005 else f"{w:.2f}".replace("0.", ".", 1)

        def grid(w, labels, title, answer=False):
            head = (
                "<tr><td></td>"
                + "".join(f"<td style='text-align: center; font-size: calc({u} * 0.95)'>{word(t)}</td>" for t in labels)
                + "</tr>"
            )
            rows = "".join(
                f"<tr><td style='text-align: right; padding-right: calc({u} * 0.4)'>{word(labels[i])}</td>"
                + "".join(
                    f"<td class='{'mha-on-dark' if w[i, j] < 0.6 else 'mha-on-pale'}' style='width: {size}; "
                    f"min-width: {size}; height: {size}; padding: 0; text-align: center; "
                    f"font-size: max(3.3vh, calc({u} * 1.2)); font-weight: normal; "
                    f"color: {'#fff' if w[i, j] < 0.6 else '#000'}; background: "
                    f"{colours[min(255, int(round(255 * w[i, j])))]}"
                    # framed around the cell, over the white lines between cells: the whole cell keeps its number
                    # (a frame inside it covered the point of ".52" at 1024 x 768)
                    + ("; outline: 3px solid #000; outline-offset: -1px" if (labels[i], labels[j]) in pair else "")
                    + f"'>{number(w[i, j])}</td>"
                    for j in range(len(labels))
                )
                + "</tr>"
                for i in range(len(labels))
            )
            return (
                f"<div class='{'mha-answer' if answer else ''}' style='margin-right: calc({u} * 1.2)'>"
                f"<div style='font-size: calc({u} * 1.2); "
                f"margin-bottom: calc({u} * 0.3)'>{title}</div><table style='border-spacing: 2px'>{head}{rows}"
                f"</table></div>"
            )

        same = "the same picture as the first" if np.allclose(self.weights[0], self.weights[2]) else "different"
        self.picture = widgets.HTML(
            f"{REVEAL_STYLE}<div class='mha-pic mha-still' data-frame='positions' style='font-size: calc({u} * 1.1)'>"
            f"<div style='font-size: calc({u} * 1.2); margin-bottom: calc({u} * 0.4)'>Head 1's weights (row: query, "
            f"column: key), random parameters, no positions added; framed: “cat” on “dog” and “dog” on “cat”</div>"
            # the grids' bottoms aligned (they are of one size): a title on two lines does not push its grid lower
            f"<div style='display: flex; align-items: flex-end'>"
            + "".join(
                grid(w, lab, t, answer=k == 2)
                for k, (w, lab, t) in enumerate(zip(self.weights, self.labels, self.titles, strict=True))
            )
            + "</div>"
            + reveal_button("the answer")
            + f"<div class='mha-answer mha-later' style='font-size: calc({u} * 1.2); "
            f"margin-top: calc({u} * 0.6)'>Their rows "
            f"and columns swapped, nothing else changed. Right: {same}. Every "
            f"number moved with its word; the output rows too (largest difference once put back: "
            f"{self.output_gap:.0e}). Nothing in the layer knows the order: positional encodings add it "
            f"(notebook 10).</div></div>"
        )
        super().__init__([self.message, self.picture])

    def still(self, answer=True):
        """PNG of the scene as a 16:9 page, as on the screen: the weights written in their cells, cat on dog framed;
        without its ``answer``, the two orders only."""
        from matplotlib.figure import Figure
        from matplotlib.patches import Rectangle

        fig = Figure(figsize=(11, 6.1875), layout="constrained")
        axes = fig.subplots(1, 3)
        for k, (ax, w, labels, title) in enumerate(zip(axes, self.weights, self.labels, self.titles, strict=True)):
            if k == 2 and not answer:
                ax.axis("off")
                ax.text(
                    0.5,
                    0.5,
                    "Poll: swap “cat” and “dog”:\nwhat happens to the\nweights and the outputs?\n\n(next page: the answer)",
                    ha="center",
                    va="center",
                    fontsize=15,
                    transform=ax.transAxes,
                )
                continue
            ax.imshow(w, cmap=WEIGHTS_CMAP, vmin=0, vmax=1)
            ax.set_xticks(range(5), labels, fontsize=14)
            ax.set_yticks(range(5), labels, fontsize=14)
            ax.tick_params(length=0)
            for tick in [*ax.get_xticklabels(), *ax.get_yticklabels()]:
                tick.set_color(_WORD_COLOURS.get(tick.get_text(), "black"))
            for (i, j), x in np.ndenumerate(w):
                text = "1" if x >= 0.995 else "0" if x < 0.005 else f"{x:.2f}".replace("0.", ".", 1)
                ax.text(j, i, text, ha="center", va="center", fontsize=14, color="white" if x < 0.6 else "black")
                if {labels[i], labels[j]} == {"cat", "dog"}:
                    ax.add_patch(Rectangle((j - 0.45, i - 0.45), 0.9, 0.9, fill=False, lw=3, ec="black"))
            ax.set_title(title.replace(", ", ",\n"), fontsize=15)
        fig.suptitle("Head 1's weights (row: query, column: key), random parameters, no positions added", fontsize=17)
        if answer:
            fig.supxlabel(
                "Their rows and columns swapped, nothing else changed: put back, the second is the first.\nNothing in "
                "the layer knows the order: positional encodings add it (notebook 10).",
                fontsize=15,
            )
        return render_png(fig, dpi=self.dpi)


class BlendView(_StillView):
    """The weighted-sum scene: head 1 of the running example (random parameters, whose rows mix), V_1, weights_1 and
        Head_1 side by side with their rows labelled (the first 8 of V_1's and Head_1's 64 columns, large enough to
        see), row "humpty" outlined as a whole: Head_1's row is the blend of V_1's rows that its weights say. Each row of
    Head_1 is drawn on a colour scale of its own (its ± written beside it), so the pattern of a row with small numbers
    shows too. The cells take the window's width (vw); the weights' numbers are 3.3 % of the window's height (".25": no
    leading zero), black on pale cells and white on dark ones, in high contrast too."""

    COLUMNS = 8

    def __init__(self, dpi=90):
        self.controls, self.message, self.dpi = {}, widgets.HTML(""), dpi
        self.tokens = tokens = ("humpty", "dumpty", "sat", "on")
        res = multi_head_attention(embed_tokens(list(tokens), 512), explorer_params(512, 8))  # the shared layer
        self.V, self.weights, self.head = res.V[0], res.weights[0], res.heads[0]  # (4, 64), (4, 4), (4, 64)
        signed, positive = colour_table(SIGNED_CMAP), colour_table(WEIGHTS_CMAP)
        lim = float(np.abs(self.V[:, : self.COLUMNS]).max())
        u = "var(--u, 20px)"
        # the cells' width from the window's: the three grids, their labels and V_1's bar across it (26 px at 1280 px
        # wide, 18 px at 1024, bold labels too; at most 1.6 units, 43 px at 1920 x 1080); their height 11.5 % of its height
        # (6 % of its width on a 4:3 window, where the bar and the titles take more lines: 1024 x 768, high contrast)
        a = f"max(12px, min(calc(3.3vw - 16px), calc({u} * 1.6)))"

        def cell(colour, text="", edge="", width=1.0, dark=False):
            # the outlined row: a frame around the whole row (top and bottom of each cell, the ends' sides), so its
            # colours stay visible; a number's colour by its cell's (a class: high contrast keeps it); a cell with a
            # number is parted from its neighbours by a thin white line, as the heads' cells of the other scenes are
            frame = {"": "", "first": "border-left: 4px solid #000; ", "last": "border-right: 4px solid #000; "}
            ring = "border-top: 4px solid #000; border-bottom: 4px solid #000; " if edge else ""
            parted = "box-shadow: inset 0 0 0 1px rgba(255, 255, 255, 0.75); " if text else ""
            return (
                f"<td class='{'mha-on-dark' if dark else 'mha-on-pale'}' style='{ring}{frame.get(edge, '')}{parted}"
                f"color: {'#fff' if dark else '#000'}; "
                f"width: calc({a} * {width}); min-width: calc({a} * {width}); "
                f"height: max(calc({u} * 2.3), min(11.5vh, 6vw)); "
                f"background: {colour}; padding: 0; "
                f"text-align: center; font-size: max(calc({u} * 1.2), 3.3vh); font-weight: normal'>{text}</td>"
            )

        def edges(i, j, m):
            return "" if i else ("first" if j == 0 else "last" if j == m - 1 else "row")

        def bar(top):
            """A colour bar of the signed map, -top ... top, its three values beside it."""
            stops = ", ".join(signed[k] for k in range(255, -1, -32)) + f", {signed[0]}"
            ticks = "".join(f"<div>{t}</div>" for t in (f"+{top:.2f}", "0", f"−{top:.2f}"))
            return (
                f"<div style='display: flex; align-items: stretch; margin-left: calc({u} * 0.3); "
                f"height: max(calc({u} * 9.2), min(42vh, 24vw))"
                f"'><div style='width: calc({u} * 0.7); border: 1px solid #000; background: linear-gradient({stops})'>"
                f"</div><div style='display: flex; flex-direction: column; justify-content: space-between; "
                f"font-size: calc({u} * 1.05); margin-left: calc({u} * 0.2)'>{ticks}</div></div>"
            )

        def grid(title, rows, side="", after=None):
            """A labelled table of cells; ``after``: a text at the end of each row (Head_1's scale)."""
            end = f"<td style='padding-left: calc({u} * 0.3); font-size: calc({u} * 1.15)'>"  # read with the plan
            body = "".join(
                f"<tr><td style='text-align: right; padding-right: calc({u} * 0.4)'>{tokens[i]}</td>{r}"
                + (f"{end}{after[i]}</td>" if after else "")
                + "</tr>"
                for i, r in enumerate(rows)
            )
            return (
                f"<div style='margin-right: calc({u} * 0.9)'><div style='font-size: calc({u} * 1.2); "
                f"margin-bottom: calc({u} * 0.3)'>{title}</div><div style='display: flex; align-items: flex-start'>"
                f"<table style='border-collapse: collapse'>{body}</table>{side}</div></div>"
            )

        def shade(x, top):  # the signed colour map, -top ... top, as the step view colours V_i
            return signed[min(255, max(0, int(round(127.5 * (1 + x / top)))))]

        c = self.COLUMNS
        # Head_1's values are smaller than V_1's (a blend whose signs partly cancel): on V_1's scale its rows were
        # almost white, and on one scale for all of Head_1 row "humpty" (±0.23 of ±0.67) was still pale; each row on
        # a scale of its own shows its pattern (which row of V_1 it looks like)
        self.limits = lim, head_lim = lim, float(np.abs(self.head[:, :c]).max())
        self.row_limits = rows_lim = [float(np.abs(row).max()) for row in self.head[:, :c]]
        v_rows = ["".join(cell(shade(x, lim)) for x in row) for row in self.V[:, :c]]
        h_rows = [
            "".join(cell(shade(x, rows_lim[i]), edge=edges(i, j, c)) for j, x in enumerate(row))
            for i, row in enumerate(self.head[:, :c])
        ]
        w_rows = [
            "".join(
                cell(
                    positive[min(255, int(round(255 * w)))],
                    f"{w:.2f}".replace("0.", ".", 1),
                    edges(i, j, 4),
                    2.5,
                    dark=w < 0.6,
                )
                for j, w in enumerate(row)
            )
            for i, row in enumerate(self.weights)
        ]
        self.picture = widgets.HTML(
            f"<div class='mha-pic mha-still' data-frame='blend' style='font-size: calc({u} * 1.1)'>"
            f"<div style='font-size: calc({u} * 1.3); margin-bottom: calc({u} * 0.5)'>Head_1 = weights_1 V_1: each "
            f"row of Head_1 blends the rows of V_1 with its row of weights (running example, head 1; the first "
            f"{self.COLUMNS} of 64 columns)</div><div style='display: flex; align-items: flex-end'>"
            + grid("V_1: what each word hands over", v_rows, bar(lim))
            + grid("weights_1 (columns: " + ", ".join(tokens) + ")", w_rows)
            + grid("Head_1 = weights_1 V_1 (each row on its own scale)", h_rows, after=[f"±{x:.2f}" for x in rows_lim])
            + f"</div><div style='font-size: calc({u} * 1.2); margin-top: calc({u} * 0.6)'>"
            "Row “humpty” (outlined): the blend under the scene bar. No weight is near 1, so each row blends "
            f"rows of V_1, with smaller numbers (signs cancel: ±{rows_lim[0]:.2f} against V_1's ±{lim:.2f}).</div></div>"
        )
        super().__init__([self.message, self.picture])

    @property
    def image(self):
        """The still picture for the fallback deck: V_1, weights_1 and Head_1, drawn by matplotlib when asked for."""
        if not hasattr(self, "_image"):
            import matplotlib
            from matplotlib.figure import Figure

            with matplotlib.rc_context({"font.size": 15}):  # a 16:9 page, text about 40 px high at 1920 x 1080
                fig = Figure(figsize=(11, 6.1875), layout="constrained")
                axes = fig.subplots(1, 3, width_ratios=(3, 2.2, 3))
                lim, head_lim = self.limits  # Head_1 on a scale of its own, as on the screen
                for ax, m, title, cmap, lo in (
                    (axes[0], self.V[:, : self.COLUMNS], "V_1", SIGNED_CMAP, -lim),
                    (axes[1], self.weights, "weights_1", WEIGHTS_CMAP, 0.0),
                    (
                        axes[2],
                        self.head[:, : self.COLUMNS],
                        f"Head_1\n(scale ±{head_lim:.2f})",
                        SIGNED_CMAP,
                        -head_lim,
                    ),
                ):
                    ax.imshow(m, cmap=cmap, vmin=lo, vmax=-lo if lo else 1.0, aspect="auto")
                    ax.set_yticks(range(4), self.tokens)
                    ax.set_xticks([])
                    ax.set_title(title)
                for (i, j), w in np.ndenumerate(self.weights):
                    number = f"{w:.2f}".replace("0.", ".", 1)  # ".25", as on the screen
                    axes[1].text(j, i, number, ha="center", va="center", color="white" if w < 0.6 else "black")
                fig.suptitle(
                    "row humpty: " + " + ".join(f"{w:.2f} V({t})" for w, t in zip(self.weights[0], self.tokens, strict=True))
                )
            self._image = widgets.Image(value=render_png(fig, dpi=self.dpi), format="png")
        return self._image


def scene_line(scene, controls=None, result=None):
    """The scene's line under the bar, its ``{d_model}``, ``{h}``, ``{d_k}``, ``{heads}`` ("8 heads") and ``{rule}``
    ("d_k = d_model / h = 512 / 8 = 64", or "d_k = 16, not d_model / h = 512 / 8 = 64" when untied) and ``{params}``
    (which parameters, and what their heads' patterns say: :data:`PARAMS_LINE`) filled in from the setting shown
    (``result``: a LectureResult, whose sizes are those of a designed or trained layer too), else from the explorer's
    controls, else from the scene's settings: the line follows h when the lecturer moves it. A step-view scene's line
    follows its step (``scene.at_step``)."""
    step = (controls or {}).get("step")
    if scene.at_step and step is not None:
        return scene.at_step.get(step.value, scene.text)
    if "{" not in scene.text:
        return scene.text
    values = {k: scene.settings.get(k) for k in ("d_model", "h", "d_k", "tie")}
    for k in values:
        widget = (controls or {}).get(k)
        if widget is not None:
            values[k] = widget.value
    if all(isinstance(getattr(result, k, None), numbers.Integral) for k in ("d_model", "h", "d_k")):
        values.update(d_model=result.d_model, h=result.h, d_k=result.d_k, tie=result.d_k * result.h == result.d_model)
    d_model, h, tie = int(values["d_model"] or 512), int(values["h"] or 1), bool(values["tie"])
    d_k = d_model // h if tie or values["d_k"] is None else int(values["d_k"])
    ratio = f"{d_model / h:g}"
    rule = (
        f"d_k = d_model / h = {d_model} / {h} = {d_k}"
        if d_k * h == d_model
        else f"d_k = {d_k}, not d_model / h = {d_model} / {h} = {ratio}"
    )
    heads = f"{h} head" + ("s" if h != 1 else "")
    widget = (controls or {}).get("weights")
    kind = getattr(result, "kind", None) or (widget.value if widget is not None else scene.settings.get("weights"))
    params = PARAMS_LINE.get(kind, PARAMS_LINE["random"])
    reading = trained_reading(result) if kind == "trained" else None
    if reading and scene.text == "{rule} · {heads}, {params}":  # the weights the plan reads, instead of the heads' count
        return f"{rule} · trained: {reading}"
    return scene.text.format(d_model=d_model, h=h, d_k=d_k, heads=heads, rule=rule, params=params)


def trained_reading(result):
    """What the lecture plan reads off the trained layer's heads 3 and 4, from the weights of the setting shown
    (``result``: a LectureResult): "head 3 → the token before 1.00, head 4 [CLS] → [SEP] 0.81" (its least weight on
    the token before, over the rows after the first; the weight of [CLS] on [SEP]). A part whose pattern the sentence
    shown does not have is left out; None if neither has it (or no weights)."""
    weights = getattr(getattr(result, "result", None), "weights", None)
    tokens = tuple(getattr(result, "tokens", ()) or ())
    if weights is None or len(weights) < 4 or len(tokens) < 3:
        return None
    parts = []
    before = min(float(weights[2][i, i - 1]) for i in range(1, len(tokens)))
    if before >= 0.5:  # every row puts at least half its weight on the token before
        parts.append(f"head 3 → the token before {before:.2f}")
    first, last = weights[3][0], len(tokens) - 1
    if tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and int(np.argmax(first)) == last:
        parts.append(f"head 4 [CLS] → [SEP] {float(first[last]):.2f}")
    return ", ".join(parts) or None


# {params} in a scene's line: which parameters the heads have, and whether their patterns mean something
PARAMS_LINE = {
    "trained": "trained (MiniLM layer 1): each looks elsewhere",
    "designed": "designed: each has a job",
    "random": "random parameters: the shapes are the point, not the patterns",
}


def map_heads(box):
    """The number of heads the map draws for a scene's explorer: its layer's (12 for the trained MiniLM layer, 4 for
    the designed one, the h of the lecture explorer), else the running example's 8."""
    h = getattr(getattr(box, "result", None), "h", None)
    return int(h) if isinstance(h, numbers.Integral) and h > 0 else 8


def scene_index(value, scenes=SCENES):
    """The 0-based index of a scene given as a number from 1, a slug or a name; ``None`` if none matches."""
    text = "" if value is None else str(value).strip().lower()
    if text.isdecimal() and len(text) <= 6:  # "²" is a digit int() refuses; a 5000-digit number is past any scene
        return int(text) - 1 if 0 < int(text) <= len(scenes) else None
    return next((k for k, s in enumerate(scenes) if text in (s.slug, s.name.lower())), None)


def scene_from_query(query_string, scenes=SCENES):
    """The scene asked for by ``scene=...`` in a URL query string (Voila's ``$QUERY_STRING``)."""
    values = parse_qs(query_string or "").get("scene", [])
    return scene_index(values[0], scenes) if values else None
