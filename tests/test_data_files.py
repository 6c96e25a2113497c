"""The running example's file and the script that writes it: a file is checked before it is read, and the
script refuses an --out it cannot honour in one line."""

import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import mha_lib
from mha_lib import data

ROOT = Path(__file__).resolve().parent.parent


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


def _make_data(*args):
    return subprocess.run(
        [sys.executable, str(ROOT / "data" / "make_data.py"), *args], capture_output=True, text=True, timeout=120
    )


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
