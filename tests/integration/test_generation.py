"""End-to-end generation: every generator kind yields text its constraint accepts,
chained in one sequence, with beams, hooks, banned strings and resumption."""

from __future__ import annotations

import gc
import json
import re
import threading
from collections.abc import Callable

import jsonschema
import lark
import pytest
from pydantic import BaseModel, ConfigDict, Field

import fsm
import seqstate as ss
from backends.decode import logits as decode_logits

ARITHMETIC = r"""
start: expr
expr: expr "+" term | term
term: NUMBER | "(" expr ")"
NUMBER: /[0-9]{1,3}/
"""


class Pet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=10)
    legs: int = Field(ge=0, le=8)


def completed(state: ss.SequenceState) -> bool:
    """Every row ended its span with the constraint complete (end token or forced end)."""
    return all(row.segments[-1].origin.complete for row in state.rows) and all(
        reason in ("stop", "eos") for reasons in state.finish_reasons for reason in reasons
    )


def generated_text(state: ss.SequenceState, prompt: ss.SequenceState) -> str:
    return str(state)[len(str(prompt)) :]


@pytest.mark.parametrize(
    "pattern", [r"(19|20)[0-9]{2}", r"[a-z]{2,5}@[a-z]{2,4}\.(com|org)", r"-?[1-9][0-9]{0,3}"]
)
def test_regex_output_fully_matches(tiny_model, pattern):
    prompt = tiny_model("Value: ")
    state = prompt + ss.regex(pattern, name="v", max_tokens=40)
    assert completed(state)
    assert re.fullmatch(pattern, state["v"])
    assert str(state).startswith("Value:")


def test_choice_gives_one_option(tiny_model):
    options = ["red", "green", "blue", "reddish"]
    state = tiny_model(["A: ", "B: "]) + ss.choice(options, name="c")
    assert state.shape == (2, 1)
    assert all(row.capture("c") in options for row in state.rows)


def test_json_schema_output_validates(tiny_model):
    schema = {
        "type": "object",
        "properties": {
            "id": {"type": "integer", "minimum": 0, "maximum": 99},
            "tag": {"enum": ["a", "b"]},
        },
        "required": ["id", "tag"],
        "additionalProperties": False,
    }
    state = tiny_model("JSON: ") + ss.json(schema, name="obj", max_tokens=64)
    value = state["obj"]
    jsonschema.validate(value, schema)


def test_json_capture_parses_to_pydantic_and_python_types(tiny_model):
    state = tiny_model("Pet: ") + ss.json(Pet, name="pet", max_tokens=80)
    assert completed(state)
    assert isinstance(state["pet"], Pet)
    number = tiny_model("N: ") + ss.json(bool, name="flag")
    assert isinstance(number["flag"], bool)


def test_grammar_output_parses(tiny_model):
    state = tiny_model("Sum: ") + ss.grammar(ARITHMETIC, name="expr", max_tokens=30)
    if completed(state):
        lark.Lark(ARITHMETIC, parser="lalr").parse(state["expr"])
    else:  # ran out of tokens: never passed off as complete
        assert state.rows[0].segments[-1].origin.complete is False


def test_four_generators_chained_in_one_sequence(tiny_model):
    prompt = tiny_model("Record\n")
    state = (
        prompt
        + "Year: "
        + ss.regex(r"1[89][0-9]{2}", name="year")
        + "\nColor: "
        + ss.choice(["red", "blue"], name="color")
        + "\nData: "
        + ss.json(
            {
                "type": "array",
                "items": {"type": "integer", "minimum": 0, "maximum": 99},
                "maxItems": 3,
            },
            name="data",
            max_tokens=40,
        )
        + "\nNote: "
        + ss.gen(max_tokens=5, name="note")
    )
    assert re.fullmatch(r"1[89][0-9]{2}", state["year"])
    assert state["color"] in ("red", "blue")
    assert isinstance(state["data"], list) and len(state["data"]) <= 3
    text = str(state)
    assert text.startswith(str(prompt) + "Year: " + state["year"] + "\nColor: " + state["color"])


