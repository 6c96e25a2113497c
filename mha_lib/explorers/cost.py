"""Explorer of notebook 11 (the cost of attention): FLOPs per step and float32 memory held at once (the
parameters, Q/K/V, and the weights h n^2 or, blockwise, one block of scores per head h n block_size)."""

from dataclasses import dataclass

import numpy as np

from .._checks import check_flag, whole_number
from ..cost import attention_cost, format_bytes
from . import chart, toolkit

STEP_LABELS = {
    "projections": "Q, K, V projections",
    "scores": "scores QKᵀ",
    "softmax": "softmax",
    "weighted_sum": "weighted sum AV",
    "output": "output W^O",
}
BLOCK_LABEL, WEIGHTS_LABEL = "one block of scores per head", "attention weights h n²"  # the last memory item
MODELS = [("512 (running example)", 512), ("768 (BERT-Base, GPT-2)", 768), ("4096 (LLaMA-7B)", 4096)]


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
    """FLOPs of every step and the float32 memory of one layer for one sentence of n = 2**log2_n tokens (h must
    divide d_model; log2_n and block_size whole numbers in range)."""
    log2_n = whole_number(log2_n, "log2_n", "cost_setting", minimum=0, maximum=60)  # 2.5 is not rounded to 2
    block_size = whole_number(block_size, "block_size", "cost_setting", minimum=1)
    blockwise = check_flag(blockwise, "blockwise", "cost_setting")
    n = 2**log2_n
    c = attention_cost(n, d_model, h)  # raises ValueError for h not dividing d_model
    held = h * n * min(block_size, n) if blockwise else c["scores"]["numbers"]  # scores (= weights) at once
    memory = {
        "parameters W": 4 * c["parameters"]["numbers"],
        "Q, K, V": 4 * c["projections"]["numbers"],  # h n (2 d_k + d_v)
        (BLOCK_LABEL if blockwise else WEIGHTS_LABEL): 4 * held,
    }
    flops = {name: c[name]["flops"] for name in STEP_LABELS}
    return CostSetting(n, int(d_model), int(h), bool(blockwise), int(block_size), flops, memory)


class CostDrawer:
    """FLOPs per step (left) and bytes held (right, a log scale) as horizontal bars; the still figure from the same."""

    size = (10.0, 3.2)  # inches: the still figure
    parts, rows = {"cost": "chart"}, [["cost"]]  # the live picture: one chart of two panels (chart.py)

    def frames(self, res):
        percent = 100 * (np.array([res.flops[k] for k in STEP_LABELS], dtype=float) / res.total_flops)
        colours = ["#D55E00" if k in ("scores", "softmax", "weighted_sum") else "#0072B2" for k in STEP_LABELS]  # n²
        flops = _hbars(list(STEP_LABELS.values()), percent, [f"{v:.1f}%" for v in percent], colours, (0, 110))
        logs = np.log10(np.maximum(list(res.memory.values()), 1.0))  # bytes, drawn from 10^3 to 10^12
        colours = ["#999999", "#0072B2", "#009E73" if res.blockwise else "#D55E00"]
        memory = _hbars(list(res.memory), logs, [format_bytes(v) for v in res.memory.values()], colours, (3, 12.5), base=3)
        kind = f"blockwise, {res.block_size} keys at a time" if res.blockwise else "standard attention"
        flops["title"] = f"n = {res.n}, d_model = {res.d_model}, h = {res.h}: {res.total_flops / 1e9:,.2f} GFLOP"
        memory["title"] = f"memory held at once: {kind}"
        memory["xticks"] = [[3.0, "10³ B"], [6.0, "10⁶ B"], [9.0, "10⁹ B"], [12.0, "10¹² B"]]
        flops_panel = chart.panel("flops", height=230, xlabel="% of the FLOPs (orange: grows with n²)")
        memory_panel = chart.panel("memory", height=230, xlabel="bytes in float32, one layer, one sentence (log scale)")
        return {"cost": chart.frame((flops_panel, flops), (memory_panel, memory))}


def _hbars(labels, values, texts, colours, x, base=0.0):
    """One horizontal bar per label (the first on top), its text past its end (inside when the bar nearly fills)."""
    k = len(labels)
    marks = []
    for i, (value, text, colour) in enumerate(zip(values, texts, colours, strict=True)):
        y, end = k - 1 - i, min(float(value), x[1])
        marks.append(chart.box(base, y - 0.35, max(end - base, 0.0), 0.7, fill=colour, stroke="none"))
        inside = end > x[0] + 0.8 * (x[1] - x[0])
        where, anchor, colour = (end - 0.02 * (x[1] - x[0]), "end", "#ffffff") if inside else (end, "start", "#000000")
        marks.append(
            chart.text(where + (0 if inside else 0.01 * (x[1] - x[0])), y - 0.15, f" {text} ", anchor=anchor, color=colour)
        )
    return chart.view(x, (-0.6, k - 0.4), marks, yticks=[(k - 1 - i, label) for i, label in enumerate(labels)])


def make_cost_explorer(d_model=768, h=12, log2_n=9, blockwise=False):
    """Controls ``d_model``, ``h`` (its divisors), ``log2_n`` and ``blockwise`` -> FLOPs per step and memory."""
    log2_n = whole_number(log2_n, "log2_n", "make_cost_explorer", minimum=2, maximum=17)  # the slider's range
    controls = {
        "d_model": toolkit.dropdown("d_model", MODELS, value=d_model),
        "h": toolkit.heads_control(d_model, h, max_h=64),
        "log2_n": toolkit.int_slider("log₂ n", log2_n, 2, 17),
        "blockwise": toolkit.checkbox("blockwise (flash) attention", blockwise),
    }
    box = toolkit.build_explorer(
        controls, cost_setting, CostDrawer(), title="What one attention layer costs: n = 2 ** slider tokens"
    )
    toolkit.link_heads(box, lambda: controls["d_model"].value, max_h=64)
    return box
