"""The README's example program runs as written (on the tiny model, for speed)."""

from __future__ import annotations

import re
from pathlib import Path

import seqstate as ss

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_program_runs(tiny_model, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has a python example"
    monkeypatch.setattr(ss, "load_model", lambda *args, **kwargs: tiny_model, raising=False)
    namespace: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    state = namespace["s"]
    assert re.fullmatch(r"[A-Z][a-z]{1,12}", state["name"])
    assert isinstance(state["age"], int)
    assert state["pet"] in ("cat", "dog", "none")
    assert namespace["forks"].shape == (1, 8)
    assert namespace["best"].shape == (1, 4)
