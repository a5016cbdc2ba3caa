"""Text and HTML views of a state's rows: a terminal-sized `repr` and a static HTML view.

Both take the rows and the shape (not the state), so this module depends on rows and
segments only. Text is coloured by where it came from (prompt, appended text, or the
generator / capture that wrote it), explained by a legend; a batch or a fork shows the
prefix its rows share once, then each row's continuation. The HTML is plain markup with
inline styles (no script, no widget), so it survives notebook export. Both views stop at
their limits (rows, characters) and say what they left out, so a huge state is cheap to
display.
"""

from __future__ import annotations

import html
import math
import re
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

from seqstate.row import Row, ends_where_generated
from seqstate.segment import Origin, Segment

Shape = tuple[int, int]

INPUT_COLOURS = {"prompt": "#e3e8f0", "text": "#f6ecc9"}
INPUT_NOTES = {"prompt": "the state's starting text", "text": "appended with +"}
GENERATED_COLOURS = (
    "#b9e4b9",
    "#f5c7d1",
    "#cfc5f2",
    "#b8e6ea",
    "#f3d2ae",
    "#dbeab4",
    "#f0c6ee",
    "#c9dcf5",
)
TEXT_STYLE = (
    "white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word;"
    "font-family:ui-monospace,monospace;font-size:12px;line-height:1.6;color:#111;"
    "max-width:100%"
)
STYLE = (
    "<style>.seqstate .ss-tok{box-shadow:inset -1px 0 rgba(0,0,0,.22)}"
    ".seqstate .ss-pending{text-decoration:underline dotted}"
    "</style>"
)
MIN_SHARED_CHARS = 16
"""A shared prefix shorter than this is shown in each row rather than on its own."""
CELL_STYLE = "text-align:left;vertical-align:top;padding:2px 6px"
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def shorten(text: str, width: int) -> str:
    """`text` cut to about `width` characters: its head, "…", its tail."""
    if len(text) <= width:
        return text
    head = width * 2 // 3
    return text[:head] + "…" + text[len(text) - (width - head - 1) :]


def preview(text: str, width: int) -> str:
    """`text` shortened to about `width` characters, as a Python literal."""
    return repr(shorten(text, width))


def row_label(shape: Shape, b: int, k: int) -> str:
    """The index that picks row `(b, k)` under the shape rule of `s[...]`: `[b, k]` on a
    full grid, `[b]` or `[k]` when one axis has size 1, nothing on a 1x1 state (where
    `s[i:j]` cuts characters)."""
    keys = [str(i) for i, size in zip((b, k), shape, strict=True) if size > 1]
    return f"[{', '.join(keys)}]" if keys else ""


def finish_label(row: Row) -> str | None:
    """How the row's last generated span ended: its finish reason, ``"cut"`` when a slice
    took its end away (``state.resume()`` continues it), None without generated text."""
    for segment in reversed(row.segments):
        if segment.kind == "generated":
            return row.finish_reason or ("cut" if not ends_where_generated(segment) else None)
    return None


@dataclass(frozen=True)
class Prefix:
    """The leading characters and tokens every row has in common."""

    chars: int = 0
    tokens: int = 0


def _common_tokens(segment: Segment, pieces: Sequence[Segment]) -> Prefix:
    """The leading whole tokens of `segment` that every piece also starts with (same ids,
    same text)."""
    ids, n = segment.token_ids, segment.n_tokens
    for piece in pieces:
        other = piece.token_ids
        m = min(n, len(other))
        differ = np.flatnonzero(ids[:m] != other[:m])
        n = int(differ[0]) if len(differ) else m
        if n == 0:
            return Prefix()
    end = int(segment.token_bounds()[1][n - 1])
    text = segment.text[:end]
    if all(int(p.token_bounds()[1][n - 1]) == end and p.text.startswith(text) for p in pieces):
        return Prefix(end, n)
    return Prefix()


