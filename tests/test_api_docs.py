"""The API documents itself: every public name (``seqstate.__all__``, ``ss.Model``'s
public methods, ``fsm.__all__``) has a docstring that names each of its parameters and
shows an example; the doctest examples run; ``dir(seqstate)`` offers every name the
README uses; and ``docs/api.md`` is exactly what ``scripts/api_reference.py`` writes.

The names are read from the modules, so a name added later is checked too."""

from __future__ import annotations

import doctest
import importlib.util
import inspect
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import fsm
import seqstate as ss

ROOT = Path(__file__).resolve().parents[1]


def _load_script() -> Any:
    spec = importlib.util.spec_from_file_location(
        "api_reference", ROOT / "scripts" / "api_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


API = _load_script()
PUBLIC = list(API.public_names())
IDS = [name for _, name, _ in PUBLIC]


def parameters(obj: Any) -> list[str]:
    """The parameters a user passes: none for properties, constants, protocols and
    exceptions without an ``__init__`` of their own."""
    if isinstance(obj, property) or not callable(obj) or getattr(obj, "_is_protocol", False):
        return []
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        if all("__init__" not in vars(c) for c in obj.__mro__ if c.__module__ != "builtins"):
            return []
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    return [p for p in sig.parameters if p not in ("self", "cls") and not p.startswith("_")]


def needs_example(obj: Any) -> bool:
    return callable(obj) and not isinstance(obj, property)


@pytest.mark.parametrize(("group", "name", "obj"), PUBLIC, ids=IDS)
def test_public_name_has_a_docstring_naming_its_arguments_with_an_example(group, name, obj):
    doc = API.docstring(obj)
    assert doc.strip(), f"{name} has no docstring"
    missing = [p for p in parameters(obj) if not re.search(rf"(?<!\w){re.escape(p)}(?!\w)", doc)]
    assert not missing, f"{name}: the docstring does not mention {missing}"
    if needs_example(obj):
        assert ">>>" in doc or re.search(r"^Example", doc, re.M), f"{name} has no example"


def test_the_public_names_include_the_entry_points():
    assert {"ss.gen", "ss.sample", "ss.load_model", "ss.Model", "Model.chat", "fsm.Regex"} <= set(
        IDS
    )


@pytest.mark.parametrize(
    ("name", "obj"), [(n, o) for _, n, o in PUBLIC if ">>>" in API.docstring(o)]
)
def test_docstring_examples_run(name, obj):
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    test = parser.get_doctest(API.docstring(obj), {"ss": ss, "fsm": fsm}, name, None, 0)
    result = runner.run(test, out=lambda text: print(text, end=""))
    assert result.failed == 0, f"{name}: {result.failed} example(s) failed (output above)"


def test_dir_offers_every_name_the_readme_uses():
    readme = (ROOT / "README.md").read_text()
    used = set(re.findall(r"\bss\.([A-Za-z_]\w*)", readme))
    assert {"load_model", "gen", "regex"} <= used  # the pattern reads the README
    assert sorted(used - set(dir(ss))) == []
    methods = set(re.findall(r"\bmodel\.([A-Za-z_]\w*)", readme))
    assert sorted(methods - set(dir(ss.Model))) == []


def test_dir_lists_the_lazy_names_without_loading_torch():
    code = (
        "import sys, seqstate; names = dir(seqstate); "
        "assert {'load_model', 'Model', 'InvalidSpec'} <= set(names), names; "
        "assert 'torch' not in sys.modules and 'numba' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_api_page_matches_the_docstrings():
    page = (ROOT / "docs" / "api.md").read_text()
    assert page == API.render(), (
        "docs/api.md is stale: run .venv/bin/python scripts/api_reference.py"
    )
