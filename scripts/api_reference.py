"""Write ``docs/api.md``, the API reference, from the docstrings of the public names.

The public names are ``seqstate.__all__`` (``load_model`` and ``Model`` included), the
public methods of ``Model``, and ``fsm.__all__``. Docstrings follow one layout: a
summary, an ``Args:`` section (``name: text`` entries), other ``Word:`` sections, and an
``Example:`` with doctest lines (``>>>``) or a ``::`` code block; this script turns that
layout into markdown. ``tests/test_api_docs.py`` checks that the committed page equals
what this script writes, so the reference cannot drift from the code.

    .venv/bin/python scripts/api_reference.py          # rewrite docs/api.md
    .venv/bin/python scripts/api_reference.py --check  # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "api.md"
SECTION = re.compile(r"^([A-Z][A-Za-z ]*?)( \(.*\))?:$")
ARGUMENT = re.compile(r"^(\*{0,2}[A-Za-z_][\w, ]*):\s*(.*)$")

INTRO = """# API reference

Generated from the docstrings by `scripts/api_reference.py` (do not edit by hand; run
`.venv/bin/python scripts/api_reference.py` after changing a docstring). Examples with
`>>>` run as doctests in `tests/test_api_docs.py`; the others need a model, e.g.
`model = ss.load_model()`.

`import seqstate as ss` is the one namespace a user needs; `fsm` is the constraint
compiler underneath (specs, token indexes, vocabularies).
"""


def public_names() -> Iterator[tuple[str, str, Any]]:
    """``(group, qualified name, object)`` for every documented public name, in order."""
    sys.path.insert(0, str(ROOT))
    import fsm
    import seqstate

    model = seqstate.Model
    for name in sorted(seqstate.__all__, key=str.lower):
        yield "seqstate", f"ss.{name}", getattr(seqstate, name)
    for name, member in public_methods(model):
        yield "Model", f"Model.{name}", member
    for name in sorted(fsm.__all__, key=str.lower):
        yield "fsm", f"fsm.{name}", getattr(fsm, name)


def public_methods(cls: type) -> Iterator[tuple[str, Any]]:
    """The public methods and properties of ``cls``, its own and those of its mixins
    (``__call__`` included), in definition order."""
    members = {}
    for owner in reversed(cls.__mro__[:-1]):  # object last in the MRO: left out
        members.update(vars(owner))
    for name, member in members.items():
        if name.startswith("_") and name != "__call__":
            continue
        if isinstance(member, staticmethod | classmethod):
            member = member.__func__
        if callable(member) or isinstance(member, property):
            yield name, member


def signature(name: str, obj: Any) -> str:
    """``name(parameters)`` as a user calls it (no ``self``); bare name for constants."""
    target = obj.fget if isinstance(obj, property) else obj
    if isinstance(obj, property) or not callable(target) or getattr(obj, "_is_protocol", False):
        return name
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return name
    params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")]
    shown: list[str] = []
    for param in params:
        if param.kind is param.KEYWORD_ONLY and not any(s.startswith("*") for s in shown):
            shown.append("*")
        shown.append(_parameter(param))
    return f"{name}({', '.join(shown)})"


def _parameter(param: inspect.Parameter) -> str:
    """One parameter with its annotation as written (no quotes) and its default."""
    stars = {param.VAR_POSITIONAL: "*", param.VAR_KEYWORD: "**"}.get(param.kind, "")
    text = stars + param.name
    if param.annotation is not param.empty:
        annotation = param.annotation
        text += f": {annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)}"
    if param.default is not param.empty:
        default = param.default
        text += f" = {default.__name__ if isinstance(default, type) else repr(default)}"
    return text


def docstring(obj: Any) -> str:
    """The object's own docstring; for a constant, the string literal after it."""
    if isinstance(obj, property):
        return inspect.getdoc(obj.fget) or ""
    if callable(obj):
        return inspect.getdoc(obj) or ""
    return constant_doc(obj)


def constant_doc(value: Any) -> str:
    """The attribute docstring of a module-level constant equal to ``value``."""
    for path in sorted((ROOT / "seqstate").glob("*.py")) + sorted((ROOT / "fsm").glob("*.py")):
        body = ast.parse(path.read_text()).body
        for node, after in zip(body, body[1:]):
            if (
                isinstance(node, ast.Assign)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
                and _assigns_value(node, path, value)
            ):
                return inspect.cleandoc(after.value.value)
    return ""


