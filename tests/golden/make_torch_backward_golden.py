"""Generate tests/golden/torch_mha_backward.npz: PyTorch autograd's gradients of Multi-Head Attention.

PyTorch's autograd differentiates its own layer, independently of mha_lib's
hand-written backward pass (mha_lib/backward.py); matching it to 1e-10 in
float64 checks that backward pass. Run with a Python that has torch:

    python tests/golden/make_torch_backward_golden.py

The test suite reads the stored file and needs no PyTorch.

Two kinds of configuration:

- ``nn.MultiheadAttention`` (the fused layout): ``c/in_proj_weight``,
  ``c/out_proj_weight`` (and ``c/in_proj_bias``, ``c/out_proj_bias``), ``c/X``,
  ``c/mask`` (mha_lib convention: True = may attend), ``c/d_output``, and the
  gradients of ``sum(d_output * output)``: ``c/d_X``, ``c/d_in_proj_weight``,
  ``c/d_out_proj_weight`` (and the biases').
- grouped-query (``h_kv < h``, which ``nn.MultiheadAttention`` has no form for):
  per-head weights in mha_lib's layout ``c/W_q`` (h, d_model, d_k), ``c/W_k``,
  ``c/W_v`` (h_kv, d_model, d), ``c/W_o`` (h*d_v, d_model), the layer computed
  with ``torch.nn.functional.scaled_dot_product_attention(..., enable_gqa=True)``,
  and the gradients ``c/d_X``, ``c/d_W_q``, ``c/d_W_k``, ``c/d_W_v``, ``c/d_W_o``.

The configuration list is stored as ``configs`` (text).
"""

import json
import sys
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent

# name: (kind, batch or None, n, d_model, h, h_kv, bias, mask kind)
CONFIGS = {
    "n4_d8_h2": ("fused", None, 4, 8, 2, 2, False, "none"),
    "n5_d12_h3_bias_causal": ("fused", None, 5, 12, 3, 3, True, "causal"),
    "n6_d16_h4_bias_padding": ("fused", None, 6, 16, 4, 4, True, "padding"),
    "n7_d24_h8_batch2_bias_causal_padding": ("fused", 2, 7, 24, 8, 8, True, "causal+padding"),
    "n3_d6_h1": ("fused", None, 3, 6, 1, 1, False, "none"),
    "gqa_n6_d16_h4_hkv2_causal": ("gqa", None, 6, 16, 4, 2, False, "causal"),
    "mqa_n5_d12_h6_hkv1_batch3": ("gqa", 3, 5, 12, 6, 1, False, "none"),
}


