"""A live PyTorch layer for the tests that compare mha_lib with PyTorch when torch can be imported.

A plain module (not conftest.py), as tests/pictures.py, so that test files import it by name.
"""

import pytest

import mha_lib


def torch_layer(d_model, h, bias, seed):
    """(torch, layer): a seeded float64 ``nn.MultiheadAttention`` (batch first); the test is skipped without torch.

    PyTorch starts the biases at 0; they are drawn at random here, so that a test sees whether they are used.
    """
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: the golden-file tests cover this")
    torch.manual_seed(seed)
    layer = torch.nn.MultiheadAttention(d_model, h, bias=bias, batch_first=True, dtype=torch.float64)
    if bias:
        with torch.no_grad():
            layer.in_proj_bias.normal_()
            layer.out_proj.bias.normal_()
    return torch, layer


def layer_params(layer, h):
    """The layer's fused weights (and biases, None without them) as mha_lib's ``MHAParams``."""
    fused = [
        None if t is None else t.detach().numpy()
        for t in (layer.in_proj_weight, layer.in_proj_bias, layer.out_proj.weight, layer.out_proj.bias)
    ]
    return mha_lib.params_from_fused(*fused, h)
