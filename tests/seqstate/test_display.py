"""repr and _repr_html_, checked by rendering."""

from __future__ import annotations

from html.parser import HTMLParser

from seqstate import SequenceState
from tests.seqstate.conftest import ScriptedGenerator


class Collect(HTMLParser):
    """Text, titles and styles of the rendered spans."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.titles: list[str] = []
        self.colours: list[str] = []
        self.cells = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "td":
            self.cells += 1
        if tag == "span":
            self.titles.append(attrs.get("title", ""))
            self.colours.append(attrs.get("style", ""))

    def handle_data(self, data):
        self.text.append(data)


def render(state) -> Collect:
    parser = Collect()
    parser.feed(state._repr_html_())
    return parser


def test_repr_fits_a_terminal(engine):
    s = SequenceState.from_text(engine, ["x" * 500, "short\nline"]).fork(10)
    text = repr(s)
    lines = text.splitlines()
    assert lines[0] == "SequenceState(shape=(2, 10), engine=FakeEngine)"
    assert len(lines) == 10 and lines[-1] == "  … 12 more rows"
    assert all(len(line) < 100 for line in lines)
    assert "'short\\nline'" in repr(s[1, 0])


def test_html_escapes_user_text_and_keeps_it_whole(engine):
    s = SequenceState.from_text(engine, '<b>&"x"</b>') + "<script>"
    html = s._repr_html_()
    assert "<script>" not in html and "<b>" not in html
    parser = render(s)
    assert '<b>&"x"</b><script>' in "".join(parser.text)


def test_html_colours_segments_and_titles_tokens(engine):
    first = ScriptedGenerator(tuple(engine.encode(" one")))
    second = ScriptedGenerator(tuple(engine.encode(" two")))
    s = SequenceState.from_text(engine, "P") + " t" + first + second
    parser = render(s)
    prompt_c, text_c, first_c, second_c = parser.colours
    assert len({prompt_c, text_c, first_c, second_c}) == 4
    assert "token 0 · id" in parser.titles[0]
    assert parser.titles[1].startswith("text")
    assert "logp -0.100" in parser.titles[2]


def test_html_is_a_batch_by_samples_table(engine):
    s = SequenceState.from_text(engine, [["a", "b", "c"], ["d", "e", "f"]])
    assert render(s).cells == 6
    big = SequenceState.from_text(engine, "y" * 10_000)
    html = big._repr_html_()
    assert "… 8000 more characters" in html and len(html) < 200_000


def test_html_marks_pending_text(engine):
    s = SequenceState.from_text(engine, "a") + "b<"
    parser = render(s)
    assert parser.titles[-1] == "text · pending (not tokenized yet)"
    assert "b<" in parser.text
