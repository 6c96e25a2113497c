"""Generate tests/golden/torch_today.npz: PyTorch's and Hugging Face's answers for notebook 12's features.

Independent implementations of cross-attention, grouped-query attention,
dropout and rotary position embeddings, so that matching them checks mha_lib.
Run with a Python that has torch and transformers (not the project's venv):

    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch==2.13.0 numpy transformers
    /tmp/torchenv/bin/python tests/golden/make_today_golden.py

The tests read the stored file and need neither library. Contents, by prefix:

- ``cross/<name>/``: ``torch.nn.MultiheadAttention(query=X, key=memory, value=memory)`` in float64:
  ``X`` (.., n, d), ``memory`` (.., m, d), the fused parameters, ``mask`` (mha_lib convention, True =
  may attend, or absent), PyTorch's ``output`` and per-head ``weights`` (.., h, n, m).
- ``gqa/<name>/``: ``F.scaled_dot_product_attention(q, k, v, enable_gqa=True)`` on per-head projections:
  ``X``, per-head ``W_q`` (h, d, d_k), ``W_k``/``W_v`` (h_kv, d, d_k), ``W_o``, ``heads`` (.., h, n, d_k)
  and ``output`` = concat(heads) @ W_o.
- ``rope/<name>/``: transformers' Llama ``apply_rotary_pos_emb`` on random ``q`` (b, h, n, d) and ``k``
  at ``positions``: ``q_hf``/``k_hf`` with cos/sin built in float64 from the Llama formula, and
  ``q_hf_module`` with cos/sin from ``LlamaRotaryEmbedding`` itself (it computes its angles in float32).
- ``dropout/``: ``weights`` and ``F.dropout(weights, p, training=True)`` for several p.

The configuration lists are stored as JSON text in ``configs``.
"""

import json
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
import transformers
from make_torch_golden import random_layer, store_layer  # the script beside this one (its folder is on sys.path)
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

HERE = Path(__file__).resolve().parent

# name: (batch or None, n, m, d_model, h, bias, mask kind)
CROSS = {
    "n3_m5_d8_h2": (None, 3, 5, 8, 2, False, "none"),
    "n4_m6_d12_h3_bias": (None, 4, 6, 12, 3, True, "none"),
    "n5_m3_d16_h4_bias_padding": (None, 5, 3, 16, 4, True, "padding"),
    "n4_m7_d24_h8_batch2_bias_padding": (2, 4, 7, 24, 8, True, "padding"),
    "n6_m6_d16_h2_batch3_random": (3, 6, 6, 16, 2, False, "random"),
    "n1_m9_d32_h4_bias": (None, 1, 9, 32, 4, True, "none"),
}

# name: (batch, n, d_model, h, h_kv, causal)
GQA = {
    f"b{b}_n{n}_h8_hkv{hkv}_{'causal' if c else 'full'}": (b, n, 32, 8, hkv, c)
    for (b, n) in ((1, 5), (2, 9))
    for hkv in (1, 2, 4, 8)
    for c in (False, True)
}

# name: (batch, h, n, d, base, positions kind)
ROPE = {
    "d8_base1e4": (1, 2, 6, 8, 10000.0, "arange"),
    "d64_base1e4": (2, 4, 16, 64, 10000.0, "arange"),
    "d128_base5e5_llama3": (1, 2, 8, 128, 500000.0, "arange"),
    "d16_offset": (1, 1, 5, 16, 10000.0, "offset"),
    "d32_scattered": (1, 3, 7, 32, 10000.0, "scattered"),
}

DROPOUT_P = (0.1, 0.5, 0.9)


def cross_mask(kind, batch, n, m, rng):
    b = batch or 1
    mask = np.ones((b, n, m), dtype=bool)
    if kind == "padding":  # the last memory tokens are padding, for every query
        for i in range(b):
            mask[i, :, m - 1 - i :] = False
    elif kind == "random":
        mask = rng.random((b, n, m)) < 0.7
        mask[:, :, 0] = True  # never a fully masked row
    return mask if batch else mask[0]