def test_token_healing_regenerates_the_last_prompt_token(tiny_model):
    prompt = tiny_model("Name:") + " "
    healed = prompt + ss.regex(r" ?[A-Z][a-z]{2,6}", name="name")
    plain = prompt + ss.regex(r" ?[A-Z][a-z]{2,6}", name="name", heal=False)
    for state in (healed, plain):
        assert str(state).startswith("Name: ")
        assert re.fullmatch(r" ?[A-Z][a-z]{2,6}", state["name"])
    first = healed.rows[0].segments[-1]
    assert first.kind == "generated" and first.text.startswith(" ")  # the space was regenerated
    assert healed.rows[0].segments[-1].origin.healed == " "


def test_length_limit_reports_incomplete(tiny_model):
    state = tiny_model("x") + ss.regex(r"[a-z]{50}", max_tokens=3)
    origin = state.rows[0].segments[-1].origin
    assert state.finish_reasons == [["length"]] and origin.complete is False


def test_beam_one_equals_greedy(tiny_model):
    # Without length normalisation one beam keeps exactly the greedy choice, EOS included.
    prompt = tiny_model("Once upon a time")
    greedy = prompt + ss.gen(max_tokens=12)
    beam = prompt + ss.gen(max_tokens=12, sampler=ss.beam(1, length_penalty=0.0))
    assert str(greedy) == str(beam)


def test_constrained_beam_search_sorted_and_valid(tiny_model):
    prompt = tiny_model("Code: ")
    state = prompt + ss.regex(r"[A-Z]{2}[0-9]{2}", sampler=ss.beam(4), name="code")
    assert state.shape == (1, 4)
    codes = [row.capture("code") for row in state.rows]
    assert all(re.fullmatch(r"[A-Z]{2}[0-9]{2}", code) for code in codes)
    assert len(set(codes)) == 4
    scores = state.logprobs[0]
    assert scores == sorted(scores, reverse=True)


def test_fork_then_sample_is_reproducible_and_shares_the_prompt(tiny_model):
    prompt = tiny_model("The quick brown fox " * 20)
    before = tiny_model.kv_stats()["tokens_computed"]
    forks = prompt.fork(4) + ss.gen(max_tokens=6, sampler=ss.sample(seed=7))
    first_run = tiny_model.kv_stats()["tokens_computed"] - before
    again = prompt.fork(4) + ss.gen(max_tokens=6, sampler=ss.sample(seed=7))
    assert forks.texts == again.texts
    assert len(set(forks.texts[0])) > 1  # the forks sampled different continuations
    assert first_run <= len(prompt.rows[0].token_ids) + 4 * 6  # prompt computed once


def test_hook_that_bans_the_top_token_changes_every_choice(tiny_model):
    prompt = tiny_model("Hello")
    greedy = prompt + ss.gen(max_tokens=6)
    seen: list[tuple[int, int]] = []

    def ban_first_draw(event: ss.TokenEvent):
        seen.append((event.step, event.token))
        if [step for step, _ in seen].count(event.step) == 1:  # the first draw at this step
            return ss.Resample()
        return None

    hooked = prompt + ss.gen(max_tokens=6, hooks=[ban_first_draw])
    assert str(hooked) != str(greedy)
    first_greedy = greedy.rows[0].token_ids[len(prompt.rows[0].token_ids)]
    first_hooked = hooked.rows[0].token_ids[len(prompt.rows[0].token_ids)]
    assert first_hooked != first_greedy
    # every redraw was shown to the hook too: two draws per generated token
    assert [step for step, _ in seen] == [s for s in range(6) for _ in (0, 1)]


def test_replace_hook_forces_a_token(tiny_model):
    prompt = tiny_model("Answer:")
    target = tiny_model.encode(" yes")[0]
    # heal=False: with healing the first token must start with the prompt's last token
    state = prompt + ss.gen(max_tokens=1, heal=False, hooks=[lambda event: ss.Replace(target)])
    assert str(state).endswith(" yes")


