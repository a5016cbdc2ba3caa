"""``benchmarks/_common.py``'s child runner."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.fixture
def common(benchmark_script):
    """The helpers' module."""
    return benchmark_script("_common")


def test_a_child_answers_with_the_json_of_its_last_line(common, tmp_path):
    code = "import os, json; print('progress'); print(json.dumps({'cwd': os.getcwd(), 'x': [1]}))"
    answer = common.json_child([sys.executable, "-c", code], cwd=tmp_path)
    assert answer == {"cwd": str(tmp_path), "x": [1]}


def test_a_failing_child_raises(common):
    with pytest.raises(subprocess.CalledProcessError):
        common.json_child([sys.executable, "-c", "raise SystemExit(3)"])
