"""The running example's data file: found from anywhere, reproducible, and guarded."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import mha_lib
import mha_lib.cost
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


def make_data(*args):
    return subprocess.run(
        [sys.executable, str(ROOT / "data" / "make_data.py"), *map(str, args)], capture_output=True, text=True
    )


def test_regenerated_arrays_match_the_pinned_digest(tmp_path):
    out = tmp_path / "again.npz"
    done = make_data("--out", out)
    assert done.returncode == 0, done.stderr
    assert data.RUNNING_EXAMPLE_SHA256 in done.stdout
    again = mha_lib.load_running_example(out)  # accepted by the loader, whatever Python wrote the zip
    assert np.array_equal(again.params.W_o, mha_lib.load_running_example().params.W_o)


def test_regenerates_byte_for_byte_with_the_same_python(tmp_path):
    # The container is deterministic for one Python (no timestamps); across Python releases zipfile may
    # write other header bytes, which is why the pinned digest is of the arrays, not of the file.
    first, second = tmp_path / "first.npz", tmp_path / "second.npz"
    assert make_data("--out", first).returncode == 0
    assert make_data("--out", second).returncode == 0
    assert first.read_bytes() == second.read_bytes()


def test_check_accepts_the_committed_file():
    done = make_data("--check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("OK")


def test_digest_sees_names_dtypes_shapes_and_bytes():
    x = np.arange(6.0).reshape(2, 3)
    base = data.arrays_sha256({"x": x})
    assert data.arrays_sha256({"x": x.copy()}) == base
    assert data.arrays_sha256({"y": x}) != base  # name
    assert data.arrays_sha256({"x": x.astype(np.float32)}) != base  # dtype
    assert data.arrays_sha256({"x": x.reshape(3, 2)}) != base  # shape, same bytes
    changed = x.copy()
    changed[1, 2] = np.nextafter(changed[1, 2], 10)  # one bit
    assert data.arrays_sha256({"x": changed}) != base
    assert data.arrays_sha256({"x": x.astype(">f8")}) == base  # same numbers, other byte order
    assert data.arrays_sha256({"x": np.asfortranarray(x)}) == base  # same array, other memory layout


def test_zip_header_bytes_do_not_change_the_digest(tmp_path):
    # What another Python's zipfile does: a different "version needed to extract" field (bytes 4-5 of a
    # local header). The arrays are the same, so the loader must accept the file.
    raw = bytearray((ROOT / "data" / "running_example.npz").read_bytes())
    assert raw[:4] == b"PK\x03\x04"
    raw[4:6] = (20 if raw[4] != 20 else 45).to_bytes(2, "little")
    other = tmp_path / "running_example.npz"
    other.write_bytes(bytes(raw))
    assert (
        hashlib.sha256(other.read_bytes()).hexdigest()
        != hashlib.sha256((ROOT / "data" / "running_example.npz").read_bytes()).hexdigest()
    )
    assert mha_lib.load_running_example(other).X.shape == (4, 512)


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


@pytest.mark.parametrize("bad", [123, 1.5, b"data/x.npz", ["data"], object()])
def test_load_running_example_names_its_parameter(bad):
    with pytest.raises(TypeError, match=r"load_running_example: path must be .*str.*Path"):
        data.load_running_example(bad)


@pytest.mark.parametrize(
    "sentence, words",
    [
        ("\u200b", None),
        ("\u200b \ufeff", None),
        ("a\u200bb cat", ["ab", "cat"]),
        ("the\x00 cat", ["the", "cat"]),
        ("Humpty  dumpty", ["humpty", "dumpty"]),
    ],
)
def test_tokenize_keeps_only_what_is_seen(sentence, words):
    from mha_lib import tokenize

    if words is None:
        with pytest.raises(ValueError, match="only invisible characters"):
            tokenize(sentence)
    else:
        assert tokenize(sentence) == words


def _make_data(*args):
    return subprocess.run(
        [sys.executable, str(ROOT / "data" / "make_data.py"), *args], capture_output=True, text=True, timeout=120
    )


def test_a_file_that_unpacks_to_far_more_than_the_example_is_refused_unread(tmp_path, monkeypatch):
    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:  # 64 MiB of zeros, a few KB on disk
        with z.open("X.npy", "w", force_zip64=True) as f:
            np.lib.format.write_array(f, np.zeros(8 * 2**20))
    assert bomb.stat().st_size < 2**20

    def no_load(*args, **kwargs):
        raise AssertionError("np.load was called on a file that is refused by its size")

    monkeypatch.setattr(data.np, "load", no_load)
    with pytest.raises(ValueError, match="unpacks to 64 MiB"):
        mha_lib.load_running_example(bomb)


def test_the_project_s_own_file_still_loads():
    ex = mha_lib.load_running_example()
    assert ex.X.shape == (4, 512) and ex.params.h == 8


@pytest.mark.parametrize(
    "out, words",
    [
        (".", "is a folder"),
        ("x.txt", "must end in .npz"),
        ("no/such/folder/x.npz", "does not exist"),
    ],
)
def test_make_data_refuses_a_bad_out_in_one_line(tmp_path, out, words):
    run = _make_data("--out", str(tmp_path / out))
    assert run.returncode == 2 and words in run.stderr and "Traceback" not in run.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_make_data_writes_the_file_it_names(tmp_path):
    run = _make_data("--out", str(tmp_path / "ex.npz"))
    assert run.returncode == 0, run.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["ex.npz"]
