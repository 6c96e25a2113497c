"""Generate tests/golden/torch_mha.npz: PyTorch's answers for several configurations.

PyTorch is an independent implementation of the same layer, so matching it
(to 1e-10 in float64) checks mha_lib. Run with a Python that has torch:

    python tests/golden/make_torch_golden.py

The test suite reads the stored file and needs no PyTorch. For each
configuration ``c`` the file holds ``c/X``, ``c/in_proj_weight``,
``c/in_proj_bias``, ``c/out_proj_weight``, ``c/out_proj_bias`` (biases only
when used), ``c/mask`` (mha_lib convention: True = may attend) and PyTorch's
``c/output`` and per-head ``c/weights``, plus ``c/sdpa_output`` from
``torch.nn.functional.scaled_dot_product_attention`` on the same per-head
Q, K, V. The configuration list is stored as ``configs`` (text).
"""

import json
import sys
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent

# name: (batch or None, n, d_model, h, bias, mask kind)
CONFIGS = {
    "n4_d8_h2": (None, 4, 8, 2, False, "none"),
    "n5_d12_h3_bias_causal": (None, 5, 12, 3, True, "causal"),
    "n6_d16_h4_bias_padding": (None, 6, 16, 4, True, "padding"),
    "n3_d6_h1_bias": (None, 3, 6, 1, True, "none"),
    "n7_d24_h8_batch2_bias_causal_padding": (2, 7, 24, 8, True, "causal+padding"),
    "n4_d64_h8": (None, 4, 64, 8, False, "none"),
    "n16_d96_h12_bias_causal": (None, 16, 96, 12, True, "causal"),
    "n9_d32_h4_batch3_padding": (3, 9, 32, 4, False, "padding"),
    "n1_d4_h2_bias": (None, 1, 4, 2, True, "none"),
}


def make_mask(kind, batch, n, rng):
    """mha_lib convention (True = may attend), shape (batch, n, n) or (n, n)."""
    b = batch or 1
    mask = np.ones((b, n, n), dtype=bool)
    if "causal" in kind:
        mask &= np.tril(np.ones((n, n), dtype=bool))
    if "padding" in kind:
        for i in range(b):
            n_pad = 1 + (i % max(1, n // 3))  # 1 or more PAD tokens at the end, never all
            mask[i, :, n - n_pad :] = False
    return mask if batch else mask[0]


def random_layer(d_model, h, bias):
    """``nn.MultiheadAttention`` in float64, batch first; its biases are zero at init: made random, so they are tested."""
    layer = torch.nn.MultiheadAttention(d_model, h, bias=bias, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        if bias:
            layer.in_proj_bias.normal_(0, 0.3)
            layer.out_proj.bias.normal_(0, 0.3)
    return layer


def store_layer(out, prefix, layer, y, w, squeeze):
    """Store the layer's fused parameters (biases only when it has them), its output y and per-head weights w."""
    out[f"{prefix}/in_proj_weight"] = layer.in_proj_weight.detach().numpy()
    out[f"{prefix}/out_proj_weight"] = layer.out_proj.weight.detach().numpy()
    if layer.in_proj_bias is not None:
        out[f"{prefix}/in_proj_bias"] = layer.in_proj_bias.detach().numpy()
        out[f"{prefix}/out_proj_bias"] = layer.out_proj.bias.detach().numpy()
    out[f"{prefix}/output"] = squeeze(y.numpy())
    out[f"{prefix}/weights"] = squeeze(w.numpy())


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    out = {"configs": np.array(json.dumps(CONFIGS)), "torch_version": np.array(torch.__version__)}
    for name, (batch, n, d_model, h, bias, kind) in CONFIGS.items():
        layer = random_layer(d_model, h, bias)
        shape = (batch, n, d_model) if batch else (1, n, d_model)
        X = rng.standard_normal(shape)
        mask = make_mask(kind, batch, n, rng)
        m3 = mask if batch else mask[None]
        # PyTorch's nn.MultiheadAttention: True = NOT allowed. Give it the inverted mask,
        # one copy per head: attn_mask of shape (batch*h, n, n).
        attn_mask = None
        if kind != "none":
            attn_mask = torch.from_numpy(~np.repeat(m3, h, axis=0))
        x = torch.from_numpy(X)
        with torch.no_grad():
            y, w = layer(x, x, x, attn_mask=attn_mask, need_weights=True, average_attn_weights=False)
            # F.scaled_dot_product_attention on the per-head Q, K, V (its bool mask: True = take part)
            E = d_model
            W_in, b_in = layer.in_proj_weight, layer.in_proj_bias
            q, k, v = (x @ W_in[i * E : (i + 1) * E].T + (b_in[i * E : (i + 1) * E] if bias else 0) for i in range(3))
            split = lambda t: t.view(t.shape[0], n, h, E // h).transpose(1, 2)  # (b, n, E) -> (b, h, n, d_k)
            sdpa_mask = None if kind == "none" else torch.from_numpy(m3[:, None])  # (b, 1, n, n)
            o = torch.nn.functional.scaled_dot_product_attention(split(q), split(k), split(v), attn_mask=sdpa_mask)
        squeeze = (lambda a: a) if batch else (lambda a: a[0])
        out[f"{name}/X"] = squeeze(X)
        out[f"{name}/mask"] = mask
        store_layer(out, name, layer, y, w, squeeze)
        out[f"{name}/sdpa_output"] = squeeze(o.numpy())
    path = HERE / "torch_mha.npz"
    np.savez_compressed(path, **out)
    print(f"wrote {path} ({path.stat().st_size} bytes) with torch {torch.__version__}", file=sys.stderr)


if __name__ == "__main__":
    main()
