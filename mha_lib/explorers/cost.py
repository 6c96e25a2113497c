"""Explorer for notebook 11 (the cost of attention): FLOPs and memory against n, d_model and h.

``make_cost_explorer()``
    d_model and h (as in the real models of doc 001),
    the number of tokens n = 2**slider, and a checkbox for blockwise
    ("flash") attention. Left: where the arithmetic goes, step by step.
    Right: how many bytes each thing held at once takes in float32: the
    parameters, Q/K/V, and the attention weights (h n^2) or, blockwise, one
    block of scores per head (h n block_size).

The compute function :func:`cost_setting` is pure; the widget only draws it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cost import attention_cost, format_bytes
from .toolkit import LayoutDrawer, build_explorer, checkbox, dropdown, heads_control, int_slider, link_heads

__all__ = ["CostSetting", "cost_setting", "CostDrawer", "make_cost_explorer"]

# The widget's figure has no layout engine (the constrained layout would measure every text on each redraw).
MARGINS = dict(left=0.13, right=0.975, bottom=0.16, top=0.9, wspace=0.5)

STEP_LABELS = {
    "projections": "Q, K, V projections",
    "scores": "scores QKᵀ",
    "softmax": "softmax",
    "weighted_sum": "weighted sum AV",
    "output": "output $W^O$",
}


@dataclass(frozen=True)
class CostSetting:
    """FLOPs per step and float32 bytes held, for one (n, d_model, h) and attention kind."""

    n: int
    d_model: int
    h: int
    blockwise: bool
    block_size: int
    flops: dict  # step -> FLOPs
    memory: dict  # what -> bytes (float32)

    @property
    def total_flops(self):
        return sum(self.flops.values())


def cost_setting(d_model=768, h=12, log2_n=9, blockwise=False, block_size=64):
    """FLOPs of every step and the float32 memory of one layer for one sentence of n = 2**log2_n tokens.

    Raises
    ------
    ValueError
        When h does not divide d_model (d_k = d_model / h must be whole).
    """
    n = 2 ** int(log2_n)
    c = attention_cost(n, d_model, h)  # raises ValueError for h not dividing d_model
    flops = {name: c[name]["flops"] for name in STEP_LABELS}
    d_k = d_model // h
    held = h * n * min(block_size, n) if blockwise else c["scores"]["numbers"]  # scores (= weights) at once
    memory = {
        "parameters W": 4 * c["parameters"]["numbers"],
        "Q, K, V": 4 * 3 * h * n * d_k,
        ("one block of scores per head" if blockwise else "attention weights h n²"): 4 * held,
    }
    return CostSetting(n=n, d_model=int(d_model), h=int(h), blockwise=bool(blockwise), block_size=int(block_size),
                       flops=flops, memory=memory)


def _flops_title(res):
    return f"n = {res.n}, d_model = {res.d_model}, h = {res.h}: {res.total_flops / 1e9:,.2f} GFLOP"


def _memory_title(res):
    kind = f"blockwise, {res.block_size} keys at a time" if res.blockwise else "standard attention"
    return f"memory held at once: {kind}"


class CostDrawer(LayoutDrawer):
    """Left: share of the FLOPs per step. Right: bytes of what is held at once (log scale).

    Built once per kind of attention (standard or blockwise: other memory labels); a new setting
    only moves the bars, numbers and titles.
    """

    size = (10.0, 3.2)

    def key(self, res):
        return res.blockwise

    def build(self, fig, res):
        names, labels = list(STEP_LABELS), list(res.memory)
        ax_f, ax_m = fig.subplots(1, 2, gridspec_kw=MARGINS)
        quadratic = {"scores", "softmax", "weighted_sum"}
        y, ym = np.arange(len(names)), np.arange(len(labels))
        self.bars_f = list(ax_f.barh(y, np.zeros(len(names)),
                                     color=["#D55E00" if k in quadratic else "#0072B2" for k in names]))
        ax_f.set_yticks(y, labels=[STEP_LABELS[k] for k in names], fontsize=8)
        ax_f.invert_yaxis()
        ax_f.set_xlim(0, 110)
        ax_f.set_xlabel("% of the FLOPs (orange: grows with n²)", fontsize=8)
        self.texts_f = [ax_f.text(0, yi, "", va="center", fontsize=8) for yi in y]
        weights_color = "#009E73" if res.blockwise else "#D55E00"
        self.bars_m = list(ax_m.barh(ym, np.ones(len(labels)), color=["#999999", "#0072B2", weights_color]))
        ax_m.set_xscale("log")
        ax_m.set_xlim(1e3, 1e12)
        ax_m.set_yticks(ym, labels=labels, fontsize=8)
        ax_m.invert_yaxis()
        self.texts_m = [ax_m.text(1, yi, "", va="center", fontsize=8) for yi in ym]
        ax_m.set_xlabel("bytes in float32, one layer, one sentence (log scale)", fontsize=8)
        self.titles = [ax_f.set_title("", fontsize=9), ax_m.set_title("", fontsize=9)]

    def update(self, layout, res):
        share = np.array([res.flops[k] for k in STEP_LABELS], dtype=float) / res.total_flops
        for bar, text, v in zip(self.bars_f, self.texts_f, share):
            bar.set_width(100 * v)
            text.set_x(100 * v + 1)
            text.set_text(f"{100 * v:.1f}%")
        for bar, text, v in zip(self.bars_m, self.texts_m, res.memory.values()):
            bar.set_width(v)
            text.set_x(v * 1.3)
            text.set_text(format_bytes(v))
        self.titles[0].set_text(_flops_title(res))
        self.titles[1].set_text(_memory_title(res))
        return [*self.bars_f, *self.texts_f, *self.bars_m, *self.texts_m, *self.titles]



MODELS = [("512 (running example)", 512), ("768 (BERT-Base, GPT-2)", 768), ("4096 (LLaMA-7B)", 4096)]


def make_cost_explorer(d_model=768, h=12, log2_n=9, blockwise=False):
    """Widget: d_model, h, n = 2**slider and blockwise on/off -> FLOPs per step and memory.

    Returns
    -------
    ipywidgets.VBox
        See :func:`mha_lib.explorers.toolkit.build_explorer`; controls
        ``d_model``, ``h``, ``log2_n`` and ``blockwise``.
    """
    controls = {
        "d_model": dropdown("d_model", MODELS, value=d_model),
        "h": heads_control(d_model, h, max_h=64),
        "log2_n": int_slider("log₂ n", log2_n, 2, 17),
        "blockwise": checkbox("blockwise (flash) attention", blockwise),
    }
    box = build_explorer(controls, cost_setting, CostDrawer(), figsize=CostDrawer.size,
                         title="What one attention layer costs: n = 2 ** slider tokens")
    link_heads(box, lambda: controls["d_model"].value, max_h=64)
    return box
