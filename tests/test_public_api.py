"""What `import mha_lib` offers: each numpy module's `__all__`, exported by the package, and nothing else."""

from __future__ import annotations

import importlib
import inspect
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


# The math modules whose public API carries type hints, checked by mypy (pyproject.toml's [tool.mypy] files).
TYPED_MODULES = ("attention", "params", "flash", "rope", "generation", "cost", "designed", "data", "minilm")


def _public_functions(module):
    """(name, function) for each function of ``module.__all__``, and each public method or property of its classes."""
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj):
            for attr, value in vars(obj).items():
                value = value.fget if isinstance(value, property) else value
                if inspect.isfunction(value) and (attr == "__init__" or not attr.startswith("_")):
                    yield f"{name}.{attr}", value


@pytest.mark.parametrize("name", TYPED_MODULES)
def test_every_public_function_of_a_math_module_has_type_hints(name):
    module = importlib.import_module(f"mha_lib.{name}")
    untyped = []
    for qualname, f in _public_functions(module):
        if f.__module__ != module.__name__:  # re-exported from another module: checked there
            continue
        signature = inspect.signature(f)
        bare = [p for p, v in signature.parameters.items() if p != "self" and v.annotation is inspect.Parameter.empty]
        if bare or signature.return_annotation is inspect.Signature.empty:
            untyped.append(qualname)
    assert untyped == [], f"mha_lib.{name}: give {untyped} type hints (mypy checks them)"