def make_cross(out, rng):
    for name, (batch, n, m, d_model, h, bias, kind) in CROSS.items():
        layer = random_layer(d_model, h, bias)
        b = batch or 1
        X = rng.standard_normal((b, n, d_model))
        memory = rng.standard_normal((b, m, d_model))
        attn_mask = None
        if kind != "none":
            mask = cross_mask(kind, batch, n, m, rng)
            m3 = mask if batch else mask[None]
            attn_mask = torch.from_numpy(~np.repeat(m3, h, axis=0))  # PyTorch: True = blocked, (b*h, n, m)
            out[f"cross/{name}/mask"] = mask
        with torch.no_grad():
            y, w = layer(
                torch.from_numpy(X),
                torch.from_numpy(memory),
                torch.from_numpy(memory),
                attn_mask=attn_mask,
                need_weights=True,
                average_attn_weights=False,
            )
        sq = (lambda a: a) if batch else (lambda a: a[0])
        out[f"cross/{name}/X"] = sq(X)
        out[f"cross/{name}/memory"] = sq(memory)
        store_layer(out, f"cross/{name}", layer, y, w, sq)


def make_gqa(out, rng):
    for name, (b, n, d_model, h, h_kv, causal) in GQA.items():
        d_k = d_model // h
        X = rng.standard_normal((b, n, d_model))
        W_q = rng.normal(0, d_model**-0.5, (h, d_model, d_k))
        W_k = rng.normal(0, d_model**-0.5, (h_kv, d_model, d_k))
        W_v = rng.normal(0, d_model**-0.5, (h_kv, d_model, d_k))
        W_o = rng.normal(0, d_model**-0.5, (h * d_k, d_model))
        x = torch.from_numpy(X)[:, None]  # (b, 1, n, d)
        q = x @ torch.from_numpy(W_q)  # (b, h, n, d_k)
        k = x @ torch.from_numpy(W_k)  # (b, h_kv, n, d_k)
        v = x @ torch.from_numpy(W_v)
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)  # (b, h, n, d_k)
        concat = heads.transpose(1, 2).reshape(b, n, h * d_k)
        output = concat @ torch.from_numpy(W_o)
        for key, value in dict(X=X, W_q=W_q, W_k=W_k, W_v=W_v, W_o=W_o, heads=heads.numpy(), output=output.numpy()).items():
            out[f"gqa/{name}/{key}"] = value


def make_rope(out, rng):
    for name, (b, h, n, d, base, kind) in ROPE.items():
        positions = {
            "arange": np.arange(n),
            "offset": np.arange(n) + 100,
            "scattered": np.sort(rng.choice(4096, n, replace=False)),
        }[kind]
        q = rng.standard_normal((b, h, n, d))
        k = rng.standard_normal((b, h, n, d))
        config = LlamaConfig(
            hidden_size=d * h, num_attention_heads=h, head_dim=d, rope_theta=base, max_position_embeddings=8192
        )
        # cos/sin in float64 from the formula of LlamaRotaryEmbedding.compute_default_rope_parameters / forward
        inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
        freqs = torch.from_numpy(positions).to(torch.float64)[None, :, None] * inv_freq  # (1, n, d/2)
        emb = torch.cat((freqs, freqs), dim=-1)  # (1, n, d)
        qt, kt = torch.from_numpy(q), torch.from_numpy(k)
        q_hf, k_hf = apply_rotary_pos_emb(qt, kt, emb.cos(), emb.sin())
        # the module itself (float32 angles, cast to float64 at the end)
        rotary = LlamaRotaryEmbedding(config=config)
        cos32, sin32 = rotary(qt, torch.from_numpy(positions)[None])
        q_mod, _ = apply_rotary_pos_emb(qt, kt, cos32, sin32)
        for key, value in dict(
            q=q,
            k=k,
            positions=positions,
            q_hf=q_hf.numpy(),
            k_hf=k_hf.numpy(),
            q_hf_module=q_mod.numpy(),
            base=np.array(base),
        ).items():
            out[f"rope/{name}/{key}"] = value


def make_dropout(out, rng):
    torch.manual_seed(0)
    weights = torch.softmax(torch.from_numpy(rng.standard_normal((4, 16, 16))), dim=-1)  # positive entries
    out["dropout/weights"] = weights.numpy()
    for p in DROPOUT_P:
        out[f"dropout/p{p}"] = F.dropout(weights, p=p, training=True).numpy()


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(11)
    configs = {"cross": CROSS, "gqa": GQA, "rope": ROPE, "dropout": DROPOUT_P}
    out = {
        "configs": np.array(json.dumps(configs)),
        "torch_version": np.array(torch.__version__),
        "transformers_version": np.array(transformers.__version__),
    }
    make_cross(out, rng)
    make_gqa(out, rng)
    make_rope(out, rng)
    make_dropout(out, rng)
    path = HERE / "torch_today.npz"
    np.savez_compressed(path, **out)
    print(
        f"wrote {path} ({path.stat().st_size} bytes) with torch {torch.__version__}, "
        f"transformers {transformers.__version__}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
