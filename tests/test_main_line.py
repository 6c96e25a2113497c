"""The main line of notebooks 00-08: how each notebook opens and ends, its detours, and no source documents.

A notebook opens with what the student will be able to do and how long it takes, ends its main line with a
three-line summary and the links to its neighbours, and keeps every detour in cells tagged ``optional`` at the end,
under one visible "Going further" heading. The source documents ("doc 000" to "doc 004") and their corrections
live in the appendix of sources, never on the main line.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAIN_LINE = sorted((ROOT / "notebooks").glob("0[0-8]_*.ipynb"))
BEYOND = sorted((ROOT / "notebooks").glob("09_*.ipynb")) + sorted((ROOT / "notebooks").glob("1[0-2]_*.ipynb"))
CITATION = re.compile(r"\bdoc(?:&nbsp;|\s)00[0-4]\b|source doc", re.IGNORECASE)


def cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def text(cell):
    return "".join(cell["source"])


def optional(cell):
    return "optional" in cell.get("metadata", {}).get("tags", [])


@pytest.mark.parametrize("path", MAIN_LINE, ids=lambda p: p.name[:2])
def test_opens_with_what_the_student_can_do_and_how_long_it_takes(path):
    first = text(cells(path)[0])
    assert "**At the end of this notebook** you can" in first, first[:200]
    assert re.search(r"\*\*Time:\*\* about \d+ minutes", first), first[:300]


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")), ids=lambda p: p.name[:2])
def test_the_stated_time_is_what_study_time_computes(path):
    # one source of truth: the time a notebook states is tools/study_time.py's estimate of its main line
    import importlib.util

    spec = importlib.util.spec_from_file_location("study_time", ROOT / "tools" / "study_time.py")
    study_time = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study_time)
    stated = int(re.search(r"\*\*Time:\*\* about (\d+) minutes", text(cells(path)[0])).group(1))
    assert stated == study_time.estimate(path)[0], f"{path.name} states {stated} minutes"


def test_the_readme_states_the_sum_of_the_main_line_times():
    total = sum(int(re.search(r"\*\*Time:\*\* about (\d+) minutes", text(cells(path)[0])).group(1)) for path in MAIN_LINE)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"({total} minutes)" in readme, total


@pytest.mark.parametrize("path", MAIN_LINE, ids=lambda p: p.name[:2])
def test_main_line_ends_with_a_three_line_summary(path):
    summaries = [
        text(c) for c in cells(path) if c["cell_type"] == "markdown" and not optional(c) and text(c).startswith("## Summary")
    ]
    assert len(summaries) == 1, path.name
    bullets = [line for line in summaries[0].splitlines() if line.startswith("- ")]
    assert len(bullets) == 3, summaries[0]


@pytest.mark.parametrize("path", MAIN_LINE, ids=lambda p: p.name[:2])
def test_detours_are_tagged_and_sit_under_going_further_at_the_end(path):
    tags = [optional(c) for c in cells(path)]
    if True not in tags:
        return
    first = tags.index(True)
    assert all(tags[first:]), f"{path.name}: a main-line cell follows the first optional cell"
    assert text(cells(path)[first]).startswith("## Going further"), text(cells(path)[first])[:80]


@pytest.mark.parametrize("path", MAIN_LINE, ids=lambda p: p.name[:2])
def test_main_line_does_not_cite_the_source_documents(path):
    cited = [
        text(c)[:80]
        for c in cells(path)
        if c["cell_type"] == "markdown"
        and not optional(c)
        and re.search(r"\bdoc(?:&nbsp;|\s)00[0-4]\b", text(c), re.IGNORECASE)
    ]
    assert not cited, f"{path.name}: the source documents belong in the appendix of sources: {cited}"


@pytest.mark.parametrize("path", BEYOND, ids=lambda p: p.name[:2])
def test_notebooks_09_to_12_do_not_cite_the_source_documents(path):
    cited = [text(c)[:80] for c in cells(path) if c["cell_type"] == "markdown" and CITATION.search(text(c))]
    assert not cited, f"{path.name}: the source documents belong in the appendix of sources: {cited}"


def test_the_appendix_of_sources_holds_every_document():
    appendix = "".join(text(c) for c in cells(ROOT / "notebooks" / "appendix_sources.ipynb"))
    for k in range(5):
        assert f"doc&nbsp;00{k}" in appendix
