"""repr and _repr_html_, checked by rendering and parsing what they produce."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from html.parser import HTMLParser

from seqstate import SequenceState, batch
from seqstate.display import describe, shared_prefix
from tests.seqstate.conftest import ScriptedGenerator


@dataclass(frozen=True, eq=False)
class StoppingGenerator(ScriptedGenerator):
    """A scripted generator with stop strings (the engine's result is cut at one)."""

    stop: tuple[str, ...] = ("\n",)


class Collect(HTMLParser):
    """Text, titles and background colours (of the enclosing span) of the rendered token
    spans, the legend's text, and the tag stack (which must balance)."""

    VOID = {"br", "hr", "img", "meta", "input", "col", "wbr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.titles: list[str] = []
        self.colours: list[str] = []
        self.legend: list[str] = []
        self.stack: list[str] = []
        self.backgrounds: list[str] = []
        self.in_legend = 0
        self.in_style = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag not in self.VOID:
            self.stack.append(tag)
            style = attrs.get("style") or ""
            self.backgrounds.append(style if "background" in style else "")
        if self.in_legend or "ss-legend" in (attrs.get("class") or ""):
            self.in_legend += 1
        self.in_style = tag == "style"
        if tag == "span" and "ss-" in (attrs.get("class") or "") and "title" in attrs:
            self.titles.append(attrs["title"])
            self.colours.append(next(b for b in reversed(self.backgrounds) if b))

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()
        self.backgrounds.pop()
        if self.in_legend:
            self.in_legend -= 1
        self.in_style = False

    def handle_data(self, data):
        if self.in_legend:
            self.legend.append(data)
        elif not self.in_style:
            self.text.append(data)


def render(state) -> Collect:
    parser = Collect()
    parser.feed(state._repr_html_())
    parser.close()
    assert parser.stack == [], "every tag is closed"
    return parser


def generated(engine, text: str, **options) -> ScriptedGenerator:
    return ScriptedGenerator(tuple(engine.encode(text)), **options)


# -- repr -------------------------------------------------------------------------------


def test_repr_fits_a_terminal(engine):
    s = SequenceState.from_text(engine, ["x" * 500, "short\nline"]).fork(10)
    lines = repr(s).splitlines()
    assert lines[0] == "SequenceState(shape=(2, 10), engine=FakeEngine)"
    assert len(lines) == 10 and lines[-1] == "  … 12 more rows"
    assert all(len(line) < 100 for line in lines)
    assert "'short\\nline'" in repr(s[1, 0])


def test_repr_names_captures_and_shows_a_shared_prefix_once(engine):
    base = SequenceState.from_text(engine, "Question: pick one.")
    s = batch([base + generated(engine, " alpha", name="pick"), base + generated(engine, " beta")])
    text = repr(s)
    assert text.splitlines()[0].endswith("captures=['pick'])")
    assert text.count("Question") == 1
    assert "+' alpha'" in text and "+' beta'" in text


def test_sliced_state_does_not_say_stop(engine):
    s = SequenceState.from_text(engine, "Q:") + generated(engine, " one two three")
    assert s.finish_reasons == [["stop"]] and "stop" in repr(s)
    cut = s[:-4]
    assert cut.finish_reasons == [[None]]
    assert "stop" not in repr(cut) and repr(cut).endswith(" · cut")
    assert "stop" not in cut._repr_html_()
    assert s.tokens[:-1].finish_reasons == [[None]]
    assert s[2:].finish_reasons == [["stop"]], "cutting the start keeps how the span ended"


def test_a_span_cut_at_its_stop_string_still_says_stop(engine):
    full = SequenceState.from_text(engine, "Q:") + StoppingGenerator(
        tuple(engine.encode(" yes\nno"))
    )
    stop_at = str(full).index("\n")
    at_stop = full[:stop_at]  # what the engine returns for a span ended by "\n"
    assert at_stop.finish_reasons == [["stop"]]
    assert at_stop[:-1].finish_reasons == [[None]] and repr(at_stop[:-1]).endswith(" · cut")


# -- HTML -------------------------------------------------------------------------------


def test_html_parses_as_xml_whatever_the_text(engine):
    s = SequenceState.from_text(engine, ['<b>&"x"</b>\x01', "y"]) + generated(
        engine, " <i>", name="a&b"
    )
    root = ET.fromstring(s._repr_html_())
    assert root.tag == "div" and root.get("class") == "seqstate"
    html = s._repr_html_()
    assert '<b>&"x"' not in html and "<i>" not in html
    assert '<b>&"x"</b>\\x01' in "".join(render(s).text)


def test_legend_names_captures_kinds_and_how_spans_ended(engine):
    s = (
        SequenceState.from_text(engine, "P")
        + " t"
        + generated(engine, " one", name="first")
        + generated(engine, " two", name="second", finish_reason="length")
    )
    legend = " ".join(render(s).legend)
    for fact in ("prompt", "text", "first", "second", "stop ×1", "length ×1", "complete 1/1"):
        assert fact in legend, fact
    assert "ScriptedGenerator" in legend  # the generator's kind (its class when it has none)


def test_colours_follow_the_capture_not_the_position(engine):
    base = SequenceState.from_text(engine, ["a", "bb"])
    s = base + generated(engine, " x", name="first") + generated(engine, " y", name="second")
    parser = render(s)
    by_text = {}
    for title, colour in zip(parser.titles, parser.colours, strict=True):
        by_text.setdefault(title.rsplit(" · ", 1)[-1], set()).add(colour)
    assert by_text["first"] and len(by_text["first"]) == 1  # same colour in both rows
    assert by_text["first"] != by_text["second"] != by_text["prompt"]


def test_fork_shows_its_shared_prefix_once(engine):
    system = "You are a careful assistant. SYSTEMPROMPT."
    base = SequenceState.from_text(engine, system)
    s = base.fork(3) + SequenceState.from_text(engine, [[" crimson", " olive", " azure"]])
    assert shared_prefix(s.rows).chars == len(system)
    assert shared_prefix(s.rows).tokens == len(engine.encode(system))
    text = "".join(render(s).text)
    assert text.count("SYSTEMPROMPT") == 1
    for colour in ("crimson", "olive", "azure"):
        assert text.count(colour) == 1


def test_no_shared_prefix_for_one_row_or_different_rows(engine):
    s = SequenceState.from_text(engine, ["abc", "xyz"])
    assert shared_prefix(s.rows).chars == 0 and shared_prefix(s[0].rows).chars == 0
    same = SequenceState.from_text(engine, "abc").fork(2) + "d"
    assert shared_prefix(same.rows).chars == 4, "identical rows share everything"
    assert "shared by all" not in s._repr_html_()


def test_hover_titles_carry_token_text_and_logprob(engine):
    s = SequenceState.from_text(engine, "P") + generated(engine, " one", name="n")
    titles = render(s).titles
    assert titles[0].startswith("token 0 · id ") and "'P'" in titles[0]
    assert "' one'" in titles[-1] and "logp -0.100" in titles[-1] and titles[-1].endswith("n")


def test_long_text_wraps_and_huge_states_are_elided(engine):
    big = SequenceState.from_text(engine, "y" * 10_000)
    html = big._repr_html_()
    assert "white-space:pre-wrap" in html and "overflow-wrap:anywhere" in html
    assert "… 8000 more characters" in html and len(html) < 200_000
    many = SequenceState.from_text(engine, "z").fork(100)
    assert "… 84 more rows" in many._repr_html_()


def test_html_marks_pending_text(engine):
    s = SequenceState.from_text(engine, "a") + "b<"
    parser = render(s)
    assert parser.titles[-1].startswith("text · pending text")
    assert "b<" in "".join(parser.text)


def test_a_wide_fork_of_a_long_state_elides_rows(engine):
    long = SequenceState.from_text(engine, " ".join(f"w{i}" for i in range(20_000)))
    s = long.fork(300) + generated(engine, " end", name="e")
    html, text = s._repr_html_(), repr(s)
    assert "… 284 more rows" in html and "… 292 more rows" in text


def test_legend_describes_the_builtin_generators():
    from pydantic import BaseModel

    import seqstate as ss

    class Pet(BaseModel):
        kind: str

    assert describe(ss.regex(r"[0-9]+")) == "regex /[0-9]+/"
    assert describe(ss.choice(["cat", "dog"])) == "choice cat | dog"
    assert describe(ss.json(Pet)) == "json Pet"
    assert describe(ss.json(int)) == "json"
    assert describe(ss.gen()) == "free text"
    assert len(describe(ss.regex("a" * 200))) < 60


def test_a_short_common_start_stays_in_each_row(engine):
    s = SequenceState.from_text(engine, ["The cat says", "The dog says"])
    assert shared_prefix(s.rows).chars == 3
    assert "shared" not in repr(s) and "shared by all" not in s._repr_html_()
    assert "'The cat says'" in repr(s)
