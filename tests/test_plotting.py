"""Still pictures of the hand-built examples (soft lookup, one head against two, Concat's blocks): drawn on the
axes or figure given, with the numbers of the example, and bad input refused in one line."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

import mha_lib
from mha_lib.plotting import plot_concat_blocks, plot_soft_lookup, plot_two_heads


def test_soft_lookup_draws_the_weights_of_the_chosen_word():
    look = mha_lib.soft_lookup_example()
    fig = Figure()
    axes = fig.subplots(1, 3)
    artists = plot_soft_lookup(axes, look, "it")
    assert artists
    heights = [p.get_height() for p in axes[1].patches]
    assert np.allclose(heights, look.weights[look.tokens.index("it")])
    assert "'cat'" in axes[2].get_title()  # "it" receives mostly "cat"


def test_soft_lookup_refuses_a_word_not_in_the_lookup():
    with pytest.raises(ValueError, match="token='dog'"):
        plot_soft_lookup(Figure().subplots(1, 3), mha_lib.soft_lookup_example(), "dog")
    with pytest.raises(ValueError, match="3 Axes"):
        plot_soft_lookup(Figure().subplots(1, 2), mha_lib.soft_lookup_example())


def test_two_heads_shows_each_head_output_and_the_distances_on_request():
    demo = mha_lib.two_heads_demo()
    fig = Figure()
    ax_w, ax_v = fig.subplots(1, 2)
    plot_two_heads(ax_w, ax_v, demo, distances=True)
    assert len(ax_w.patches) == 3 * len(demo.tokens)  # one bar per token for each of the 3 heads
    labels = [t.get_text() for t in ax_v.get_legend().get_texts()]
    assert any("from v(cat)" in label for label in labels)
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes"):
        plot_two_heads(fig, ax_v, demo)


def test_concat_blocks_number_the_columns_as_in_concat():
    heads = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4) - 10  # h=2 heads, n=3 tokens, d_v=4
    fig = Figure()
    images = plot_concat_blocks(fig, heads, ["a", "b", "c"], titles=["one", "two"])
    assert len(images) == 2
    assert images[1].get_extent()[:2] == [4.5, 8.5]  # head 2 holds Concat's columns 5-8
    assert images[0].get_clim() == images[1].get_clim() == (-13.0, 13.0)  # one shared, symmetric scale
    with pytest.raises(ValueError, match="titles"):
        plot_concat_blocks(Figure(), heads, ["a", "b", "c"], titles=["one"])


def test_concat_blocks_take_a_longer_palette_but_refuse_a_short_one():
    heads = np.ones((2, 3, 4))
    plot_concat_blocks(Figure(), heads, ["a", "b", "c"], colors=["red", "blue", "green"])
    with pytest.raises(ValueError, match="colors"):
        plot_concat_blocks(Figure(), heads, ["a", "b", "c"], colors=["red"])


def test_where_a_word_looks_on_a_slide_shows_8_keys_with_the_marked_ones_and_says_so():
    from mha_lib.viz.trained import draw_word_attention

    tokens = "[CLS] the animal didn ' t cross the street because it was too tired [SEP]".split()
    att = np.random.default_rng(0).dirichlet(np.ones(15), size=(6, 12, 15))
    fig = Figure(figsize=(11, 6.5))
    draw_word_attention(fig, att, tokens, tokens.index("it"), mark=(2, 8))
    slide = fig.for_slide(width=12.8, height=6.3, fontsize=24)
    shown = [t.get_text() for t in slide.axes[-4].get_xticklabels()]  # a panel of the bottom row
    assert len(shown) == 8 and {"animal", "street"} <= set(shown)
    rest = iter(tokens)
    assert all(t in rest for t in shown)  # in sentence order: each found after the one before
    assert "8 of the 15 keys" in slide.get_suptitle()
    slide.draw_without_rendering()
    texts = [
        t
        for t in slide.findobj(Text)
        if t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible())
    ]
    assert min(t.get_fontsize() for t in texts) >= 24


def _shown_sizes(fig):
    fig.draw_without_rendering()
    return [
        t.get_fontsize()
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible())
    ]


def test_an_explorer_still_figure_with_slide_pages_draws_itself_for_a_slide_at_one_text_size():
    from mha_lib.explorers.scores import ScalingDrawer, random_scores
    from mha_lib.viz import still_figure

    fig = still_figure(ScalingDrawer(), random_scores(64, trials=20))
    assert min(_shown_sizes(fig)) < 24  # the notebook's picture keeps its own sizes
    slide = fig.for_slide(width=12.8, height=6.3, fontsize=24)
    assert tuple(slide.get_size_inches()) == pytest.approx((12.8, 6.3))
    assert set(_shown_sizes(slide)) == {24}


def test_the_grouped_query_picture_on_slides_is_two_pages_diagram_and_cache_then_the_heads():
    from mha_lib.explorers.generation import make_gqa_explorer

    pages = make_gqa_explorer().figure.for_slide(width=12.8, height=6.3, fontsize=24)
    assert len(pages) == 2
    first = {t.get_text() for t in pages[0].findobj(Text)}
    assert "K,V 1" in first and "KV cache, GiB" in first and "64" in first
    titles = [ax.get_title() for ax in pages[1].axes if ax.get_title()]
    assert titles[:2] == ["head 1", "head 2"]
    assert all(min(_shown_sizes(p)) >= 24 for p in pages)


def test_the_gallery_on_a_slide_shows_the_first_tokens_of_each_head_and_says_how_many():
    from mha_lib.viz.trained import draw_gallery

    tokens = "[CLS] the cat sat on the mat and the dog sat on the rug . [SEP]".split()
    weights = np.random.default_rng(0).dirichlet(np.ones(16), size=16)
    entries = [(name, 1, 3, 0.9, weights) for name in ("previous", "next", "[CLS]", "same word")]
    fig = Figure(figsize=(11, 3))
    draw_gallery(fig, entries, tokens)
    slide = fig.for_slide(width=12.8, height=6.3, fontsize=24)
    assert [t.get_text() for t in slide.axes[0].get_xticklabels()] == tokens[:7]
    assert "first 7 of its 16 tokens" in slide.get_suptitle()
    assert min(_shown_sizes(slide)) >= 24


def test_a_trained_layer_on_a_slide_shows_its_4_clearest_heads_on_7_tokens_and_says_so():
    from mha_lib.explorers.trained import Trained, TrainedDrawer
    from mha_lib.viz import still_figure

    tokens = "[CLS] the animal didn ' t cross the street because it was too tired . [SEP]".split()
    weights = np.random.default_rng(0).dirichlet(np.ones(16), size=(12, 16))
    previous = np.zeros(12)
    previous[[2, 6]] = [1.0, 0.5]  # heads 3 and 7 are clear, the others are not
    res = Trained(tokens=tokens, layer=1, weights=weights, patterns={"previous": previous})
    slide = still_figure(TrainedDrawer(), res).for_slide(width=12.8, height=6.3, fontsize=24)
    titles = [ax.get_title() for ax in slide.axes if ax.get_title()]
    assert len(titles) == 4 and "head 3" in titles[0] and "previous" in titles[0]
    assert [t.get_text() for t in slide.axes[0].get_yticklabels()] == tokens[:7]
    caption = slide.get_suptitle().replace("\n", " ")
    assert "4 clearest of 12 heads" in caption and "first 7 of 16 tokens" in caption
    assert min(_shown_sizes(slide)) >= 24


def test_the_output_projection_picture_on_slides_is_the_heads_contributions_then_w_o_beside_their_sizes():
    from mha_lib.explorers.output import output_figure

    pages = output_figure(h=8).for_slide(width=12.8, height=6.3, fontsize=24)
    assert len(pages) == 2
    first = [ax.get_ylabel() for ax in pages[0].axes] + [t.get_text() for ax in pages[0].axes for t in ax.get_yticklabels()]
    assert "sum = output" in first
    titles = [ax.get_title() for ax in pages[1].axes if ax.get_title()]
    assert any(t.startswith("W^O") for t in titles) and any("size of what each head adds" in t for t in titles)
    assert all(min(_shown_sizes(p)) >= 24 for p in pages)


def test_the_lecture_picture_on_slides_is_the_heads_then_the_output_each_under_the_caption():
    from mha_lib.lecture.explorer import lecture_figure

    pages = lecture_figure(sentence="the cat saw the dog", weights="designed").for_slide(width=12.8, height=6.3, fontsize=24)
    assert len(pages) == 2
    heads = [ax.get_title() for ax in pages[0].axes if ax.get_title()]
    assert len(heads) == 4 and heads[0].startswith("head 1")
    assert any("MultiHead(X)" in ax.get_title() for ax in pages[1].axes)
    assert all("the cat saw the dog" in p.get_suptitle() for p in pages)
    assert all(min(_shown_sizes(p)) >= 24 for p in pages)


def test_the_generation_step_on_slides_is_the_heads_then_the_cache_and_the_rows_computed_without_a_key():
    from mha_lib.explorers.generation import make_generation_explorer

    pages = make_generation_explorer().figure.for_slide(width=12.8, height=6.3, fontsize=24)
    assert len(pages) == 2
    assert [ax.get_title() for ax in pages[0].axes if ax.get_title()][:2] == ["head 1", "head 2"]
    from matplotlib.legend import Legend

    keys = [t.get_text() for lg in pages[1].findobj(Legend) for t in lg.get_texts()]
    assert "not cached yet" in keys and "computed at this step" not in keys
    assert all(min(_shown_sizes(p)) >= 24 for p in pages)


def test_the_reordering_experiment_on_a_slide_is_one_page_of_its_three_panels_with_short_titles():
    from mha_lib.explorers.positions import permutation_figure

    slide = permutation_figure(positions=True).for_slide(width=12.8, height=6.3, fontsize=24)
    titles = [ax.get_title() for ax in slide.axes if ax.get_title()]
    assert titles == ["as written", "reordered", "moved"]
    assert "rows: query, columns: key" in slide.get_suptitle().replace("\n", " ")
    assert min(_shown_sizes(slide)) >= 24
