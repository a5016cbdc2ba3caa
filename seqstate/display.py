"""Text and HTML views of a state: a terminal-sized `repr` and a Jupyter table.

Both only read rows; they never build text longer than their limits, so displaying a
huge state stays cheap.
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

import numpy as np

from seqstate.row import Row
from seqstate.segment import Segment

if TYPE_CHECKING:
    from seqstate.state import SequenceState

KIND_COLOURS = {"prompt": "#dfe7f2", "text": "#f6ecc9"}
GENERATED_COLOURS = ("#cdeccd", "#f5d5dc", "#d9d2f2", "#cfeef0", "#f3dcc4", "#e4efc8")


def preview(text: str, width: int) -> str:
    """`text` shortened to about `width` characters (head ... tail), as a Python literal."""
    if len(text) > width:
        head = width * 2 // 3
        text = text[:head] + "…" + text[len(text) - (width - head - 1) :]
    return repr(text)


def _row_summary(row: Row, width: int) -> str:
    parts = [preview(row.text, width), f"{row.n_tokens} tok"]
    if row.n_tokens and not np.isnan(row.token_logprobs).all():
        parts.append(f"logp {row.logprob:.3f}")
    if row.pending_text:
        parts.append(f"{len(row.pending_text)} pending chars")
    if row.finish_reason:
        parts.append(row.finish_reason)
    return " · ".join(parts)


def row_label(shape: tuple[int, int], b: int, k: int) -> str:
    """The index that picks row `(b, k)` under the shape rule of `s[...]`: `[b, k]` on a
    full grid, `[b]` or `[k]` when one axis has size 1, nothing on a 1x1 state (where
    `s[i:j]` cuts characters)."""
    keys = [str(i) for i, size in zip((b, k), shape) if size > 1]
    return f"[{', '.join(keys)}] " if keys else ""


def state_repr(state: SequenceState, width: int = 60, max_rows: int = 8) -> str:
    """Shape and engine, then one line per row (at most `max_rows`), labelled with the
    index that selects it."""
    lines = [f"SequenceState(shape={state.shape}, engine={type(state.engine).__name__})"]
    samples = state.shape[1]
    for index, row in enumerate(state.rows[:max_rows]):
        b, k = divmod(index, samples)
        lines.append(f"  {row_label(state.shape, b, k)}{_row_summary(row, width)}")
    if len(state.rows) > max_rows:
        lines.append(f"  … {len(state.rows) - max_rows} more rows")
    return "\n".join(lines)


def _colour(segment: Segment, generators: dict[int, str]) -> str:
    if segment.kind != "generated":
        return KIND_COLOURS[segment.kind]
    key = id(segment.origin.generator)
    if key not in generators:
        generators[key] = GENERATED_COLOURS[len(generators) % len(GENERATED_COLOURS)]
    return generators[key]


def _segment_html(segment: Segment, first_token: int, colour: str, budget: int) -> str:
    """Spans for the tokens of `segment` (titles: index, id, log-probability), then its
    pending text, within `budget` characters."""
    label = segment.kind
    if segment.kind == "generated" and segment.origin.generator is not None:
        label += f" by {segment.origin.generator!r}"[:80]
    text, span = segment.text, segment.span
    starts, ends = segment.token_bounds()
    out = []
    for i, (start, end) in enumerate(zip(starts, ends, strict=True)):
        if start >= budget:
            break
        position = segment.t0 + i
        logprob = float(span.logprobs[position])
        title = f"{label} · token {first_token + i} · id {int(span.token_ids[position])}"
        if not math.isnan(logprob):
            title += f" · logp {logprob:.3f}"
        out.append(
            f'<span class="tok" style="background:{colour}" title="{html.escape(title)}">'
            f"{html.escape(text[start : min(end, budget)])}</span>"
        )
    pending_start = int(ends[-1]) if len(ends) else 0
    if pending_start < min(len(text), budget):
        out.append(
            f'<span class="pending" style="background:{colour}" '
            f'title="{html.escape(label)} · pending (not tokenized yet)">'
            f"{html.escape(text[pending_start:budget])}</span>"
        )
    return "".join(out)


def _cell_html(row: Row, generators: dict[int, str], max_chars: int) -> str:
    out = []
    for index, segment in enumerate(row.segments):
        start = int(row.char_starts[index])
        if start >= max_chars:
            break
        colour = _colour(segment, generators)
        first = int(row.token_starts[index])
        out.append(_segment_html(segment, first, colour, max_chars - start))
    if row.n_chars > max_chars:
        out.append(f'<span class="more">… {row.n_chars - max_chars} more characters</span>')
    return "".join(out)


STYLE = (
    "<style>table.seqstate td{vertical-align:top;text-align:left;white-space:pre-wrap;"
    "font-family:monospace}table.seqstate .tok{border-right:1px solid rgba(0,0,0,.18)}"
    "table.seqstate .pending{text-decoration:underline dotted}</style>"
)


def state_html(state: SequenceState, max_rows: int = 16, max_chars: int = 2000) -> str:
    """A batch x samples table; text coloured by segment kind (one colour per generator
    for generated text), token details in hover titles, all user text escaped."""
    batch, samples = state.shape
    shown_b, shown_k = min(batch, max_rows), min(samples, max_rows)
    generators: dict[int, str] = {}
    header = "".join(f"<th>sample {k}</th>" for k in range(shown_k))
    if shown_k < samples:
        header += f"<th>… {samples - shown_k} more</th>"
    body = []
    for b in range(shown_b):
        cells = "".join(
            f"<td>{_cell_html(state.rows[b * samples + k], generators, max_chars)}</td>"
            for k in range(shown_k)
        )
        body.append(f"<tr><th>batch {b}</th>{cells}</tr>")
    if shown_b < batch:
        body.append(f"<tr><th>… {batch - shown_b} more</th></tr>")
    caption = f"SequenceState shape={state.shape} engine={type(state.engine).__name__}"
    return (
        f'{STYLE}<table class="seqstate"><caption>{html.escape(caption)}</caption>'
        f"<tr><th></th>{header}</tr>{''.join(body)}</table>"
    )
