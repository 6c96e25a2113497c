"""The guides' figures: every script a figure in docs/ names exists, and a measured figure names its script."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDES = [ROOT / "docs" / "teaching.md", ROOT / "docs" / "deploying.md"]
SCRIPT = re.compile(r"\b((?:benchmarks|tools|tests)/[\w/.-]+\.py)\b")


def paragraphs(path):
    """The paragraphs and list items of a markdown file (code blocks and tables left out)."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    found = []
    for block in re.split(r"\n\s*\n|\n(?=\s*- )", text):
        lines = [line for line in block.splitlines() if not line.startswith(("    ", "|"))]
        if lines:
            found.append(" ".join(line.strip() for line in lines))
    return found


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.name)
def test_every_script_a_guide_names_exists(guide):
    missing = sorted({name for name in SCRIPT.findall(guide.read_text(encoding="utf-8")) if not (ROOT / name).is_file()})
    assert not missing, f"{guide.name} quotes figures of scripts that no longer exist: {missing}"


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.name)
def test_a_measured_figure_names_the_script_that_measured_it(guide):
    # "Measured ..." / "measured with ..." beside a time, size or count: the paragraph names its script
    # (students are not a script: "not measured with students" is an estimate and says so).
    unit = r"\d[\d.,]*\s*(?:ms|s|min|minutes|seconds|MB|GB|KB|pages)\b"
    bare = [
        p[:100]
        for p in paragraphs(guide)
        if re.search(r"(?<!Not )\b[Mm]easured\b", p) and re.search(unit, p) and not SCRIPT.search(p)
    ]
    assert not bare, f"{guide.name}: measured figures without the script that measured them: {bare}"
