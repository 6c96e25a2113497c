"""Regenerate the project's data files from fixed seeds.

    python data/make_data.py           # writes data/running_example.npz
    python data/make_data.py --check   # only checks the committed file

The numbers come from fixed seeds (see mha_lib/data.py): the same code always
makes the same arrays. Their digest (names, dtypes, shapes and bytes, see
mha_lib.data.arrays_sha256) is pinned in mha_lib.data. The zip container around
them is deterministic for a given Python (fixed timestamps), but its header
bytes may differ between Python releases, so the container is not what is pinned.
"""

import argparse
import sys
import zipfile
from pathlib import Path

import numpy as np

from mha_lib.data import RUNNING_EXAMPLE_SHA256, arrays_sha256, make_running_example, save_npz_deterministic

HERE = Path(__file__).resolve().parent


def running_example_arrays():
    ex = make_running_example()
    p = ex.params
    return {"tokens": list(ex.tokens), "X": ex.X, "W_q": p.W_q, "W_k": p.W_k, "W_v": p.W_v, "W_o": p.W_o}


def file_digest(path):
    """arrays_sha256 of the arrays in an .npz file, or None if it is missing or unreadable."""
    try:
        with zipfile.ZipFile(path) as archive:  # a file that unpacks to far more than the example is not read
            if sum(info.file_size for info in archive.infolist()) > 16 * 2**20:
                return None
        with np.load(path, allow_pickle=False) as f:
            return arrays_sha256({k: f[k] for k in f.files})
    except Exception:  # noqa: BLE001 -- any unreadable file is reported as a mismatch
        return None


def out_problem(out, checking):
    """What is wrong with the --out path, in one line, or None: a file ending in .npz (numpy would add the suffix
    to any other name, and write another file than the one named), in a folder that exists, not a folder."""
    if out.is_dir():
        return f"--out {out} is a folder; give the .npz file to write, e.g. --out {out / 'running_example.npz'}"
    if out.suffix != ".npz":
        return f"--out {out}: the file must end in .npz, e.g. --out {out.with_suffix('.npz')}"
    if not checking and not out.parent.is_dir():
        return f"--out {out}: the folder {out.parent} does not exist; create it first or choose another"
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument(
        "--out",
        type=Path,
        default=HERE / "running_example.npz",
        help="the .npz file to write (or, with --check, to compare); default data/running_example.npz",
    )
    args = parser.parse_args(argv)
    problem = out_problem(args.out, args.check)
    if problem:
        parser.error(problem)  # one line and exit status 2, as for any other bad argument
    digest = arrays_sha256(running_example_arrays())
    if args.check:
        committed = file_digest(args.out)
        ok = digest == committed == RUNNING_EXAMPLE_SHA256
        print(
            f"regenerated {digest}\ncommitted   {committed}\npinned      {RUNNING_EXAMPLE_SHA256}\n"
            f"{'OK' if ok else 'MISMATCH'}"
        )
        return 0 if ok else 1
    try:
        save_npz_deterministic(args.out, running_example_arrays())
    except OSError as exc:
        print(f"make_data.py: could not write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes, arrays sha256 {digest})")
    if file_digest(args.out) != RUNNING_EXAMPLE_SHA256:
        print("note: the arrays' sha256 differs from the one pinned in mha_lib/data.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
