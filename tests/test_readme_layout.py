"""The README's layout map matches the tree: each package row names every module and
subpackage directly inside it, and nothing that does not exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("seqstate", "fsm", "backends")


def layout_rows(readme: str) -> dict[str, set[str]]:
    """``{package dir: module names}`` from the table under ``## Layout``. A row's second
    cell is ``job. `a` what a does · `b` and `c` what they do · ...``: the names are the
    backticked words that open each ``·``-separated item."""
    section = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = line.split("|")
        match = re.fullmatch(r"\s*`([\w/]+/)`\s*", cells[1]) if len(cells) > 3 else None
        if match:
            items = cells[2].split(". ", 1)[-1].split("·")
            rows[match.group(1)] = {name for item in items for name in _leading_names(item)}
    return rows


def _leading_names(item: str) -> list[str]:
    """The backticked names an item opens with (``a``, or ``a`` and ``b``)."""
    opening = re.match(r"\s*(`[\w.]+/?`(?:\s*(?:and|,)\s*`[\w.]+/?`)*)", item)
    return re.findall(r"`([\w.]+/?)`", opening.group(1)) if opening else []


def tree_entries(directory: Path) -> set[str]:
    """Modules (without ``.py``) and subpackages (with ``/``) directly in a package."""
    modules = {p.stem for p in directory.glob("*.py") if p.name != "__init__.py"}
    packages = {f"{p.name}/" for p in directory.iterdir() if (p / "__init__.py").exists()}
    return modules | packages


def package_dirs() -> list[str]:
    found = []
    for package in PACKAGES:
        found += [
            f"{p.parent.relative_to(ROOT).as_posix()}/"
            for p in (ROOT / package).rglob("__init__.py")
        ]
    return sorted(found)


def test_every_package_has_a_row():
    rows = layout_rows((ROOT / "README.md").read_text())
    assert sorted(rows) == package_dirs()


def test_each_row_names_exactly_what_the_package_holds():
    rows = layout_rows((ROOT / "README.md").read_text())
    mismatched = {
        directory: {
            "missing": sorted(tree_entries(ROOT / directory) - names),
            "stale": sorted(names - tree_entries(ROOT / directory)),
        }
        for directory, names in rows.items()
        if names != tree_entries(ROOT / directory)
    }
    assert mismatched == {}


def test_the_parser_reads_a_row():
    text = (
        "## Layout\n\n| package | modules |\n| --- | --- |\n"
        "| `pkg/` | the job. `a` does `x` · `b` and `c` run · `sub/` |\n\n## Next\n"
    )
    assert layout_rows(text) == {"pkg/": {"a", "b", "c", "sub/"}}
