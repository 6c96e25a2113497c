"""mha_lib against an independent implementation: PyTorch's nn.MultiheadAttention.

The golden file holds PyTorch's answers (made by tests/golden/make_torch_golden.py
with torch in float64), so these tests run without PyTorch. A second test
compares live when torch can be imported and is skipped otherwise.
"""

import json
from pathlib import Path

import numpy as np
import pytest
from torch_live import layer_params, torch_layer

import mha_lib

GOLDEN = Path(__file__).parent / "golden" / "torch_mha.npz"
TOL = 1e-10  # float64 on both sides; the largest difference seen is about 1e-15

with np.load(GOLDEN, allow_pickle=False) as _f:
    CONFIGS = json.loads(str(_f["configs"]))


def load(name):
    with np.load(GOLDEN, allow_pickle=False) as f:
        prefix = f"{name}/"
        return {k[len(prefix) :]: f[k] for k in f.files if k.startswith(prefix)}


def params_of(g, h):
    return mha_lib.params_from_fused(
        g["in_proj_weight"], g.get("in_proj_bias"), g["out_proj_weight"], g.get("out_proj_bias"), h
    )


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_matches_pytorch_golden(name):
    batch, n, d_model, h, bias, kind = CONFIGS[name]
    g = load(name)
    params = params_of(g, h)
    assert params.has_bias == bias
    mask = None if kind == "none" else g["mask"]
    result = mha_lib.multi_head_attention(g["X"], params, mask=mask)
    expected_batch = () if batch is None else (batch,)
    assert result.output.shape == expected_batch + (n, d_model)
    assert result.weights.shape == expected_batch + (h, n, n)
    np.testing.assert_allclose(result.output, g["output"], rtol=0, atol=TOL)
    np.testing.assert_allclose(result.weights, g["weights"], rtol=0, atol=TOL)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_sdpa_matches_pytorch_functional(name):
    """F.scaled_dot_product_attention (whose bool mask already means True = take part) on the same Q, K, V."""
    batch, n, d_model, h, bias, kind = CONFIGS[name]
    g = load(name)
    r = mha_lib.multi_head_attention(g["X"], params_of(g, h))
    mask = None if kind == "none" else g["mask"][..., None, :, :]  # same mask for every head
    out, _ = mha_lib.scaled_dot_product_attention(r.Q, r.K, r.V, mask=mask)
    np.testing.assert_allclose(out, g["sdpa_output"], rtol=0, atol=TOL)


def test_fused_round_trip_is_exact():
    for name in CONFIGS:
        g = load(name)
        fused = mha_lib.params_to_fused(params_of(g, CONFIGS[name][3]))
        assert np.array_equal(fused[0], g["in_proj_weight"])
        assert np.array_equal(fused[2], g["out_proj_weight"])
        if "in_proj_bias" in g:
            assert np.array_equal(fused[1], g["in_proj_bias"])
            assert np.array_equal(fused[3], g["out_proj_bias"])
        else:
            assert fused[1] is None and fused[3] is None


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "n,d_model,h,bias,causal", [(5, 8, 2, True, False), (11, 48, 6, True, True), (3, 30, 5, False, True)]
)
def test_matches_pytorch_live(seed, n, d_model, h, bias, causal):
    torch, layer = torch_layer(d_model, h, bias, seed)
    X = np.random.default_rng(seed).standard_normal((2, n, d_model))
    mask = mha_lib.causal_mask(n) if causal else None
    torch_mask = None if mask is None else torch.from_numpy(~mask)  # PyTorch: True = blocked
    x = torch.from_numpy(X)
    with torch.no_grad():
        y, w = layer(x, x, x, attn_mask=torch_mask, average_attn_weights=False)
    result = mha_lib.multi_head_attention(X, layer_params(layer, h), mask=mask)
    np.testing.assert_allclose(result.output, y.numpy(), rtol=0, atol=TOL)
    np.testing.assert_allclose(result.weights, w.numpy(), rtol=0, atol=TOL)
