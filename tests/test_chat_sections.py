"""A question too long for the chat model's context is read in sections first (core/chat/sections.py): readers
take turns over every section, their notes stand in for the question, and read_chat_section reads the original."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from engram.core import Engine
from engram.core.chat.events import ChatProgress
from engram.core.chat.sections import OVERLAP, READER_INSTRUCTIONS, split
from engram.core.chat.toolbox import SECTION
from engram.core.errors import InvalidArgument, ModelError
from engram.core.models.generation import Completion

from .chat_support import ScriptedModel, call


def test_sections_cover_the_text_overlap_and_end_at_a_space() -> None:
    text = " ".join(f"word{i}" for i in range(3000))
    sections = split(text, 1000)
    assert sections[0].start == 0 and sections[-1].end == len(text)
    for a, b in zip(sections, sections[1:]):
        assert b.start == a.end - OVERLAP and a.end - a.start <= 1000
        assert text[a.end - 1] == " ", "a section ends after a space"
    assert split("", 100) == [] and split("short", 100)[0].end == 5


class Reading(ScriptedModel):
    """A scripted chat model that also answers reader prompts: each reader's notes list the sections it read."""

    def __init__(self, script: Sequence[Any], *, context: int, fail_at: int | None = None) -> None:
        super().__init__(script, context=context)
        self.read: list[tuple[int, str]] = []  # (section, the notes the reader had)
        self.fail_at = fail_at

    def reply(self, messages: Sequence[Mapping[str, Any]], tools: Any, *, deadline: float, max_tokens: int,
              on_text: Callable[[str], None] | None = None, stop: Callable[[], bool] | None = None,
              force_call: bool = False) -> Completion:
        if messages[0]["content"] != READER_INSTRUCTIONS:
            return super().reply(messages, tools, deadline=deadline, max_tokens=max_tokens, on_text=on_text,
                                 stop=stop, force_call=force_call)
        asked = messages[1]["content"]
        number = int(re.search(r"Section (\d+) of", asked).group(1))  # type: ignore[union-attr]
        if number == self.fail_at:
            raise ModelError("out of memory")
        had = asked.split("Your notes so far:\n", 1)[1].split("\n\nSection", 1)[0]
        self.read.append((number, had))
        notes = ("" if had == "(none yet)" else had + " ") + f"s{number}"
        found = re.findall(r"the secret number is (\d+)", asked)
        notes += f" (number {found[0]} @{number})" if found else ""
        return Completion(notes, len(notes) // 4, self.prompt_tokens(messages, tools), "stop", 0.01, 0.0)


def _long_question(chars: int = 30_000) -> str:
    filler = "This pasted log line says nothing of interest about the deployment at all. "
    text = filler * (chars // len(filler))
    middle = len(text) // 2
    return "What is the secret number in this log? " + text[:middle] + " the secret number is 4711. " + text[middle:]


def test_a_long_question_is_read_in_sections_by_readers_taking_turns_then_answered(engine: Engine) -> None:
    question = _long_question(70_000)
    events: list[Any] = []

    def answer(messages: list[dict[str, Any]], tools: Any) -> str:
        shown = next(m["content"] for m in messages if m["role"] == "user" and "read in" in m["content"])
        assert "number 4711" in shown and len(shown) < len(question) // 4, "the notes stand in for the question"
        assert SECTION in [t["function"]["name"] for t in tools], "the original can be read exactly"
        return call(SECTION, source="q1", start=question.index("the secret number"), end=question.index("4711") + 4)

    model = Reading([answer, "The secret number is 4711."], context=8192)
    turn = engine.chat(question, model=model, on_event=events.append)
    sections = sorted(n for n, _ in model.read)
    assert sections == list(range(1, turn.sections + 1)) and turn.sections >= 5, "every section, in order"
    by_reader = [had for n, had in model.read if n % 2 == 1]  # reader 1: sections 1, 3, 5, …
    assert by_reader[0] == "(none yet)" and by_reader[1] == "s1" and by_reader[2].startswith("s1 s3"), "its own notes"
    progress = [e.text for e in events if isinstance(e, ChatProgress)]
    assert progress[0] == f"Reading the long text: section 1 of {turn.sections} (reader 1)…"
    assert len(progress) == turn.sections and not any("section 1 of" in n for n in turn.notes)
    assert turn.answer == "The secret number is 4711." and turn.ended == "answered"
    read = next(s for s in turn.steps if s.name == SECTION)
    assert not read.error
    seeded = turn.steps[0]
    assert seeded.name == "search" and len(seeded.arguments["query"]) <= 2000, "the search takes the question's start"
    stored = engine.conversations().load(turn.conversation).messages[0]
    assert stored.content == question.strip() and stored.shown.startswith("What is the secret number"), "kept whole"


def test_a_reader_that_fails_ends_the_reply_saying_where_and_nothing_is_skipped(engine: Engine) -> None:
    model = Reading([], context=8192, fail_at=3)
    turn = engine.chat(_long_question(70_000), model=model)
    assert turn.ended == "context" and turn.fallback and [n for n, _ in model.read] == [1, 2]
    assert any("Reader 1 failed at section 3 of" in n and "out of memory" in n for n in turn.notes)


def test_without_section_analysis_a_long_question_is_refused_or_said_to_be_too_long(engine: Engine) -> None:
    engine.settings.chat.analysis_workers = 0
    with pytest.raises(InvalidArgument, match="section analysis is off"):
        engine.chat("x " * 5000, model=ScriptedModel([]))
    turn = engine.chat("y " * 3500, model=Reading([], context=2048))
    assert turn.ended == "context" and any("chat.analysis_workers is 0" in n for n in turn.notes)
    engine.settings.chat.analysis_workers = 2
    with pytest.raises(InvalidArgument, match="1,000,000"):
        engine.chat("z" * 1_000_001, model=ScriptedModel([]))


def _long_note(engine: Engine) -> str:
    filler = "The runbook repeats that every deploy waits for the review and the green build. "
    text = filler * 60 + "the secret number is 4242. " + filler * 60  # ~10,000 characters
    return engine.call("store", {"content": text, "title": "Long runbook", "project": "ops"}).result.id


def test_a_long_tool_answer_is_read_in_sections_and_its_original_can_be_read(engine: Engine) -> None:
    long_id = _long_note(engine)
    events: list[Any] = []

    def read_it(messages: list[dict[str, Any]], tools: Any) -> str:
        assert SECTION not in [t["function"]["name"] for t in tools], "nothing read in sections yet"
        return call("get_memory", ids=[long_id])

    def check(messages: list[dict[str, Any]], tools: Any) -> str:
        shown = [m["content"] for m in messages if m["role"] == "tool"][-1]
        assert "number 4242" in shown and "read in" in shown and len(shown) < 4000, "the notes stand in for it"
        assert SECTION in [t["function"]["name"] for t in tools], "offered once a long answer was read"
        return call(SECTION, source="r2", start=0, end=200)

    def answer(messages: list[dict[str, Any]], tools: Any) -> str:
        original = [m["content"] for m in messages if m["role"] == "tool"][-1]
        assert long_id in original, "read_chat_section reads the tool's own answer, exactly"
        return f"The secret number is 4242 [{long_id}]."

    model = Reading([read_it, check, answer], context=8192)
    turn = engine.chat("What does the long runbook say the secret number is?", model=model, on_event=events.append)
    assert turn.answer == f"The secret number is 4242 [{long_id}]." and turn.cited == [long_id]
    assert model.read and [n for n, _ in model.read] == list(range(1, len(model.read) + 1)), "every section"
    assert any(n.startswith("The answer of get_memory (") and "sections" in n for n in turn.notes)
    assert any(isinstance(e, ChatProgress) for e in events)
    assert [s.name for s in turn.steps] == ["search", "get_memory", SECTION] and not any(s.error for s in turn.steps)


def test_without_section_analysis_a_long_tool_answer_is_cut_and_readable_exactly(engine: Engine) -> None:
    engine.settings.chat.analysis_workers = 0
    long_id = _long_note(engine)

    def check(messages: list[dict[str, Any]], tools: Any) -> str:
        shown = [m["content"] for m in messages if m["role"] == "tool"][-1]
        assert "— cut at 4,000 of " in shown and 'read_chat_section(source="r2"' in shown
        return call(SECTION, source="r2", start=shown.index("— cut") - 100)

    model = ScriptedModel([call("get_memory", ids=[long_id]), check, f"It is 4242 [{long_id}]."])
    turn = engine.chat("What does the long runbook say the secret number is?", model=model)
    assert turn.cited == [long_id] and [s.error for s in turn.steps] == [False, False, False]