def shared_prefix(rows: Sequence[Row]) -> Prefix:
    """What a batch or a fork has in common before its rows differ: the leading segments
    they share (compared by identity, so a fork costs O(segments)), then the whole tokens
    of the next segment they agree on. Nothing for a single row."""
    first = rows[0] if rows else Row()
    others = [row for row in rows[1:] if row is not first]
    if len(rows) < 2 or not others:
        return Prefix(first.n_chars, first.n_tokens) if len(rows) > 1 else Prefix()
    chars = tokens = 0
    for index, segment in enumerate(first.segments):
        if any(len(row.segments) <= index for row in others):
            break
        pieces = [row.segments[index] for row in others]
        if all(piece is segment for piece in pieces):
            common = Prefix(segment.n_chars, segment.n_tokens)
        else:
            common = _common_tokens(segment, pieces)
        chars, tokens = chars + common.chars, tokens + common.tokens
        if common.chars < segment.n_chars or any(p.n_chars != common.chars for p in pieces):
            break
    return Prefix(chars, tokens)


def _shown(shape: Shape, n_rows: int, max_rows: int) -> list[tuple[str, int]]:
    """(label, row index) of the first `max_rows` rows, row-major."""
    samples = shape[1]
    return [
        (row_label(shape, *divmod(index, samples)), index) for index in range(min(n_rows, max_rows))
    ]


# -- repr ---------------------------------------------------------------------------------


def _row_summary(row: Row, start: int, width: int) -> str:
    text = preview(row.text[start:], width)
    return " · ".join(["+" + text if start else text, *_facts(row, pending=True)])


def _facts(row: Row, *, pending: bool) -> list[str]:
    """Token count, log-probability, (pending characters,) finish label of a row."""
    facts = [f"{row.n_tokens} tok"]
    if row.n_tokens and not np.isnan(row.token_logprobs).all():
        facts.append(f"logp {row.logprob:.3f}")
    if pending and row.pending_text:
        facts.append(f"{len(row.pending_text)} pending chars")
    finish = finish_label(row)
    if finish:
        facts.append(finish)
    return facts


def state_repr(
    rows: Sequence[Row], shape: Shape, engine_name: str, width: int = 60, max_rows: int = 8
) -> str:
    """Shape, engine and capture names; the shared prefix of several rows once; then one
    line per row (at most `max_rows`), labelled with the index that selects it."""
    shown = _shown(shape, len(rows), max_rows)
    names = list(dict.fromkeys(n for _, i in shown for n in rows[i].capture_names()))
    captures = f", captures={names}" if names else ""
    lines = [f"SequenceState(shape={shape}, engine={engine_name}{captures})"]
    prefix = shared_prefix(rows)
    start = prefix.chars if prefix.chars >= MIN_SHARED_CHARS else 0
    if start:
        lines.append(f"  shared: {preview(rows[0].text[:start], width)} · {prefix.tokens} tok")
    for label, index in shown:
        lines.append(f"  {label + ' ' if label else ''}{_row_summary(rows[index], start, width)}")
    if len(rows) > len(shown):
        lines.append(f"  … {len(rows) - len(shown)} more rows")
    return "\n".join(lines)


# -- HTML ---------------------------------------------------------------------------------


def _source(origin: Origin) -> Hashable:
    """What a colour stands for: the input kind, the capture name, or the generator."""
    if origin.kind != "generated":
        return origin.kind
    if origin.capture is not None:
        return ("capture", origin.capture)
    try:
        hash(origin.generator)
        return ("generator", origin.generator)
    except TypeError:
        return ("generator", id(origin.generator))


def describe(generator: object) -> str:
    """A short description of a generator: its kind and what constrains it (``regex
    /[0-9]+/``, ``choice cat | dog``, ``json Person``, ``free text``)."""
    kind = str(getattr(generator, "kind", None) or type(generator).__name__)
    constraint = getattr(generator, "constraint", None)
    if constraint is None:
        return "free text" if kind == "gen" else kind
    pattern = getattr(constraint, "pattern", None)
    options = getattr(constraint, "options", None)
    schema = getattr(constraint, "schema", None)
    if isinstance(pattern, str):
        detail = f"/{pattern}/"
    elif options:
        detail = " | ".join(options)
    else:
        detail = str(schema.get("title", "")) if isinstance(schema, dict) else ""
    return f"{kind} {shorten(detail, 40)}".strip()