def test_banned_string_never_appears(tiny_model):
    prompt = tiny_model("Letters: ")
    pattern = r"[ab]{8}"
    free = prompt.fork(20) + ss.regex(pattern, sampler=ss.sample(seed=3), name="x")
    assert sum("ab" in row.capture("x") for row in free.rows) >= 10  # it would appear
    banned = prompt.fork(20) + ss.regex(pattern, banned=["ab"], sampler=ss.sample(seed=3), name="x")
    values = [row.capture("x") for row in banned.rows]
    assert all(re.fullmatch(pattern, v) and "ab" not in v for v in values)


def test_rewind_then_resume_continues_the_constraint(tiny_model):
    prompt = tiny_model("Digits: ")
    pattern = r"[0-9]{6}-[a-z]{3}"
    full = prompt + ss.regex(pattern, name="d")
    cut = full[0, 0, : len(str(prompt)) + 4]  # inside the generated span
    assert cut.resume_points[0][0] is not None
    resumed = cut.resume()
    assert re.fullmatch(pattern, resumed["d"])
    assert resumed["d"].startswith(full["d"][:4])


def test_stream_yields_chunks_that_add_up(tiny_model):
    prompt = tiny_model("Stream:")
    stream = tiny_model.stream(prompt, ss.gen(max_tokens=8, stop="\n\n"))
    pieces = [chunks[0][0] for chunks in stream]
    assert len(pieces) > 1
    assert "".join(pieces) == str(stream.state)[len(str(prompt)) :]


def test_stream_of_a_chained_program_equals_the_sum(tiny_model):
    prompt = tiny_model(["A ", "B "])
    parts = ("Year: ", ss.regex(r"19[0-9]{2}", name="y"), "; pick ", ss.choice(["x", "y"]))
    stream = tiny_model.stream(prompt, *parts)
    pieces = [["", ""]]
    for chunks in stream:
        pieces.append([pieces[-1][b] + chunks[b][0] for b in range(2)])
    expected = prompt + parts[0] + parts[1] + parts[2] + parts[3]
    assert stream.state.texts == expected.texts
    assert [prompt.texts[b][0] + pieces[-1][b] for b in range(2)] == [t[0] for t in expected.texts]
    assert "Year: " in pieces[1][0] and pieces[1] == ["Year: ", "Year: "]


def test_stream_of_a_beam_search_yields_every_beam_at_the_end(tiny_model):
    prompt = tiny_model("Beam")
    stream = tiny_model.stream(prompt, ss.gen(max_tokens=4, sampler=ss.beam(3), heal=False))
    chunks = list(stream)
    assert stream.state.shape == (1, 3)
    assert chunks == [[[text[len("Beam") :] for text in stream.state.texts[0]]]]


def test_dropping_states_returns_every_block(tiny_model):
    def run():
        state = tiny_model("abc " * 30).fork(3) + ss.gen(max_tokens=5)
        assert tiny_model.kv_stats()["blocks_used"] > 0
        return state.texts

    run()
    gc.collect()
    assert tiny_model.kv_stats()["blocks_used"] == 0


@pytest.mark.slow
def test_default_model_year_demo_path(default_model):
    state = default_model("The year is ") + ss.regex(r"(19|20)[0-9]{2}")
    assert re.fullmatch(r"The year is (19|20)[0-9]{2}", str(state))


@pytest.mark.slow
def test_default_model_json_and_pydantic(default_model):
    prompt = default_model.chat([{"role": "user", "content": "Give me a pet as JSON."}])
    state = prompt + ss.json(Pet, name="pet", max_tokens=60)
    assert isinstance(state["pet"], Pet)
    jsonschema.validate(json.loads(generated_text(state, prompt)), Pet.model_json_schema())


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    ["Here is a list of fruits: apple, banana,", "The history of the Roman Empire begins with"],
)
def test_default_model_beam4_matches_transformers(default_model, text):
    import torch

    prompt = default_model(text)
    # heal=False: transformers continues the prompt's own tokens, without token healing
    ours = prompt + ss.gen(max_tokens=8, heal=False, sampler=ss.beam(4, length_penalty=0.0))
    ids = torch.tensor([list(prompt.rows[0].token_ids)])
    theirs = default_model.hf_model.generate(
        ids,
        num_beams=4,
        length_penalty=0.0,
        max_new_tokens=8,
        do_sample=False,
        early_stopping=False,
    )
    expected = default_model.tokenizer.decode(theirs[0, ids.shape[1] :], skip_special_tokens=True)
    assert "eos" not in ours.finish_reasons[0], "the comparison needs no beam to reach EOS"
    assert ours.texts[0][0] == str(prompt) + expected


