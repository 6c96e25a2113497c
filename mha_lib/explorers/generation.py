"""Explorers of notebook 12: generation with a KV cache, and grouped-query heads (still figures:
:mod:`mha_lib.viz.generation`)."""

import functools
from dataclasses import dataclass

import numpy as np

from .._checks import whole_number
from ..attention import causal_mask, divisors, multi_head_attention
from ..data import embed_tokens, tokenize
from ..generation import PUBLISHED_CONFIGS, KVCache, decode_step, kv_cache_bytes
from ..params import init_params
from ..viz import TOKEN_COLORS
from ..viz.generation import GenerationFigure, GQAFigure, count, is_light, step_counts
from . import chart, toolkit
from .widget import frame, grid, heads_frame

GENERATION_SENTENCE = "humpty dumpty sat on a wall"


@dataclass(frozen=True)
class GenerationState:
    """What :func:`generation_state` computed for one step (t = number of tokens so far)."""

    tokens: tuple
    t: int
    use_cache: bool
    weights: np.ndarray  # (h, n, n): row i = the weights decode_step gave token i; rows >= t are zero
    shown: np.ndarray  # (n, n) bool: cells computed so far (causal, rows < t)
    keys: np.ndarray  # (n, d_k): head 1's cached keys, rows >= t zero
    key_limits: tuple
    cache_rows: int
    counts: dict


def generation_state(t=1, use_cache=True, sentence=GENERATION_SENTENCE, d_model=32, h=4):
    """Feed the first t tokens of ``sentence`` to :func:`mha_lib.decode_step` one at a time; the
    :class:`GenerationState` also counts what step t computes with the cache and without it (the whole prefix)."""
    tokens = tuple(tokenize(sentence))
    n = len(tokens)
    if not 1 <= t <= n:
        raise ValueError(f"step t={t} must be between 1 and the number of tokens, {n}")
    X = embed_tokens(list(tokens), d_model)  # (n, d_model)
    params = init_params(d_model, h, seed=0)
    cache = KVCache(params)
    weights = np.zeros((h, n, n))
    for i in range(t):  # one new query row a step; the cache grows by one key and one value row
        weights[:, i, : i + 1] = decode_step(X[i], params, cache).weights  # (h, i+1)
    keys = np.zeros((n, params.d_k))
    keys[:t] = cache.K[0]  # head 1's cached keys, (t, d_k)
    m = float(np.abs(X @ params.W_k[0]).max())  # (n, d_model) @ (d_model, d_k): one colour scale for every step
    counts = {
        "cache": {"query rows": 1, "key/value rows": 1, "scores": t},
        "recompute": {"query rows": t, "key/value rows": t, "scores": t * t},
    }
    shown = causal_mask(n) & (np.arange(n) < t)[:, None]
    return GenerationState(tokens, t, bool(use_cache), weights, shown, keys, (-m, m), len(cache), counts)


class _GenerationDrawer(GenerationFigure):
    """The generation explorer's picture (the still figure: :class:`~mha_lib.viz.generation.GenerationFigure`)."""

    parts = {"heads": "picture", "keys": "picture", "step": "chart"}  # weights; cached keys; what the step computes
    rows = (("heads",), ("keys", "step"))
    widths = {"keys": 1, "step": 1.4}
    slide_pages = ((("heads",),), (("keys", "step"),))  # on slides: the heads' weights, then the step and its cache
    slide_widths = {"keys": 1, "step": 1.8}

    def frames(self, res, slide=False):
        """Every head's weights so far, head 1's cached keys, which rows this step computes or reads from the cache."""
        n = len(res.tokens)
        t, first = res.t, res.t - 1 if res.use_cache else 0  # the rows this step computes
        cached = np.broadcast_to((np.arange(n) < t)[:, None], res.keys.shape)
        options = dict(
            signed=True, numbers=False, cbar=None, titles=[""], axes=(None, "d_k"), mask_label="not cached yet", cap=22
        )
        keys = grid("keys", res.keys, res.tokens, None, res.key_limits, cached, **options)
        keys = frame({"group_titles": {"keys": "head 1's cached keys K (a row per token)"}}, keys)
        caption = {"caption": f"step {t} of {n}: the new token is '{res.tokens[t - 1]}' (below: what this step computes)"}
        marks = [chart.text(-0.1, n - 1 - i + 0.5, tok, anchor="end") for i, tok in enumerate(res.tokens)]
        for c, name in enumerate(("query", "key", "value")):
            marks.append(chart.text(c + 0.5, n + 0.3, name, anchor="middle"))
            for i in range(n):
                if i >= t or (name == "query" and i < first):  # not yet, or not needed again
                    state = dict(fill="#FFFFFF", stroke="#BBBBBB", label="")
                elif i >= first:
                    state = dict(fill="#D55E00", stroke="#000000", label="new", color="#FFFFFF", bold=True)
                else:
                    state = dict(fill="#DDDDDD", stroke="#777777", label="cache")
                marks.append(chart.box(c + 0.06, n - 1 - i + 0.08, 0.88, 0.84, **state))
        legend = (
            [] if slide else [("computed at this step", "#D55E00", "area"), ("read from the KV cache", "#DDDDDD", "area")]
        )
        step = chart.view((-1.6, 3.05), (-0.05, n + 0.7), marks, title=f"rows step {t} computes, per head")
        return {
            "heads": heads_frame(
                res.weights, res.tokens, caption, res.shown, cap=48, mask_label="masked / not computed", fit_height=0.5
            ),
            "keys": keys,
            "step": chart.frame(
                (chart.panel("step", height=28 * n + 40, max_width=440, legend=legend, axes=False), step),
                footer=step_counts(res),
            ),
        }

    # on slides the step's chart has no key (at 24 pt it took the height of its rows)
    slide_frames = functools.partialmethod(frames, slide=True)


