"""``model.ask``: prompt in, parsed value out, equal to the full form it stands for."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

import seqstate as ss

QUESTION = "Invent a person."
README = Path(__file__).resolve().parents[2] / "README.md"


class Person(BaseModel):
    name: Annotated[str, Field(pattern=r"^[A-Z][a-z]{1,8}$")]
    age: Annotated[int, Field(ge=0, le=120)]


def full_form(model, messages, generator):
    return (model.chat(messages) + generator)["answer"]


def test_a_pydantic_model_gives_an_instance_equal_to_the_full_form(tiny_model):
    person = tiny_model.ask(QUESTION, Person, max_tokens=64)
    assert isinstance(person, Person)
    user = [{"role": "user", "content": QUESTION}]
    assert person == full_form(tiny_model, user, ss.json(Person, name="answer", max_tokens=64))


def test_python_types_go_through_json(tiny_model):
    assert isinstance(tiny_model.ask("A number?", int, max_tokens=24), int)
    flags = tiny_model.ask("Flags?", Annotated[list[bool], Field(max_length=3)], max_tokens=40)
    assert isinstance(flags, list) and all(isinstance(f, bool) for f in flags)
    assert tiny_model.ask("Pick.", Literal["cat", "dog"]) in ("cat", "dog")


def test_a_generator_gives_its_capture_value(tiny_model):
    digits = tiny_model.ask(QUESTION, ss.regex(r"[0-9]{3}"))
    assert re.fullmatch(r"[0-9]{3}", digits)
    pet = tiny_model.ask(QUESTION, ss.choice(["cat", "dog"]))
    user = [{"role": "user", "content": QUESTION}]
    assert pet == full_form(tiny_model, user, ss.choice(["cat", "dog"], name="answer"))
    named = tiny_model.ask(QUESTION, ss.choice(["cat", "dog"], name="pet"))
    assert named == pet


def test_free_text_messages_and_system_prompt(tiny_model):
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": QUESTION},
    ]
    text = tiny_model.ask(messages, max_tokens=5)
    assert isinstance(text, str)
    assert text == tiny_model.ask(QUESTION, system="Be brief.", max_tokens=5)
    assert text == full_form(tiny_model, messages, ss.gen(name="answer", max_tokens=5))


def test_a_batch_of_prompts_gives_a_list(tiny_model):
    values = tiny_model.ask([QUESTION, "Another one."], ss.choice(["a", "b"]))
    assert len(values) == 2 and set(values) <= {"a", "b"}
    assert values[1] == tiny_model.ask("Another one.", ss.choice(["a", "b"]))


def test_without_the_chat_template(tiny_model):
    plain = tiny_model.ask(QUESTION, ss.regex(r"[a-z]{2}"), chat=False)
    assert plain == (tiny_model(QUESTION) + ss.regex(r"[a-z]{2}", name="x"))["x"]
    with pytest.raises(ss.IncompatibleOperand, match="no chat template"):
        tiny_model.ask([{"role": "assistant", "content": "hi"}], chat=False)
    with pytest.raises(ss.IncompatibleOperand, match="takes a str"):
        tiny_model.ask(42)


def test_overrides_reach_the_generator(tiny_model):
    with pytest.raises(ss.TruncatedCapture):
        tiny_model.ask(QUESTION, ss.regex(r"[0-9]{40}"), max_tokens=2)
    beams = tiny_model.ask(QUESTION, ss.regex(r"[0-9]{2}"), sampler=ss.beam(3))
    assert re.fullmatch(r"[0-9]{2}", beams)


def test_the_readme_short_path_runs(tiny_model):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    (block,) = [b for b in blocks if "model.ask(" in b]
    namespace = {"model": tiny_model, "ss": ss, "Annotated": Annotated, "Field": Field}
    exec(compile(block, "README.md", "exec", dont_inherit=True), namespace)
    assert isinstance(namespace["person"], namespace["Person"])
    assert namespace["pet"] in ("cat", "dog")
    assert len(namespace["years"]) == 2 and isinstance(namespace["hello"], str)


@pytest.mark.slow
def test_default_model_answers_with_typed_values(default_model):
    options = ["Paris", "London", "Berlin"]
    question = "What is the capital of France?"
    capital = default_model.ask(question, ss.choice(options))
    user = [{"role": "user", "content": question}]
    assert capital == full_form(default_model, user, ss.choice(options, name="answer"))
    person = default_model.ask(QUESTION, Person)
    assert isinstance(person, Person) and 0 <= person.age <= 120
    assert "Paris" in default_model.ask(question, max_tokens=20)
