"""The dependency arrows point one way: the math uses no pictures and no widgets.

Still pictures (`plotting`, `diagrams`, `viz/`) may import matplotlib; only `explorers` and `lecture` may import widgets.
Everything else in `mha_lib` (the math, the model, the exercises) imports neither, so it can be read, tested and reused
alone. The lecture is built on the explorers, never the reverse.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mha_lib"
PICTURES = {"plotting.py", "diagrams.py"}
WIDGETS = {"ipywidgets", "anywidget", "traitlets", "IPython.display"}
WIDGET_PACKAGES = {"explorers", "lecture"}


def _modules_imported(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _below_the_explorers():
    return sorted(p for p in PACKAGE.rglob("*.py") if not WIDGET_PACKAGES & set(p.relative_to(PACKAGE).parts))


@pytest.mark.parametrize("path", _below_the_explorers(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_below_the_explorers_imports_widgets(path):
    widgets = {name for name in _modules_imported(path) if name.split(".")[0] in WIDGETS or name in WIDGETS}
    assert not widgets, f"{path.name} imports {sorted(widgets)}: widgets belong in mha_lib/explorers/ or lecture/"


@pytest.mark.parametrize("path", sorted((PACKAGE / "explorers").rglob("*.py")), ids=lambda p: p.name)
def test_no_explorer_imports_the_lecture(path):
    """The lecture screen uses the explorers (their toolkit, their picture); an explorer never uses the lecture."""
    upward = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 2 and (node.module or "").split(".")[0] == "lecture":
            upward.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level == 2 and node.module is None:
            upward |= {alias.name for alias in node.names if alias.name == "lecture"}
    upward |= {name for name in _modules_imported(path) if name.startswith("mha_lib.lecture")}
    assert not upward, f"{path.name} imports {sorted(upward)}: the lecture uses the explorers, not the reverse"


def _is_a_picture_module(path):
    return path.name in PICTURES or "viz" in path.relative_to(PACKAGE).parts


@pytest.mark.parametrize(
    "path", [p for p in _below_the_explorers() if not _is_a_picture_module(p)], ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_the_math_imports_no_matplotlib(path):
    plots = {name for name in _modules_imported(path) if name.split(".")[0] == "matplotlib"}
    assert not plots, f"{path.name} imports {sorted(plots)}: pictures belong in plotting, diagrams or viz"


def test_importing_mha_lib_loads_neither_matplotlib_nor_widgets():
    code = (
        "import sys, mha_lib, mha_lib.exercises; "
        "print(sorted(m for m in ('matplotlib', 'ipywidgets', 'anywidget') if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]", f"import mha_lib loaded {loaded}"


EXERCISES = PACKAGE / "exercises"


@pytest.mark.parametrize("path", sorted(p for p in EXERCISES.glob("*.py") if p.name != "__init__.py"), ids=lambda p: p.name)
def test_no_module_of_the_exercises_imports_their_public_api(path):
    """The API (`mha_lib.exercises`: check, check_function, solution) imports the engines, never the reverse."""
    submodules = {p.stem for p in EXERCISES.glob("*.py")}
    upward = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None:
            upward += [alias.name for alias in node.names if alias.name not in submodules]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "mha_lib.exercises":
            upward += [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            upward += [alias.name for alias in node.names if alias.name == "mha_lib.exercises"]
    assert not upward, f"{path.name} imports {upward} from the package: import it from the module that defines it"