def make_generation_explorer(sentence=GENERATION_SENTENCE, d_model=32, h=4, t=None, use_cache=True):
    """A slider ``t`` (tokens so far) that generates ``sentence`` through :func:`mha_lib.decode_step`, ``use_cache``:
    every head's weights so far, head 1's cached keys, what the step computes (one query row, or all without the
    cache)."""
    tokens = tuple(tokenize(sentence))
    if not 2 <= len(tokens) <= 10:
        raise ValueError(f"make_generation_explorer: give a sentence of 2 to 10 words, got {len(tokens)}")
    h = whole_number(h, "h", "make_generation_explorer", minimum=1)
    if h > 16:  # the heads' panels: 4 to a row, at most 4 rows in the picture's height
        raise ValueError(f"make_generation_explorer: h={h} heads do not fit the picture (4 rows of 4); use h <= 16")
    t = min(3, len(tokens)) if t is None else whole_number(t, "t", "make_generation_explorer", 1, len(tokens))
    controls = {
        "t": toolkit.int_slider("tokens so far", t, 1, len(tokens)),
        "use_cache": toolkit.checkbox("use the KV cache", use_cache),
    }
    compute = functools.partial(generation_state, sentence=sentence, d_model=d_model, h=h)
    return toolkit.build_explorer(controls, compute, _GenerationDrawer())


# --------------------------------------------------------------------------- grouped-query heads


@dataclass(frozen=True)
class GQAState:
    """What :func:`gqa_state` computed: the toy layer's heads and a published model's cache."""

    tokens: tuple
    h: int
    h_kv: int
    weights: np.ndarray  # (h, n, n)
    kv_of: tuple  # kv head of each query head
    model: str
    n_tokens: int
    cache_gib: dict  # label -> GiB for this model at n_tokens (float16)