@pytest.mark.slow
def test_default_model_healed_stop_string_does_not_match_the_prompt(default_model):
    state = default_model("Hello.") + ss.gen(stop=".", max_tokens=10)
    assert str(state).startswith("Hello.") and len(str(state)) > len("Hello.")


@pytest.mark.slow
def test_default_model_banned_newline_after_a_chat_prompt(default_model):
    # the chat template ends in "\n", which healing regenerates: it must not count
    prompt = default_model.chat([{"role": "user", "content": "Say hello in three words."}])
    state = prompt + ss.gen(banned="\n", max_tokens=10)
    new = generated_text(state, prompt)
    assert new and "\n" not in new


@pytest.mark.slow
def test_default_model_healing_spends_no_budget(default_model):
    prompt = default_model("The capital of France is")
    state = prompt + ss.gen(max_tokens=1)
    assert len(str(state)) > len(str(prompt))
    assert state.finish_reasons == [["length"]]


@pytest.mark.slow
def test_default_model_beam4_ranks_like_transformers_with_end_tokens(default_model):
    import torch

    prompt = default_model.chat([{"role": "user", "content": "Reply with one word: yes or no?"}])
    ours = prompt + ss.gen(max_tokens=12, heal=False, sampler=ss.beam(4))
    ids = torch.tensor([list(prompt.rows[0].token_ids)])
    theirs = default_model.hf_model.generate(
        ids,
        attention_mask=torch.ones_like(ids),
        num_beams=4,
        num_return_sequences=4,
        max_new_tokens=12,
        do_sample=False,
        length_penalty=1.0,
        early_stopping=False,
    )
    texts = [
        str(prompt) + default_model.tokenizer.decode(t[ids.shape[1] :], skip_special_tokens=True)
        for t in theirs
    ]
    assert "eos" in ours.finish_reasons[0], "the comparison needs hypotheses that ended"
    assert ours.texts[0] == texts


def test_progress_callable_and_forced_token_share(tiny_model):
    seen = []
    tiny_model.progress = lambda done, total: seen.append((done, total))
    try:
        before = tiny_model.generation_stats()
        state = tiny_model("Item: ") + ss.json(
            {
                "type": "object",
                "properties": {"flag": {"type": "boolean"}},
                "required": ["flag"],
                "additionalProperties": False,
            },
            max_tokens=20,
        )
    finally:
        tiny_model.progress = False
    assert seen and seen[-1] == (20, 20) and all(total == 20 for _, total in seen)
    after = tiny_model.generation_stats()
    assert after["tokens_forced"] > before["tokens_forced"]  # '{"flag":' is forced
    assert 0 < after["forced_share"] < 1
    assert completed(state)


def _drive_with_own_forward(model, state, generator, steps):
    """A caller's own loop: full forward without cache, then ss.step on its logits."""
    import torch

    for _ in range(steps):
        ids = torch.tensor([list(row.token_ids) for row in state.rows])
        with torch.no_grad():
            logits = model.hf_model(ids).logits[:, -1]
        state = ss.step(state, logits, generator)
    return state


def test_external_logits_step_equals_the_models_loop(tiny_model):
    prompt = tiny_model("External")
    generator = ss.gen(max_tokens=6, heal=False)
    ours = prompt + generator
    driven = _drive_with_own_forward(tiny_model, prompt, generator, 6)
    assert str(driven) == str(ours)
    assert driven.finish_reasons == [["length"]]


def test_external_logits_step_keeps_the_constraint(tiny_model):
    prompt = tiny_model("Code")
    generator = ss.regex(r"[0-9]{3}", name="code", heal=False)
    driven = _drive_with_own_forward(tiny_model, prompt, generator, 5)
    assert re.fullmatch(r"[0-9]{3}", driven["code"])
    assert completed(driven)


