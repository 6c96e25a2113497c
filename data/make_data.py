"""Regenerate the project's data files, byte for byte.

    python data/make_data.py           # writes data/running_example.npz
    python data/make_data.py --check   # only checks the committed file

The numbers come from fixed seeds (see mha_lib/data.py): the same code always
writes the same bytes, whose sha256 is pinned in mha_lib.data.
"""

import argparse
import hashlib
import sys
from pathlib import Path

from mha_lib.data import RUNNING_EXAMPLE_SHA256, make_running_example, save_npz_deterministic

HERE = Path(__file__).resolve().parent


def running_example_arrays():
    ex = make_running_example()
    p = ex.params
    return {"tokens": list(ex.tokens), "X": ex.X, "W_q": p.W_q, "W_k": p.W_k, "W_v": p.W_v, "W_o": p.W_o}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--out", type=Path, default=HERE / "running_example.npz")
    args = parser.parse_args()
    target = args.out.with_suffix(".tmp.npz") if args.check else args.out
    save_npz_deterministic(target, running_example_arrays())
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    if args.check:
        target.unlink()
        committed = hashlib.sha256(args.out.read_bytes()).hexdigest() if args.out.exists() else None
        ok = digest == committed == RUNNING_EXAMPLE_SHA256
        print(f"regenerated {digest}\ncommitted   {committed}\npinned      {RUNNING_EXAMPLE_SHA256}\n{'OK' if ok else 'MISMATCH'}")
        return 0 if ok else 1
    print(f"wrote {target} ({target.stat().st_size} bytes, sha256 {digest})")
    if digest != RUNNING_EXAMPLE_SHA256:
        print("note: this sha256 differs from the one pinned in mha_lib/data.py", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