def gqa_state(h_kv=2, model="Llama 2 70B", log2_tokens=12, h=8, d_model=64):
    """A toy layer with h query heads sharing h_kv key/value heads on the running example's words,
    and the float16 KV cache of ``model`` at 2**log2_tokens tokens, grouped as published and not."""
    tokens = ("humpty", "dumpty", "sat", "on")
    if model not in PUBLISHED_CONFIGS:
        raise ValueError(f"model {model!r} unknown; choose one of {list(PUBLISHED_CONFIGS)}")
    X = embed_tokens(list(tokens), d_model)  # (4, d_model)
    params = init_params(d_model, h, h_kv=h_kv, seed=1)  # refuses an h_kv that does not divide h
    weights = multi_head_attention(X, params, mask=causal_mask(len(tokens))).weights  # (h, 4, 4)
    cfg, n_tokens = PUBLISHED_CONFIGS[model], 2**log2_tokens
    kinds = {
        f"one per query\nhead (h_kv = {cfg.h})": cfg.h,
        f"as published\n(h_kv = {cfg.h_kv})": cfg.h_kv,
        "multi-query\n(h_kv = 1)": 1,
    }
    gib = {label: kv_cache_bytes(cfg.n_layers, k, cfg.d_k, n_tokens, 2) / 2**30 for label, k in kinds.items()}
    kv_of = tuple(i // (h // h_kv) for i in range(h))
    return GQAState(tokens, h, h_kv, weights, kv_of, model, n_tokens, gib)


class _GQADrawer(GQAFigure):
    """The grouped-query explorer's picture (its still figure: :class:`mha_lib.viz.generation.GQAFigure`)."""

    parts = {"sharing": "chart", "cache": "chart", "weights": "picture"}
    rows = (("sharing",), ("weights", "cache"))
    widths = {"weights": 2.4, "cache": 1}
    slide_pages = ((("sharing", "cache"),), (("weights",),))  # on slides: who shares and what it saves, then the heads
    slide_widths = {"sharing": 1.5, "cache": 1}

    def frames(self, res, slide=False):
        """Which query heads share which key/value head, the model's cache (charts), every head's weights."""
        h, group, wide = res.h, res.h // res.h_kv, 0.4 if slide else 0.0
        marks = []
        for j in range(res.h_kv):
            colour = TOKEN_COLORS[j % len(TOKEN_COLORS)]
            x_kv = j * group + (group - 1) / 2  # under the middle of its group
            for i in range(j * group, (j + 1) * group):
                marks.append(chart.line([(i, 0.9), (x_kv, 0.3)], colour, width=1.5))
                marks.append(chart.box(i - 0.4, 0.9, 0.8, 0.3, fill="#FFFFFF", stroke=colour, width=2, label=f"Q {i + 1}"))
            text = "#000000" if is_light(colour) else "#FFFFFF"
            kv = dict(fill=colour, opacity=0.85, label=f"K,V {j + 1}", color=text, bold=True)
            marks.append(chart.box(x_kv - 0.4 - wide, 0.0, 0.8 + 2 * wide, 0.3, **kv))
        title = (
            f"h = {h} query heads (top) share h_kv = {count(res.h_kv, 'key/value head')} (bottom, what the cache "
            f"stores):\n{count(group, 'query head')} per key/value head"
        )
        sharing = chart.view((-0.5, h - 0.5), (-0.05, 1.25), marks, title=title)
        gib = list(res.cache_gib.values())
        names = [label.split("h_kv = ")[-1].rstrip(")") if slide else label for label in res.cache_gib]
        cache = chart.view(
            (-0.6, 2.6),
            (0, max(gib) * 1.2),
            [chart.bars(gib, ["#999999", "#0072B2", "#009E73"], texts=[f"{v:,.2f}" for v in gib])],
            title=f"{res.model}, {res.n_tokens:,} tokens"
            if slide
            else f"{res.model} at {res.n_tokens:,} tokens\n(published sizes, not the slider's h_kv)",
            xticks=list(enumerate(names)),
        )
        y, x = ("KV cache, GiB", "h_kv (key/value heads)") if slide else ("KV cache, GiB (float16, one sequence)", None)
        bars = chart.panel("cache", height=300, ylabel=y, xlabel=x)
        titles = [f"head {i + 1}" + ("" if slide else f" (K,V {j + 1})") for i, j in enumerate(res.kv_of)]
        texts = {}
        if slide:  # the sharing said once, above the heads
            shared = "; ".join(f"heads {j * group + 1}-{(j + 1) * group} share K,V {j + 1}" for j in range(res.h_kv))
            shared = shared if res.h_kv <= 2 and group > 1 else f"{count(group, 'query head')} per key/value head"
            texts = {"group_titles": {"weights": shared}}
        mask = causal_mask(len(res.tokens))
        weights = heads_frame(res.weights, res.tokens, texts, mask, titles=titles, cap=40)
        return {
            "sharing": chart.frame((chart.panel("sharing", height=150, max_width=1000, axes=False), sharing)),
            "cache": chart.frame((bars, cache)),
            "weights": weights,
        }

    # on slides (24-pt text): the bars named by h_kv alone, title and axis one line each, wider key/value boxes, the
    # heads titled "head i" and the sharing said once above them
    slide_frames = functools.partialmethod(frames, slide=True)


def make_gqa_explorer(h_kv=2, model="Llama 2 70B", log2_tokens=12, h=8):
    """Sliders over h_kv (divisors of h), a published model and a context length: which query heads share which
    key/value head, every head's weights, and the model's KV cache as published, with h_kv = h and with 1."""
    log2_tokens = whole_number(log2_tokens, "log2_tokens", "make_gqa_explorer", minimum=8, maximum=17)  # the slider
    controls = {
        "h_kv": toolkit.selection_slider("h_kv (key/value heads)", divisors(h), h_kv),
        "model": toolkit.dropdown("model", list(PUBLISHED_CONFIGS), model),
        "log2_tokens": toolkit.int_slider("context = 2^", log2_tokens, 8, 17),
    }
    return toolkit.build_explorer(controls, functools.partial(gqa_state, h=h), _GQADrawer())
