"""Shared helpers of the peer benchmarks: percentiles, markdown tables, docs sections.

The benchmarks run on a small shared machine, so every figure is a median (or a
percentile) of interleaved repetitions; these helpers keep the formatting in one place.
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import math
import os
import platform
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def have(module: str) -> bool:
    """Whether ``module`` can be imported (peers are an optional extra)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100, nearest rank); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def median(values: Sequence[float]) -> float:
    """Median (mean of the two middle values for an even count); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def fmt(value: float, digits: int = 1) -> str:
    """A number for a table cell; ``-`` for NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:,.{digits}f}"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub markdown table; the first column left-aligned, the others right-aligned."""
    align = ["---"] + ["---:"] * (len(headers) - 1)
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def run_header(command: str) -> str:
    """The command, date and machine line every section starts with."""
    today = datetime.date.today().isoformat()
    return (
        f"Command: `{command}` (run {today}; Python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cores: figures are noisy, compare within a table)."
    )


def json_child(
    command: Sequence[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> Any:
    """Runs a child benchmark process and reads its answer: the JSON on the last line
    of its standard output (what it printed before is progress). Raises
    ``CalledProcessError`` when the child fails."""
    done = subprocess.run(
        list(command), cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def command_line() -> str:
    """The command that is running, as a user would type it from the repository root."""
    return " ".join([".venv/bin/python", *sys.argv])


def write_section(title: str, body: str, path: Path = DOCS) -> None:
    """Replace the ``## title`` section of ``path`` with ``body`` (or append it).

    A section runs to the next ``## `` heading, so sections written by other scripts
    are left as they are."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    block = f"## {title}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: block + "\n", text, count=1).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + block
    path.write_text(text)
