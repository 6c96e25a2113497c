"""Rotary position embeddings against Hugging Face transformers' Llama ``apply_rotary_pos_emb``,
and the property that makes them useful: a score depends on positions only through m - n."""

import doctest

import numpy as np
import pytest
from today_golden import CONFIGS, load

import mha_lib
from mha_lib import rope, rotary_embedding
from mha_lib.rope import rope_angles

TOL = 1e-12  # float64 angles on both sides
ROPE = CONFIGS["rope"]


@pytest.mark.parametrize("name", sorted(ROPE))
def test_matches_transformers_llama_golden(name):
    g = load(f"rope/{name}")
    base = float(g["base"])
    q = rotary_embedding(g["q"], g["positions"], base=base)
    k = rotary_embedding(g["k"], g["positions"], base=base)
    np.testing.assert_allclose(q, g["q_hf"], rtol=0, atol=TOL)
    np.testing.assert_allclose(k, g["k_hf"], rtol=0, atol=TOL)
    # LlamaRotaryEmbedding computes its angles in float32: equal to float32 rounding of angle p * theta
    atol = 1e-6 * max(1.0, float(g["positions"].max())) * np.abs(g["q"]).max()
    np.testing.assert_allclose(q, g["q_hf_module"], rtol=0, atol=atol)


@pytest.mark.parametrize("d", [2, 8, 64])
def test_score_depends_only_on_relative_position(d):
    rng = np.random.default_rng(d)
    q, k = rng.normal(size=d), rng.normal(size=d)

    def score(m, n):
        return rotary_embedding(q[None], [m])[0] @ rotary_embedding(k[None], [n])[0]

    for offset in (-3, 0, 5):
        values = [score(m, m - offset) for m in (offset + 0, 7, 100, 2000)]
        np.testing.assert_allclose(values, values[0], rtol=0, atol=1e-11)
    assert abs(score(5, 2) - score(5, 3)) > 1e-6  # a different distance gives a different score


def test_rotation_keeps_lengths_and_position_zero_is_identity():
    x = np.random.default_rng(0).normal(size=(2, 5, 16))
    r = rotary_embedding(x, np.arange(5))
    np.testing.assert_allclose(np.linalg.norm(r, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-13)
    np.testing.assert_array_equal(r[:, 0], x[:, 0])
    half, inter = x[..., :8], x[..., 8:]  # pair i = columns i and i + d/2: each pair keeps its length
    np.testing.assert_allclose(r[..., :8] ** 2 + r[..., 8:] ** 2, half**2 + inter**2, rtol=1e-12)


def test_interleaved_pairing_is_a_column_permutation_of_rotate_half():
    x = np.random.default_rng(1).normal(size=(3, 6, 8))
    pos = np.arange(6) + 10
    perm = np.r_[0:8:2, 1:8:2]
    converted = rotary_embedding(x[..., perm], pos)[..., np.argsort(perm)]
    np.testing.assert_allclose(converted, rotary_embedding(x, pos, pairing="interleaved"), rtol=0, atol=1e-15)
    assert not np.allclose(rotary_embedding(x, pos), rotary_embedding(x, pos, pairing="interleaved"))


def test_rope_angles():
    a = mha_lib.rope_angles(np.arange(3), 4, base=100.0)
    np.testing.assert_allclose(a, [[0, 0], [1, 0.1], [2, 0.2]], rtol=1e-15)


@pytest.mark.parametrize(
    "args,kwargs,match",
    [
        ((np.ones((3, 5)), np.arange(3)), {}, "d=5, which is odd"),
        ((np.ones((3, 4)), np.arange(4)), {}, r"positions must have shape \(n,\) = \(3,\)"),
        ((np.ones((3, 4)), np.arange(3)), {"base": 1.0}, "base=1.0"),
        ((np.ones((3, 4)), np.arange(3)), {"base": np.inf}, "base=inf must be a finite number"),
        ((np.ones((3, 4)), np.arange(3)), {"pairing": "pairs"}, "pairing='pairs'"),
        ((np.ones(4), np.arange(1)), {}, "x must have at least 2 dimensions"),
    ],
)
def test_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        rotary_embedding(*args, **kwargs)


def test_docstring_examples():
    result = doctest.testmod(rope, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_matches_transformers_live():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: the golden-file tests cover this")
    llama = pytest.importorskip("transformers.models.llama.modeling_llama", reason="transformers is not installed")
    rng = np.random.default_rng(4)
    q = rng.normal(size=(1, 2, 9, 32))
    pos = np.arange(9) + 3
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, 32, 2, dtype=torch.float64) / 32))
    emb = torch.cat([torch.from_numpy(pos).double()[:, None] * inv_freq] * 2, dim=-1)[None]
    q_hf, _ = llama.apply_rotary_pos_emb(torch.from_numpy(q), torch.from_numpy(q), emb.cos(), emb.sin())
    np.testing.assert_allclose(rotary_embedding(q, pos), q_hf.numpy(), rtol=0, atol=TOL)


@pytest.mark.parametrize("base", [10**400, -(10**400)], ids=["10**400", "-10**400"])
def test_rope_angles_refuses_a_base_too_large_for_a_float(base):
    with pytest.raises(ValueError, match="finite number larger than 1"):
        rope_angles([0, 1], 4, base=base)


def test_rope_angles_refuses_a_size_it_cannot_allocate():
    with pytest.raises(ValueError, match=r"d=100000000000000000000.*too large"):
        rope_angles([0, 1], 10**20)


@pytest.mark.parametrize("x", [np.full((2, 4), 1.5e308), np.full((2, 4), 6e4, np.float16)], ids=["float64", "float16"])
def test_rotary_embedding_reports_an_overflow(x):
    with pytest.raises(ValueError, match="overflow"):
        mha_lib.rotary_embedding(x, np.arange(2))
