"""What `import mha_lib` offers: each numpy module's `__all__`, exported by the package, and nothing else."""

from __future__ import annotations

import importlib
import types

import pytest

import mha_lib

# The modules whose public names the package exports (the others are imported by name: `from mha_lib import minilm`).
EXPORTED_MODULES = ("attention", "backward", "data", "designed", "flash", "generation", "params", "rope", "translation")


def _module_all(name):
    return importlib.import_module(f"mha_lib.{name}").__all__


def test_the_package_all_is_each_exported_module_all_in_order():
    expected = [n for name in EXPORTED_MODULES for n in _module_all(name)]
    assert mha_lib.__all__ == expected


def test_every_name_in_all_is_the_module_object_itself():
    for name in EXPORTED_MODULES:
        module = importlib.import_module(f"mha_lib.{name}")
        for n in module.__all__:
            assert getattr(mha_lib, n) is getattr(module, n), f"mha_lib.{n} is not mha_lib.{name}.{n}"


def test_no_name_in_all_is_listed_twice():
    assert len(mha_lib.__all__) == len(set(mha_lib.__all__))


def test_the_package_exports_nothing_outside_all():
    public = {n for n, v in vars(mha_lib).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert public == set(mha_lib.__all__)


@pytest.mark.parametrize("name", EXPORTED_MODULES)
def test_a_module_all_names_only_what_the_module_has(name):
    module = importlib.import_module(f"mha_lib.{name}")
    assert [n for n in module.__all__ if not hasattr(module, n)] == []


def test_star_import_gives_every_name():
    namespace: dict[str, object] = {}
    exec("from mha_lib import *", namespace)
    assert set(mha_lib.__all__) <= set(namespace)