def _assigns_value(node: ast.Assign, path: Path, value: Any) -> bool:
    names = [t.id for t in node.targets if isinstance(t, ast.Name)]
    module = _module_of(path)
    return any(name.isupper() and getattr(module, name, None) is value for name in names)


def _module_of(path: Path) -> ModuleType | None:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return sys.modules.get(name)


def to_markdown(doc: str) -> str:
    """A docstring in the layout of the module doc, as markdown."""
    out: list[str] = []
    lines = doc.splitlines()
    i = 0
    while i < len(lines):
        match = SECTION.match(lines[i])
        if match and i + 1 < len(lines) and lines[i + 1].startswith("    "):
            block, i = _indented_block(lines, i + 1)
            out.append(f"**{match.group(1)}**{match.group(2) or ''}:")
            out.append("")
            render = _arguments if match.group(1) == "Args" else _example
            out.extend(render(block))
            out.append("")
        elif lines[i].endswith("::") and i + 1 < len(lines):
            out.append(lines[i][:-1])
            block, i = _indented_block(lines, i + 1)
            out.extend(["", *_fenced(block), ""])
        else:
            out.append(lines[i])
            i += 1
    return "\n".join(out).strip()


def _indented_block(lines: list[str], start: int) -> tuple[list[str], int]:
    """The lines from ``start`` that are indented or blank (blanks around them
    excluded), dedented, and the index after them."""
    while start < len(lines) and not lines[start].strip():
        start += 1
    end = start
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(" ")):
        end += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return textwrap.dedent("\n".join(lines[start:end])).splitlines(), end


def _arguments(block: list[str]) -> list[str]:
    """``name: text`` entries (continuations indented) as a bullet list."""
    items: list[str] = []
    for line in block:
        match = ARGUMENT.match(line)
        if match and not line.startswith(" "):
            items.append(f"- `{match.group(1)}`: {match.group(2)}")
        elif items:
            items[-1] += " " + line.strip()
    return items


def _example(block: list[str]) -> list[str]:
    """Doctest lines fenced as python; text kept; ``::`` blocks fenced."""
    out: list[str] = []
    i = 0
    while i < len(block):
        if block[i].startswith(">>>"):
            start = i
            while i < len(block) and block[i].strip():
                i += 1
            out.extend(_fenced(block[start:i]))
        elif block[i].endswith("::"):
            out.append(block[i][:-1])
            code, i = _indented_block(block, i + 1)
            out.extend(["", *_fenced(code)])
        else:
            out.append(block[i])
            i += 1
    return out


def _fenced(code: list[str]) -> list[str]:
    return ["```python", *code, "```"]


def anchor(name: str) -> str:
    """GitHub's anchor of a ``### `name``` heading: lower case, word characters and
    hyphens kept."""
    return re.sub(r"[^\w\- ]", "", name.lower()).replace(" ", "-")


def contents(names: list[tuple[str, str, Any]]) -> str:
    """One line of links per group."""
    seen: dict[str, int] = {}
    links: dict[str, list[str]] = {}
    for section, name, _ in names:  # headings come in this order
        base = anchor(name)
        count = seen.get(base, 0)
        seen[base] = count + 1
        target = f"{base}-{count}" if count else base  # GitHub numbers repeated anchors
        links.setdefault(section, []).append(f"[`{name}`](#{target})")
    lines = ["Contents:", ""]
    lines += [f"- **{group}**: " + " · ".join(items) for group, items in links.items()]
    return "\n".join(lines) + "\n"


def render() -> str:
    """The whole page."""
    names = list(public_names())
    parts = [INTRO, contents(names)]
    titles = {
        "seqstate": "## `seqstate` (`import seqstate as ss`)",
        "Model": "## `ss.Model` methods",
        "fsm": "## `fsm` (constraint compiler)",
    }
    group = None
    for section, name, obj in names:
        if section != group:
            group = section
            parts.append(titles[section] + "\n")
        parts.append(f"### `{name}`\n")
        parts.append(f"```python\n{signature(name, obj)}\n```\n")
        parts.append(to_markdown(docstring(obj)) + "\n")
    return re.sub(r"\n{3,}", "\n\n", "\n".join(parts)).rstrip() + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/api.md is stale")
    args = parser.parse_args()
    page = render()
    if args.check:
        current = PAGE.read_text() if PAGE.exists() else ""
        if current != page:
            print(f"{PAGE} is out of date: run .venv/bin/python scripts/api_reference.py")
            return 1
        return 0
    PAGE.write_text(page)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