def make_mask(kind, batch, n):
    """mha_lib convention (True = may attend), shape (batch, n, n) or (n, n); never a fully masked row."""
    b = batch or 1
    mask = np.ones((b, n, n), dtype=bool)
    if "causal" in kind:
        mask &= np.tril(np.ones((n, n), dtype=bool))
    if "padding" in kind:
        for i in range(b):
            n_pad = 1 + (i % max(1, n // 3))  # 1 or more PAD keys at the end
            mask[i, :, n - n_pad :] = False
    return mask if batch else mask[0]


def fused_config(out, name, batch, n, d_model, h, bias, kind, rng):
    layer = torch.nn.MultiheadAttention(d_model, h, bias=bias, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        if bias:  # zero at init: made random, so that their gradients and effects are tested
            layer.in_proj_bias.normal_(0, 0.3)
            layer.out_proj.bias.normal_(0, 0.3)
    shape = (batch or 1, n, d_model)
    X = rng.standard_normal(shape)
    D = rng.standard_normal(shape)
    mask = make_mask(kind, batch, n)
    m3 = mask if batch else mask[None]
    # nn.MultiheadAttention's boolean attn_mask: True = NOT allowed; one copy per head, (batch*h, n, n)
    attn_mask = None if kind == "none" else torch.from_numpy(~np.repeat(m3, h, axis=0))
    x = torch.from_numpy(X).requires_grad_(True)
    y, _ = layer(x, x, x, attn_mask=attn_mask, need_weights=False)
    (y * torch.from_numpy(D)).sum().backward()
    squeeze = (lambda a: a) if batch else (lambda a: a[0])
    out[f"{name}/X"], out[f"{name}/d_output"], out[f"{name}/mask"] = squeeze(X), squeeze(D), mask
    out[f"{name}/d_X"] = squeeze(x.grad.numpy())
    out[f"{name}/in_proj_weight"] = layer.in_proj_weight.detach().numpy()
    out[f"{name}/out_proj_weight"] = layer.out_proj.weight.detach().numpy()
    out[f"{name}/d_in_proj_weight"] = layer.in_proj_weight.grad.numpy()
    out[f"{name}/d_out_proj_weight"] = layer.out_proj.weight.grad.numpy()
    if bias:
        out[f"{name}/in_proj_bias"] = layer.in_proj_bias.detach().numpy()
        out[f"{name}/out_proj_bias"] = layer.out_proj.bias.detach().numpy()
        out[f"{name}/d_in_proj_bias"] = layer.in_proj_bias.grad.numpy()
        out[f"{name}/d_out_proj_bias"] = layer.out_proj.bias.grad.numpy()


def gqa_config(out, name, batch, n, d_model, h, h_kv, kind, rng):
    d_k = d_model // h
    weights = {
        "W_q": rng.normal(0, d_model**-0.5, (h, d_model, d_k)),
        "W_k": rng.normal(0, d_model**-0.5, (h_kv, d_model, d_k)),
        "W_v": rng.normal(0, d_model**-0.5, (h_kv, d_model, d_k)),
        "W_o": rng.normal(0, (h * d_k) ** -0.5, (h * d_k, d_model)),
    }
    shape = (batch or 1, n, d_model)
    X = rng.standard_normal(shape)
    D = rng.standard_normal(shape)
    mask = make_mask(kind, batch, n)
    m3 = mask if batch else mask[None]
    t = {k: torch.from_numpy(v).requires_grad_(True) for k, v in weights.items()}
    x = torch.from_numpy(X).requires_grad_(True)
    q = torch.einsum("bnm,hmk->bhnk", x, t["W_q"])  # (b, h, n, d_k)
    k = torch.einsum("bnm,hmk->bhnk", x, t["W_k"])  # (b, h_kv, n, d_k)
    v = torch.einsum("bnm,hmk->bhnk", x, t["W_v"])  # (b, h_kv, n, d_v)
    sdpa_mask = None if kind == "none" else torch.from_numpy(m3[:, None])  # its bool mask: True = take part
    o = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=sdpa_mask, enable_gqa=True)
    concat = o.transpose(1, 2).reshape(shape[0], n, h * d_k)  # (b, h, n, d_v) -> (b, n, h*d_v)
    y = concat @ t["W_o"]
    (y * torch.from_numpy(D)).sum().backward()
    squeeze = (lambda a: a) if batch else (lambda a: a[0])
    out[f"{name}/X"], out[f"{name}/d_output"], out[f"{name}/mask"] = squeeze(X), squeeze(D), mask
    out[f"{name}/d_X"] = squeeze(x.grad.numpy())
    for key, tensor in t.items():
        out[f"{name}/{key}"] = weights[key]
        out[f"{name}/d_{key}"] = tensor.grad.numpy()


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(2)
    out = {"configs": np.array(json.dumps(CONFIGS)), "torch_version": np.array(torch.__version__)}
    for name, (kind, batch, n, d_model, h, h_kv, bias, mask_kind) in CONFIGS.items():
        if kind == "fused":
            fused_config(out, name, batch, n, d_model, h, bias, mask_kind, rng)
        else:
            gqa_config(out, name, batch, n, d_model, h, h_kv, mask_kind, rng)
    path = HERE / "torch_mha_backward.npz"
    np.savez_compressed(path, **out)
    print(f"wrote {path} ({path.stat().st_size} bytes) with torch {torch.__version__}", file=sys.stderr)


if __name__ == "__main__":
    main()
