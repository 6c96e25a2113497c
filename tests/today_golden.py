"""Shared loader for tests/golden/torch_today.npz (made by tests/golden/make_today_golden.py)."""

import json
from pathlib import Path

import numpy as np

GOLDEN = Path(__file__).parent / "golden" / "torch_today.npz"

with np.load(GOLDEN, allow_pickle=False) as _f:
    CONFIGS = json.loads(str(_f["configs"]))
    VERSIONS = (str(_f["torch_version"]), str(_f["transformers_version"]))


def load(prefix):
    """Every array stored under ``prefix/``, keyed by the rest of its name."""
    prefix = prefix.rstrip("/") + "/"
    with np.load(GOLDEN, allow_pickle=False) as f:
        return {k[len(prefix) :]: f[k] for k in f.files if k.startswith(prefix)}