@dataclass
class _Entry:
    """One legend line: a colour, what it stands for, and how its spans ended."""

    colour: str
    name: str
    kind: str
    finishes: Counter[str] = field(default_factory=Counter)
    complete: int = 0
    spans: int = 0


@dataclass
class _Legend:
    """Colours assigned by source in order of first appearance, with per-span stats."""

    entries: dict[Hashable, _Entry] = field(default_factory=dict)
    seen: set[int] = field(default_factory=set)

    def colour(self, origin: Origin) -> str:
        key = _source(origin)
        entry = self.entries.get(key)
        if entry is None:
            entry = self._new(origin)
            self.entries[key] = entry
        return entry.colour

    def _new(self, origin: Origin) -> _Entry:
        if origin.kind != "generated":
            return _Entry(INPUT_COLOURS[origin.kind], origin.kind, INPUT_NOTES[origin.kind])
        n_generated = sum(1 for key in self.entries if isinstance(key, tuple))
        colour = GENERATED_COLOURS[n_generated % len(GENERATED_COLOURS)]
        name = origin.capture if origin.capture is not None else "(unnamed)"
        return _Entry(colour, name, describe(origin.generator))

    def count(self, row: Row) -> None:
        """Record how each generated span of `row` ended (once per span)."""
        last_piece: dict[int, Segment] = {}
        for segment in row.segments:
            if segment.kind == "generated":
                last_piece[id(segment.origin)] = segment
        for key, segment in last_piece.items():
            if key in self.seen:
                continue
            self.seen.add(key)
            origin = segment.origin
            entry = self.entries.setdefault(_source(origin), self._new(origin))
            intact = ends_where_generated(segment)
            entry.finishes[(origin.finish_reason or "running") if intact else "cut"] += 1
            entry.complete += bool(origin.complete and intact)
            entry.spans += 1

    def html(self) -> str:
        items = []
        for entry in self.entries.values():
            facts = [entry.kind]
            if entry.spans:
                facts.append(", ".join(f"{r} ×{n}" for r, n in entry.finishes.items()))
                facts.append(f"complete {entry.complete}/{entry.spans}")
            items.append(
                '<span class="ss-key" style="margin-right:14px;white-space:nowrap">'
                f'<span style="background:{entry.colour};border:1px solid #999;'
                'display:inline-block;width:10px;height:10px;margin-right:4px"></span>'
                f"<b>{_escape(entry.name)}</b> {_escape(' · '.join(facts))}</span> "
            )
        return f'<div class="ss-legend" style="margin:4px 0">{"".join(items)}</div>'


def _escape(text: str) -> str:
    """HTML-escaped text with control characters spelled out (the view stays valid XML)."""
    return html.escape(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text))


def _token_title(segment: Segment, local: int, first_token: int, name: str) -> str:
    span, position = segment.span, segment.t0 + local
    start = span.token_start(position)
    text = span.text[start : int(span.token_ends[position])]
    title = f"token {first_token + local} · id {int(span.token_ids[position])} · {text!r}"
    logprob = float(span.logprobs[position])
    if not math.isnan(logprob):
        title += f" · logp {logprob:.3f}"
    return f"{title} · {name}"


def _segment_html(
    segment: Segment, first_token: int, lo: int, hi: int, colour: str, name: str
) -> str:
    """Characters `[lo, hi)` of `segment` (relative offsets) in one span of its colour:
    a span per token inside (hover: index, id, text, log-probability, source), then its
    pending text."""
    text = segment.text
    starts, ends = segment.token_bounds()
    out = []
    local = int(np.searchsorted(ends, lo, "right"))
    while local < len(ends) and starts[local] < hi:
        title = _token_title(segment, local, first_token, name)
        piece = text[max(int(starts[local]), lo) : min(int(ends[local]), hi)]
        out.append(f'<span class="ss-tok" title="{_escape(title)}">{_escape(piece)}</span>')
        local += 1
    pending = max(int(ends[-1]) if len(ends) else 0, lo)
    if pending < hi:
        out.append(
            '<span class="ss-pending" '
            f'title="{_escape(name)} · pending text (tokenized at the next forward pass)">'
            f"{_escape(text[pending:hi])}</span>"
        )
    return f'<span style="background:{colour}">{"".join(out)}</span>'


