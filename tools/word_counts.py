#!/usr/bin/env python3
"""How long the notebooks read: words of markdown on the main line and in optional cells.

    .venv/bin/python tools/word_counts.py                       # every notebook
    .venv/bin/python tools/word_counts.py notebooks/03_scores.ipynb
    .venv/bin/python tools/word_counts.py --check               # exit 1 if 00-08's main line is over budget

A markdown cell is *optional* when its metadata has the tag ``optional`` (a detour under the notebook's
"Going further" heading); every other markdown cell is on the *main line*. Code cells are not counted.
A word is a whitespace-separated piece of text with at least one letter or digit, so LaTeX such as
``$QK^T$`` counts as one word and a lone ``|`` or ``-`` as none. HTML comments are left out.

Prints one line per notebook (main line, optional, and the study time its opening states, "**Time:** about
N minutes") and the total of notebooks 00-08's main line against the budget of the series (12,000 words), with
the sum of their stated times. Writes nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET = 12_000  # words of markdown on the main line of notebooks 00-08
MAIN_LINE = tuple(f"{k:02d}_" for k in range(9))  # the notebooks the budget covers
OPTIONAL_TAG = "optional"

_WORD = re.compile(r"[A-Za-z0-9]")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TIME = re.compile(r"\*\*Time:\*\* about (\d+) minutes")


def count_words(text: str) -> int:
    """Words in a piece of markdown: whitespace-separated pieces with a letter or digit."""
    return sum(1 for piece in _COMMENT.sub(" ", text).split() if _WORD.search(piece))


def notebook_counts(path: Path) -> tuple[int, int]:
    """(main line, optional) words of markdown of one notebook."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    main = optional = 0
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        source = cell.get("source", "")
        words = count_words("".join(source) if isinstance(source, list) else source)
        if OPTIONAL_TAG in cell.get("metadata", {}).get("tags", []):
            optional += words
        else:
            main += words
    return main, optional


def stated_minutes(path: Path) -> int | None:
    """The study time a notebook's first cell states ("**Time:** about N minutes"), or None."""
    cells = json.loads(Path(path).read_text(encoding="utf-8")).get("cells", [])
    if not cells:
        return None
    source = cells[0].get("source", "")
    found = _TIME.search("".join(source) if isinstance(source, list) else source)
    return int(found.group(1)) if found else None


def default_paths() -> list[Path]:
    folder = ROOT / "notebooks"
    return sorted(folder.glob("[0-9]*.ipynb")) + sorted(folder.glob("appendix*.ipynb"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: every notebook of the series)")
    parser.add_argument(
        "--check", action="store_true", help=f"exit with status 1 if notebooks 00-08's main line is over {BUDGET:,} words"
    )
    args = parser.parse_args(argv)
    paths = args.paths or default_paths()
    for p in paths:
        if not p.is_file():
            parser.error(f"paths: {p} is not a file; give notebooks such as notebooks/03_scores.ipynb")

    width = max(len(p.name) for p in paths)
    print(f"{'notebook':<{width}}  {'main line':>9}  {'optional':>8}  {'time':>7}")
    total_main = total_optional = budgeted = minutes = 0
    for p in paths:
        main_words, optional_words = notebook_counts(p)
        total_main += main_words
        total_optional += optional_words
        if p.name.startswith(MAIN_LINE):
            budgeted += main_words
        stated = stated_minutes(p)
        if p.name.startswith(MAIN_LINE) and stated:
            minutes += stated
        shown = f"{stated} min" if stated else "-"
        print(f"{p.name:<{width}}  {main_words:>9,}  {optional_words:>8,}  {shown:>7}")
    print(f"{'all listed':<{width}}  {total_main:>9,}  {total_optional:>8,}")
    verdict = "within" if budgeted <= BUDGET else "OVER"
    print(
        f"00-08 main line: {budgeted:,} words ({verdict} the budget of {BUDGET:,}), "
        f"{minutes} minutes of study stated ({minutes / 60:.1f} h)"
    )
    return 1 if args.check and budgeted > BUDGET else 0


if __name__ == "__main__":
    sys.exit(main())
