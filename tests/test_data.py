"""The running example's data file: found from anywhere, reproducible, and guarded."""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mha_lib
from mha_lib import data

ROOT = Path(__file__).resolve().parent.parent


def test_loads_from_any_working_directory(tmp_path):
    code = "import mha_lib; ex = mha_lib.load_running_example(); print(ex.X.shape, ex.params.W_q.shape)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "(4, 512) (8, 512, 64)"


def test_file_equals_what_the_seeds_make():
    ex, fresh = mha_lib.load_running_example(), data.make_running_example()
    assert ex.tokens == fresh.tokens
    assert np.array_equal(ex.X, fresh.X)
    assert np.array_equal(ex.X, mha_lib.embed_tokens(ex.tokens, 512))  # same as the explorer's embeddings
    for name in ("W_q", "W_k", "W_v", "W_o"):
        assert np.array_equal(getattr(ex.params, name), getattr(fresh.params, name))


def test_regenerates_byte_for_byte(tmp_path):
    out = tmp_path / "again.npz"
    subprocess.run([sys.executable, str(ROOT / "data" / "make_data.py"), "--out", str(out)], check=True,
                   capture_output=True)
    assert hashlib.sha256(out.read_bytes()).hexdigest() == data.RUNNING_EXAMPLE_SHA256
    assert out.read_bytes() == (ROOT / "data" / "running_example.npz").read_bytes()


def test_missing_file_says_how_to_regenerate(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"missing; regenerate it with `python data/make_data.py`"):
        mha_lib.load_running_example(tmp_path / "running_example.npz")


def test_corrupted_file_is_detected(tmp_path):
    bad = tmp_path / "running_example.npz"
    raw = bytearray((ROOT / "data" / "running_example.npz").read_bytes())
    raw[5000] ^= 0xFF  # flip one byte in the middle of an array
    bad.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="corrupted or was changed.*make_data.py"):
        mha_lib.load_running_example(bad)


def test_truncated_file_is_detected(tmp_path):
    bad = tmp_path / "running_example.npz"
    bad.write_bytes((ROOT / "data" / "running_example.npz").read_bytes()[:1000])
    with pytest.raises(ValueError, match="corrupted"):
        mha_lib.load_running_example(bad)


def test_data_dir_override(tmp_path, monkeypatch):
    shutil.copy(ROOT / "data" / "running_example.npz", tmp_path)
    monkeypatch.setenv("MHA_LIB_DATA", str(tmp_path))
    assert data.data_dir() == tmp_path
    assert mha_lib.load_running_example().X.shape == (4, 512)