def _text_html(row: Row, start: int, end: int, max_chars: int, legend: _Legend) -> str:
    """Characters `[start, end)` of `row` (at most `max_chars`), coloured by source."""
    stop = min(end, start + max_chars)
    out = []
    index = max(int(np.searchsorted(row.char_starts, start, "right")) - 1, 0)
    while index < len(row.segments) and int(row.char_starts[index]) < stop:
        segment, seg_start = row.segments[index], int(row.char_starts[index])
        if int(row.char_starts[index + 1]) > start:
            colour = legend.colour(segment.origin)
            name = legend.entries[_source(segment.origin)].name
            lo, hi = max(start - seg_start, 0), stop - seg_start
            first = int(row.token_starts[index])
            out.append(_segment_html(segment, first, lo, min(hi, segment.n_chars), colour, name))
        index += 1
    if end > stop:
        out.append(f'<span style="color:#777"> … {end - stop} more characters</span>')
    return f'<div class="ss-text" style="{TEXT_STYLE}">{"".join(out)}</div>'


def _row_facts(row: Row) -> str:
    return " · ".join(_facts(row, pending=False))


def _rows_html(
    rows: Sequence[Row], shown: list[tuple[str, int]], start: int, max_chars: int, legend: _Legend
) -> str:
    cells = []
    for label, index in shown:
        row = rows[index]
        text = _text_html(row, start, row.n_chars, max_chars, legend)
        cells.append(
            f'<tr><th style="{CELL_STYLE}">{_escape(label)}</th><td style="{CELL_STYLE}">{text}</td>'
            f'<td style="{CELL_STYLE};white-space:nowrap;color:#555">'
            f"{_escape(_row_facts(row))}</td></tr>"
        )
    return f'<table class="ss-rows" style="border-collapse:collapse">{"".join(cells)}</table>'


def state_html(
    rows: Sequence[Row],
    shape: Shape,
    engine_name: str,
    max_rows: int = 16,
    max_chars: int = 2000,
    max_row_chars: int = 500,
) -> str:
    """The rows as static HTML: a header, a legend (colour, capture name, generator kind,
    how its spans ended, how many are complete), the prefix shared by all rows once,
    then each row's continuation: at most `max_chars` characters of a single row or of
    the shared prefix, `max_rows` rows of `max_row_chars` characters each."""
    legend = _Legend()
    shown = _shown(shape, len(rows), max_rows)
    start = shared_prefix(rows).chars
    start = start if start >= MIN_SHARED_CHARS else 0
    body = []
    if len(rows) == 1:
        body.append(_text_html(rows[0], 0, rows[0].n_chars, max_chars, legend))
        body.append(f'<div style="color:#555">{_escape(_row_facts(rows[0]))}</div>')
    else:
        if start:
            body.append(f'<div style="color:#555">shared by all {len(rows)} rows:</div>')
            body.append(_text_html(rows[0], 0, start, max_chars, legend))
            body.append('<div style="color:#555">then each row:</div>')
        body.append(_rows_html(rows, shown, start, max_row_chars, legend))
    if len(rows) > len(shown):
        body.append(f'<div style="color:#777">… {len(rows) - len(shown)} more rows</div>')
    for _, index in shown:
        legend.count(rows[index])
    header = f"SequenceState · shape {shape} · engine {engine_name}"
    return (
        f'<div class="seqstate">{STYLE}<div style="font-weight:bold">{_escape(header)}</div>'
        f"{legend.html()}{''.join(body)}</div>"
    )