class _WatchedIndex:
    """A token index whose ``bitmask`` calls ``seen(state)`` first; everything else is
    the index's own. The compiled ``TokenIndex`` (``fsm.native``) takes no patched
    methods, so the tests watch the index the decode step builds masks of instead."""

    def __init__(self, index: fsm.TokenIndex, seen: Callable[[int], None]) -> None:
        self._index = index
        self._seen = seen

    def bitmask(self, state: int) -> object:
        self._seen(state)
        return self._index.bitmask(state)

    def __getattr__(self, name: str) -> object:
        return getattr(self._index, name)


def watch_mask_builds(patch: pytest.MonkeyPatch, seen: Callable[[int], None]) -> None:
    """Calls ``seen(state)`` in the thread that builds each row a decode step reads
    (``backends.decode.logits.next_masks``: the mask worker with ``overlap_masks``)."""
    real = decode_logits.active_index

    def watched(prepared: object, state: int | None) -> object:
        index = real(prepared, state)  # type: ignore[arg-type]
        return None if index is None else _WatchedIndex(index, seen)

    patch.setattr(decode_logits, "active_index", watched)


@pytest.mark.parametrize("sampler", [ss.greedy(), ss.sample(seed=5), ss.beam(3)])
def test_masks_built_during_the_forward_pass_change_no_output(tiny_model, sampler, monkeypatch):
    """With ``overlap_masks`` the next step's rows are built in the model's mask worker
    while the forward pass runs; the output is the same as when they are built before
    it."""
    builders: set[str] = set()

    def seen(state: int) -> None:
        builders.add(threading.current_thread().name.split("_")[0])

    watch_mask_builds(monkeypatch, seen)
    prompt = tiny_model(["Pet: ", "Animal: "])
    runs = {}
    try:
        for overlap in (True, False):
            tiny_model.overlap_masks = overlap
            tiny_model.indexes.clear()  # every row cold, in both runs
            runs[overlap] = prompt + ss.json(Pet, max_tokens=40, sampler=sampler)
            assert ("seqstate-masks" in builders) == overlap
            builders.clear()
    finally:
        tiny_model.overlap_masks = None
    assert runs[True].texts == runs[False].texts
    assert runs[True].logprobs == runs[False].logprobs


def test_an_error_building_masks_in_the_worker_reaches_the_caller(tiny_model, monkeypatch):
    """A typed error raised while the worker builds a mask (here: the second row it
    builds) comes out of the generation call, and the model is usable afterwards."""
    in_worker = []

    def seen(state: int) -> None:
        if threading.current_thread().name.startswith("seqstate-masks"):
            in_worker.append(state)
            if len(in_worker) == 2:
                raise fsm.ConstraintTooLarge("row too large")

    prompt = tiny_model("Pet: ")
    gc.collect()
    blocks = tiny_model.kv_stats()["blocks_used"]
    tiny_model.overlap_masks = True
    try:
        with monkeypatch.context() as patch:
            watch_mask_builds(patch, seen)
            with pytest.raises(fsm.ConstraintTooLarge):
                prompt + ss.json(Pet, max_tokens=20)
        assert len(in_worker) == 2
        after = prompt + ss.json(Pet, max_tokens=20)
    finally:
        tiny_model.overlap_masks = None
    assert after.texts[0][0].startswith("Pet: ")
    del after
    gc.collect()
    assert tiny_model.kv_stats()["blocks_used"] == blocks  # the failed call's blocks are back


@pytest.mark.parametrize("sampler", [ss.greedy(), ss.sample(seed=5), ss.beam(3)])
def test_restricted_head_changes_no_output(tiny_model, sampler):
    """Logits of the allowed tokens alone (the default) give the same tokens and
    log-probabilities as the full head."""
    prompt = tiny_model(["Pet: ", "Animal: "])
    generator = ss.json(Pet, max_tokens=40, sampler=sampler)
    runs = {}
    try:
        for restrict in (True, False):
            tiny_model.restrict_head = restrict
            runs[restrict] = prompt + generator
    finally:
        tiny_model.restrict_head = True
    assert runs[True].texts == runs[False].texts
    ours, full = runs[True].logprobs, runs[False].logprobs
    assert [[pytest.approx(v, abs=1e-4) for v in row] for row in full] == ours
