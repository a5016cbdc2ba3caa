"""``scripts/compiled_profile.py``: the timed copy behaves as the original, times each
method's own and total time, and names only methods the package has."""

from __future__ import annotations

import ast
import importlib.util
import sys
import time
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def profile() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(
        "compiled_profile", ROOT / "scripts/compiled_profile.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SAMPLE = '''from __future__ import annotations


class Walker:
    """A class to time."""

    def outer(self, count: int, *, pause: float = 0.0) -> int:
        """Calls ``inner`` ``count`` times."""
        return sum(self.inner(pause) for _ in range(count))

    def inner(self, pause: float) -> int:
        time.sleep(pause)
        return 1

    def note(self, text: str) -> None:
        self.noted = text
'''


def test_a_timed_class_answers_as_before_and_times_own_and_total(profile, monkeypatch):
    timers = types.ModuleType("fsm._timers")
    exec(profile.TIMERS, timers.__dict__)
    monkeypatch.setitem(sys.modules, "fsm._timers", timers)
    source = profile.timed_source(SAMPLE, "Walker", ("outer", "inner", "note"))
    namespace: dict = {"time": time}
    exec(compile(source, "timed", "exec"), namespace)
    walker = namespace["Walker"]()
    assert walker.outer(3, pause=0.01) == 3
    assert walker.note("x") is None and walker.noted == "x"
    own_outer, total_outer, calls_outer = timers.TIMES["Walker.outer"]
    own_inner, total_inner, calls_inner = timers.TIMES["Walker.inner"]
    assert (calls_outer, calls_inner, timers.TIMES["Walker.note"][2]) == (1, 3, 1)
    assert total_inner >= 3 * 0.01e9 and own_inner == pytest.approx(total_inner, rel=0.01)
    assert own_outer + total_inner == total_outer  # the inner calls are outer's children
    assert own_outer < total_inner
    assert timers.CHILDREN == [total_outer + timers.TIMES["Walker.note"][1]]


def test_every_method_listed_is_in_the_package_and_its_timed_module_parses(profile):
    for module, (cls, methods) in profile.METHODS.items():
        source = (ROOT / "fsm" / module).read_text()
        timed = profile.timed_source(source, cls, methods)
        tree = ast.parse(timed)
        (klass,) = (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
        names = {n.name for n in klass.body if isinstance(n, ast.FunctionDef)}
        assert {f"_timed_{name}" for name in methods} <= names
        assert set(methods) <= names


def test_a_method_the_class_lacks_is_refused(profile):
    with pytest.raises(ValueError, match="no method missing"):
        profile.timed_source(SAMPLE, "Walker", ("outer", "missing"))


def test_a_checkout_is_not_instrumented(profile, tmp_path):
    (tmp_path / ".git").mkdir()  # a checkout's .git is a folder, a worktree's a file
    with pytest.raises(SystemExit, match="not a git worktree"):
        profile.instrument(tmp_path)
