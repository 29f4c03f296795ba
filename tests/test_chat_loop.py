"""The chat loop at the model seam (a scripted model), on a real engine and workspace: research, budgets,
repeated reads, typed arguments, the final answer and its fallback, history fitting, conversations."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

from engram.core import Engine
from engram.core.catalog import TOOLS
from engram.core.chat.conversation import Conversation, ConversationStore
from engram.core.chat.events import ChatAnswer, ChatNote, ChatText, ToolFinished, ToolStarted
from engram.core.chat.history import fit_messages
from engram.core.chat.stream import CallFilter
from engram.core.chat.toolbox import CHAT_READS, HISTORY, tool_specs
from engram.core.errors import InvalidArgument, ModelError, NotFound

from .chat_support import ScriptedModel, ScriptedReply, call, first_id, uncited

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def stocked(engine: Engine) -> Engine:
    engine.call("store", {"content": "We deploy on Tuesdays after the review.", "title": "Deploy day",
                          "project": "ops"})
    engine.call("store", {"content": "Rollbacks need the on-call lead's approval.", "title": "Rollback approval",
                          "project": "ops"})
    engine.call("store", {"content": "The staging database is refreshed every Monday.", "title": "Staging",
                          "project": "data"})
    return engine


def test_research_then_an_answer_that_cites_what_it_read(stocked: Engine) -> None:
    model = ScriptedModel([
        "Let me look." + call("search", query="when do we deploy"),
        lambda messages, tools: f"We deploy on Tuesdays, after the review [{first_id(messages)}].",
    ])
    events: list[Any] = []
    turn = stocked.chat("When do we deploy?", model=model, on_event=events.append)
    assert turn.ended == "answered" and not turn.fallback
    assert turn.answer.startswith("We deploy on Tuesdays") and len(turn.cited) == 1 and not turn.unread_citations
    assert [(s.name, s.arguments, s.error) for s in turn.steps] == [
        ("search", {"query": "When do we deploy?"}, False),  # research starts with a search of the question
        ("search", {"query": "when do we deploy"}, False)]
    assert turn.rounds == 2 and turn.tokens > 0
    shown = "".join(e.text for e in events if isinstance(e, ChatText))
    assert "Let me look." in shown and "<tool_call>" not in shown, "the call's markup is never streamed"
    assert [type(e) for e in events if not isinstance(e, ChatText)] == [ToolStarted, ToolFinished] * 2 + [ChatAnswer]
    # The model saw the tools' schemas, without workspace or max_chars.
    tools = model.calls[0][1]
    assert [t["function"]["name"] for t in tools] == [*CHAT_READS], "no earlier messages: no conversation_history"
    search = next(t["function"]["parameters"] for t in tools if t["function"]["name"] == "search")
    assert "workspace" not in search["properties"] and "max_chars" not in search["properties"]
    # The conversation is kept in the workspace: the question, the call, its result, the answer.
    kept = stocked.conversations().load(turn.conversation)
    assert [m.role for m in kept.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert kept.messages[1].tool_calls[0]["name"] == "search" and kept.messages[2].tool_name == "search"
    # The seeded search is rendered as the model's own first call: the first reply sees its result.
    first_prompt = model.calls[0][0]
    assert [m["role"] for m in first_prompt] == ["system", "user", "assistant", "tool"]
    assert first_prompt[2]["tool_calls"][0]["function"] == {"name": "search",
                                                            "arguments": {"query": "When do we deploy?"}}
    assert kept.title == "When do we deploy?"


def test_a_repeated_read_is_not_run_again_and_research_ends_without_progress(stocked: Engine,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    stocked.settings.chat.research_no_progress_rounds = 2
    ran: list[str] = []
    real_call = stocked.call
    monkeypatch.setattr(stocked, "call", lambda tool, args=None: ran.append(tool) or real_call(tool, args))
    again = call("search", query="When do we deploy?")  # the seeded search, asked again
    model = ScriptedModel([again, again, "Tuesdays."])
    turn = stocked.chat("When do we deploy?", model=model)
    assert ran == ["search"], "the same read with the same arguments runs once"
    assert [s.repeated_of for s in turn.steps] == [None, 1, 1]
    assert turn.ended == "no_progress" and turn.answer == "Tuesdays."
    repeated = [m for m in stocked.conversations().load(turn.conversation).messages if m.role == "tool"][1]
    assert repeated.content.startswith("Same call as step 1")
    assert 'Searched so far: "When do we deploy?"' in repeated.content and "get_memory" in repeated.content
    seeded = [m for m in stocked.conversations().load(turn.conversation).messages if m.role == "tool"][0]
    assert "That was a search of your whole question" in seeded.content, "what a new search would be, at once"
    # The final answer is asked without tools and after being told to answer now.
    final_messages, final_tools = model.calls[-1]
    assert final_tools is None and final_messages[-1]["role"] == "user" and "Answer my question now" in \
        final_messages[-1]["content"]


def test_a_wrong_argument_type_goes_back_to_the_model_as_a_tool_error(stocked: Engine) -> None:
    model = ScriptedModel([call("search", query="deploy", limit="many"), call("search", query="deploy", limit="3"),
                           *uncited("Done.")])
    turn = stocked.chat("deploy?", model=model)
    assert [s.error for s in turn.steps] == [False, True, False]
    tool_texts = [m["content"] for m in model.calls[1][0] if m["role"] == "tool"]
    assert tool_texts[1].startswith("Error:") and "limit" in tool_texts[1], tool_texts
    assert turn.steps[2].arguments == {"query": "deploy", "limit": "3"}, "recorded as written"


def test_an_unreadable_call_and_an_unknown_tool_are_told_to_the_model(stocked: Engine) -> None:
    model = ScriptedModel(["<tool_call>\n{\"name\": \"search\", \"arguments\": {\n</tool_call>",
                           call("delete", ids=["x"]), *uncited("I cannot.")])
    turn = stocked.chat("forget everything", model=model)
    seen = model.calls[2][0]
    assert any(m["role"] == "user" and m["content"].startswith("Your tool call could not be read") for m in seen)
    assert turn.steps[1].name == "delete" and turn.steps[1].error
    assert "there is no tool 'delete'" in [m["content"] for m in seen if m["role"] == "tool"][-1]
    assert stocked.call("status", {}).result.memories == 3, "no write tool is offered to chat"


def test_the_token_budget_and_the_deadline_end_research(stocked: Engine) -> None:
    stocked.settings.chat.research_token_budget = 4096
    model = ScriptedModel([call("search", query="deploy"), "Tuesdays [none]."])
    turn = stocked.chat("deploy?", model=model)
    # Each call reserves its prompt (the schemas and the first search's result are ~2,000 tokens here) and the
    # longest reply (1,024) first: the first round fits in 4,096, a second would not, so research ends before it.
    first = model.prompt_tokens(model.calls[0][0], model.calls[0][1])
    assert first + 1024 <= 4096 < 2 * first + 1024
    assert turn.ended == "tokens" and turn.rounds == 1 and len(model.calls) == 2, "one round, then the answer"
    assert turn.unread_citations == [] and turn.cited == []
    stocked.settings.chat.research_token_budget = 1024
    turn = stocked.chat("deploy?", model=ScriptedModel(["Tuesdays."]))
    assert turn.ended == "tokens" and turn.rounds == 0, "no room for even one call: straight to the answer"

    stocked.settings.chat.research_token_budget = 65536
    clock = iter(range(0, 10_000, 200))
    from engram.core.chat import loop

    conversation = stocked.conversations().new("x")
    model = ScriptedModel([call("search", query="deploy"), call("search", query="review"), "Tuesdays."])
    from engram.core.chat.toolbox import ChatToolbox

    toolbox = ChatToolbox(lambda t, a: (lambda o: (o.text, o.result))(stocked.call(t, a)), conversation,
                          max_chars=4000)
    turn = loop.run_turn(conversation, "deploy?", model=model, toolbox=toolbox,
                         budgets=loop.Budgets(research_timeout=300.0), clock=lambda: float(next(clock)))
    assert turn.ended == "timeout" and turn.rounds == 1


def test_when_the_answer_fails_the_reply_is_the_evidence_labelled_by_id(stocked: Engine) -> None:
    model = ScriptedModel([call("search", query="rollback approval"), "",  # an empty reply is no answer
                           ])
    stocked.settings.chat.research_no_progress_rounds = 1
    model.script = [call("search", query="who approves rollbacks?"), ModelError("the model crashed")]
    turn = stocked.chat("who approves rollbacks?", model=model)
    assert turn.fallback and turn.answer.startswith("I could not write an answer in time")
    assert "on-call lead" in turn.answer and turn.cited and f"[{turn.cited[0]}]" in turn.answer
    assert any("could not answer: the model crashed" in n for n in turn.notes)


def test_a_bare_json_call_outside_the_format_is_sent_back_not_taken_as_the_answer(stocked: Engine) -> None:
    model = ScriptedModel(['{"name": "search", "arguments": {"query": "review"}}', *uncited("Tuesdays.")])
    turn = stocked.chat("deploy?", model=model)
    assert turn.answer == "Tuesdays."
    told = [m["content"] for m in model.calls[1][0] if m["role"] == "user"][-1]
    assert told.startswith("Your tool call could not be read: the reply is a tool call but not written as one")
    assert "<tool_call>" in told


@pytest.mark.parametrize("reply", [
    '{"name": "get_memory", "arguments": {"ids": ["abc"]}}\n{"name": "neighbors", "arguments": {"id": "abc"}}\n'
    '{"name": "graph_scope", "arguments": {"project":',  # one per line, the last cut off (seen from Qwen2.5 0.5B)
    '[{"name": "search", "arguments": {"query": "review"}}, {"name": "status", "arguments": {}}]',
    '```json\n{"name": "search", "arguments": {"query": "review"}}\n```',
])
def test_calls_written_as_bare_json_lines_or_an_array_are_no_answer(stocked: Engine, reply: str) -> None:
    model = ScriptedModel([reply, *uncited("Tuesdays.")])
    turn = stocked.chat("deploy?", model=model)
    assert turn.answer == "Tuesdays.", "the calls went back to the model as a problem, not out as the answer"
    told = [m["content"] for m in model.calls[1][0] if m["role"] == "user"][-1]
    assert "the reply is a tool call but not written as one" in told


@pytest.mark.parametrize("reply", ['{"name": "Ada", "age": 3}', '{"name": "search"} and then I would say more',
                                   '{"note": 1}\n{"name": "search", "arguments": {}}'])
def test_json_that_is_not_only_calls_is_text(stocked: Engine, reply: str) -> None:
    turn = stocked.chat("deploy?", model=ScriptedModel(uncited(reply)))
    assert turn.answer == reply


def test_stop_ends_research_and_the_reply_is_what_was_found(stocked: Engine) -> None:
    asked: list[int] = []

    def stop() -> bool:
        return len(asked) > 0

    model = ScriptedModel([lambda m, t: asked.append(1) or call("search", query="review"), "never asked"])
    turn = stocked.chat("deploy?", model=model, stop=stop)
    assert turn.ended == "stopped" and turn.fallback and len(model.calls) == 1
    assert "We deploy on Tuesdays" in turn.answer, "the reply is what research found"


def test_a_model_without_tool_calls_chats_and_says_which_setting_to_change(stocked: Engine) -> None:
    model = ScriptedModel(["I have no tools, but hello."], tool_format="none")
    model.format_note = "No tool-call format reads back the template's call; set chat.tool_format by hand."
    turn = stocked.chat("hello", model=model)
    assert turn.ended == "no_tools" and turn.answer == "I have no tools, but hello."
    assert "chat.tool_format" in turn.notes[0] and model.calls[0][1] is None


def test_history_fitting_drops_earlier_research_before_earlier_exchanges(tmp_path: Path) -> None:
    talk = Conversation("t", "t", "now")
    for turn in (1, 2):
        talk.add("user", f"question {turn}", turn=turn)
        talk.add("assistant", "", turn=turn, research=True,
                 tool_calls=[{"id": f"call0000{turn}", "name": "search", "arguments": {"query": "q"}}])
        talk.add("tool", "x" * 2000, turn=turn, research=True, tool_call_id=f"call0000{turn}", tool_name="search")
        talk.add("assistant", f"answer {turn}", turn=turn)
    talk.add("user", "question 3", turn=3)
    for message in talk.messages:
        message.at = ""  # no time after each question: the sizes below are the texts' own
    model = ScriptedModel([], context=100_000)
    everything = fit_messages(talk, 3, model, None, "rules", reserve=0)
    assert everything is not None and len(everything) == 1 + 9
    size = model.prompt_tokens(everything, None)
    one_result = 2000 // 4
    fitted = fit_messages(talk, 3, ScriptedModel([], context=size - one_result + 50), None, "rules", reserve=0)
    assert fitted is not None
    assert [m["content"][-10:] for m in fitted if m["role"] != "system"] == [
        "question 1", "answer 1", "question 2", "", "x" * 10, "answer 2", "question 3"]
    assert fitted[1]["content"].startswith("(2 earlier messages of this conversation (2–3) are not shown")
    # Without any research the three exchanges are ~96 tokens; the oldest exchange goes next, then the other.
    smaller = fit_messages(talk, 3, ScriptedModel([], context=90), None, "rules", reserve=0)
    assert smaller is not None and [m["content"][-10:] for m in smaller if m["role"] != "system"] == [
        "question 2", "answer 2", "question 3"]
    smallest = fit_messages(talk, 3, ScriptedModel([], context=60), None, "rules", reserve=0)
    assert smallest is not None and [m["content"][-10:] for m in smallest if m["role"] != "system"] == ["question 3"]
    assert "(8 earlier messages of this conversation (1–8) are not shown" in smallest[1]["content"]
    assert fit_messages(talk, 3, ScriptedModel([], context=5), None, "rules", reserve=0) is None


def test_conversation_history_reads_earlier_messages_by_number_and_words(stocked: Engine) -> None:
    first = ScriptedModel(uncited("Staging is refreshed on Mondays, as I recall."))
    turn = stocked.chat("When is staging refreshed?", model=first, conversation="ops-chat")
    assert turn.conversation == "ops-chat"
    second = ScriptedModel([call(HISTORY, query="staging refreshed"), call(HISTORY, number=4), *uncited("Mondays.")])
    stocked.chat("What did you say before?", model=second, conversation="ops-chat")
    assert HISTORY not in [t["function"]["name"] for t in first.calls[0][1]], "nothing earlier to read yet"
    assert HISTORY in [t["function"]["name"] for t in second.calls[0][1]]
    results = [m["content"] for m in second.calls[2][0] if m["role"] == "tool" and m["name"] == HISTORY]
    found = results[0].splitlines()
    assert found[0].startswith("Message 1 (user") and found[1].startswith("Message 3 (tool, search"), \
        "tool results are searched too"
    assert found[2].startswith("Message 4 (assistant") and len(found) == 4, "this turn's own messages are not"
    assert results[1].startswith("Message 4 (assistant") and "Mondays, as I recall" in results[1]
    assert len(stocked.conversations().load("ops-chat").messages) == 4 + 8


def test_conversation_history_shows_up_to_three_places_a_long_message_matches(stocked: Engine) -> None:
    pasted = " ".join(["filler text of a long paste"] * 40 + ["the invoice retry limit is three"]
                      + ["more filler"] * 60 + ["a second invoice note"] + ["tail"] * 60
                      + ["third invoice mention"] + ["end"] * 60 + ["fourth invoice here"])
    stocked.chat(pasted, model=ScriptedModel(uncited("Noted.")), conversation="paste")
    second = ScriptedModel([call(HISTORY, query="invoice"), *uncited("Three.")])
    stocked.chat("What was the retry limit I pasted?", model=second, conversation="paste")
    (result,) = [m["content"] for m in second.calls[1][0] if m["role"] == "tool" and m["name"] == HISTORY]
    first_line = result.splitlines()[0]
    assert first_line.startswith("Message 1 (user, ") and f"{len(pasted):,} characters" in first_line
    assert first_line.count("invoice") == 3 and "retry limit is three" in first_line and "fourth" not in first_line


def test_an_answer_that_cites_nothing_read_is_asked_again_with_the_memories_listed(stocked: Engine) -> None:
    model = ScriptedModel(["We deploy on Tuesdays.",
                           lambda messages, tools: f"We deploy on Tuesdays [{first_id(messages)}]."])
    events: list[Any] = []
    turn = stocked.chat("When do we deploy?", model=model, on_event=events.append)
    assert turn.ended == "uncited" and not turn.fallback and len(turn.cited) == 1
    assert turn.answer == f"We deploy on Tuesdays [{turn.cited[0]}]."
    closing, tools = model.calls[1]
    asked = closing[-1]["content"]
    assert tools is None and closing[-1]["role"] == "user"
    assert asked.startswith("You answered this without citing the memories it comes from:\nWe deploy on Tuesdays.")
    assert "Answer my question now" in asked and f"[{turn.cited[0]}] " in asked, "the memories read, by id"
    notes = [e.text for e in events if isinstance(e, ChatNote)]
    assert notes == ["That answer cites none of the memories read; the model is asked once more, with them listed "
                     "by id."]
    kept = stocked.conversations().load(turn.conversation)
    assert [m.content for m in kept.messages if m.role == "assistant" and not m.research] == [turn.answer], \
        "the draft is not kept as a second answer"
    # An id written bare is a citation too: no second request.
    bare = ScriptedModel([lambda messages, tools: f"Tuesdays, says {first_id(messages)}."])
    assert stocked.chat("When do we deploy?", model=bare).ended == "answered" and len(bare.calls) == 1


def test_when_asking_again_fails_the_uncited_answer_stands(stocked: Engine) -> None:
    model = ScriptedModel(["We deploy on Tuesdays.", ModelError("the model crashed")])
    turn = stocked.chat("When do we deploy?", model=model)
    assert turn.answer == "We deploy on Tuesdays." and not turn.fallback and turn.cited == []
    assert any("could not answer: the model crashed" in n for n in turn.notes)


def test_conversations_are_listed_renamed_and_deleted(stocked: Engine) -> None:
    stocked.chat("first question", model=ScriptedModel(uncited("one")), conversation="a")
    stocked.chat("second question", model=ScriptedModel(uncited("two")), conversation="b")
    store = stocked.conversations()
    assert [c.id for c in store.list()] == ["b", "a"]
    assert store.rename("a", "  Deploys  ").title == "Deploys"
    assert store.delete("a") and not store.delete("a")
    with pytest.raises(NotFound):
        store.load("a")
    with pytest.raises(InvalidArgument, match="not a conversation name"):
        store.load("../settings")
    with pytest.raises(InvalidArgument, match="empty"):
        stocked.chat("   ", model=ScriptedModel([]))


def test_a_conversation_file_is_replaced_whole(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path / "chats")
    talk = store.new("q", "c1")
    talk.add("user", "q", turn=1)
    store.save(talk)
    (tmp_path / "chats" / "broken.json").write_text("{not json")
    assert [c.id for c in store.list()] == ["c1"], "a damaged file is left out, the others are listed"
    assert oct((tmp_path / "chats" / "c1.json").stat().st_mode & 0o777) == "0o600"
    assert not list((tmp_path / "chats").glob(".*.tmp")), "no temporary file is left behind"


def test_the_stream_shows_text_before_a_call_and_never_the_call() -> None:
    shown: list[str] = []
    f = CallFilter("hermes", shown.append)
    for piece in ["Looking", " it up.<to", "ol_call>\n{\"name\":", " \"search\"}</tool_call>"]:
        f.feed(piece)
    assert "".join(shown) == "Looking it up."
    shown.clear()
    f = CallFilter("hermes", shown.append)
    for piece in ["a <", "b> c"]:
        f.feed(piece)
    assert "".join(shown) == "a <b> c", "a held piece that is no marker is shown after all"
    shown.clear()
    f = CallFilter("llama3", shown.append)
    for piece in ["  ", "{\"name\": \"search\", \"parameters\": {}}"]:
        f.feed(piece)
    assert shown == []


def test_every_read_tool_a_result_suggests_is_one_chat_can_call() -> None:
    reads = {name for name, spec in TOOLS.items() if not spec.write and name != "recall"}
    suggested: set[str] = set()
    for module in ("core/tools/formats.py", "core/tools/render.py", "core/recall/render.py", "core/tools/reads.py",
                   "core/tools/descriptions.py"):
        for node in ast.walk(ast.parse((ROOT / module).read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                suggested |= {name for name in reads if name in node.value.replace("(", " ").split()
                              or f"{name}(" in node.value or f" {name} " in f" {node.value} "}
    assert suggested >= {"get_memory", "file_chunks", "neighbors", "list_sources"}, suggested
    # device_context describes the computer and review lists what to tidy: neither is research
    assert suggested - {"device_context", "review"} <= set(CHAT_READS), suggested - set(CHAT_READS)
    assert json.dumps(tool_specs())  # every schema is plain JSON


def _room_for_two_exchanges() -> int:
    """A context that holds the instructions, the tools, this turn and about two of the long exchanges."""
    base = ScriptedModel([]).prompt_tokens([{"role": "system", "content": "x" * 600},
                                            {"role": "user", "content": "x" * 600}], tool_specs())
    return base + 256 + 900


def _long_conversation(engine: Engine, turns: int) -> str:
    """A conversation of ``turns`` exchanges, each long enough that a small context holds only a few."""
    for n in range(1, turns + 1):
        secret = "sk-ant-" + "a1b2c3d4" * 4 if n == 1 else ""
        engine.chat(f"Question {n} about deploys {secret} {'and more words ' * 40}",
                    model=ScriptedModel(uncited(f"Answer {n}: {'we deploy carefully ' * 30}")), conversation="long")
    return "long"


def test_exchanges_that_no_longer_fit_are_summarized_redacted_and_shown_as_the_summary(stocked: Engine) -> None:
    name = _long_conversation(stocked, 4)
    asked: list[Any] = []

    def summary(messages: list[dict[str, Any]], tools: Any) -> str:
        asked.append(messages)
        return "- (1–6) Asked about deploys; answered: carefully."

    small = ScriptedModel([summary, *uncited("Carefully.")], context=_room_for_two_exchanges())
    stocked.settings.chat.max_tokens = 256
    turn = stocked.chat("And question 5?", model=small, conversation=name)
    prompt = asked[0][-1]["content"]
    assert "[REDACTED:anthropic-key]" in prompt and "sk-ant-" not in prompt, "what the summary reads is redacted"
    assert asked[0][0]["content"].startswith("You summarize the start of a conversation")
    kept = stocked.conversations().load(name)
    assert kept.summary.startswith("- (1–6)") and kept.summary_upto > 0
    research_prompt = small.calls[1][0]
    first_user = next(m for m in research_prompt if m["role"] == "user")["content"]
    assert first_user.startswith("(Summary of earlier messages") and "carefully" in first_user
    assert any("were summarized" in n for n in turn.notes)
    assert turn.notes[0].startswith("Summarizing the earlier conversation (messages 1–"), "said before it starts"


def _summarizer(*bullets: str, cut: bool = False) -> Any:
    """A script step that answers a summary request with ``bullets`` (cut off by its length, with ``cut``)."""
    def reply(messages: list[dict[str, Any]], tools: Any) -> Any:
        assert messages[0]["content"].startswith("You summarize"), "a summary request"
        numbers = [int(n) for n in re.findall(r"^\[(\d+)\]", messages[-1]["content"], re.M)]
        reply.asked.append(numbers)  # type: ignore[attr-defined]
        text = "\n".join(bullets)
        return ScriptedReply(text, stopped="length") if cut else text

    reply.asked = []  # type: ignore[attr-defined]
    return reply


def test_the_summary_covers_enough_to_wait_several_turns_and_keeps_its_newest_bullets(stocked: Engine) -> None:
    name = _long_conversation(stocked, 6)
    stocked.settings.chat.max_tokens = 256
    talk = stocked.conversations().load(name)
    talk.summary = "\n".join(f"- (old {n}) " + "an older bullet " * 12 for n in range(12))  # near 2,000 already
    stocked.conversations().save(talk)
    first = _summarizer("- (1–4) Asked about deploys twice; answered: carefully.",
                        "- (5–8) Asked again; answered the same.")
    model = ScriptedModel([first, *uncited("Carefully.")], context=_room_for_two_exchanges())
    stocked.chat("And question 7?", model=model, conversation=name)
    (numbers,) = first.asked
    assert numbers[0] == 1 and numbers[-1] >= 8, "more than the one exchange left out: the next summary waits"
    kept = stocked.conversations().load(name)
    assert kept.summary.endswith("- (5–8) Asked again; answered the same.") and len(kept.summary) <= 2000
    assert "(old 0)" not in kept.summary, "the oldest bullets went to make room"
    again = ScriptedModel(uncited("Still carefully."), context=_room_for_two_exchanges())
    turn = stocked.chat("And question 8?", model=again, conversation=name)
    assert not any("ummariz" in n for n in turn.notes), "the next turn needs no summary"


def test_a_summary_cut_by_its_length_keeps_its_whole_bullets_and_covers_what_they_name(stocked: Engine) -> None:
    name = _long_conversation(stocked, 4)
    stocked.settings.chat.max_tokens = 256
    cut = _summarizer("- (1–2) Asked about deploys; answered: carefully.", "- (3–4) Asked ag", cut=True)
    turn = stocked.chat("And question 5?", model=ScriptedModel([cut, *uncited("Carefully.")], context=_room_for_two_exchanges()),
                        conversation=name)
    kept = stocked.conversations().load(name)
    assert kept.summary == "- (1–2) Asked about deploys; answered: carefully." and kept.summary_upto == 2
    assert any("cut at its length" in n for n in turn.notes)


def test_a_summary_is_outside_research_budgets(stocked: Engine) -> None:
    """A summary that took 200 s and wrote ~5,000 tokens leaves research its whole time and token budget."""
    name = _long_conversation(stocked, 4)
    clock = iter(range(0, 100_000, 100))  # every reading of the clock is 100 s later
    from engram.core.chat import loop
    from engram.core.chat.toolbox import ChatToolbox

    talk = stocked.conversations().load(name)
    model = ScriptedModel([_summarizer("- (1–8) Asked about deploys; answered: " + "carefully " * 2000),
                           call("search", query="deploys"), *uncited("Carefully.")], context=_room_for_two_exchanges())
    toolbox = ChatToolbox(lambda t, a: (lambda o: (o.text, o.result))(stocked.call(t, a)), talk, max_chars=4000)
    turn = loop.run_turn(talk, "And question 5?", model=model, toolbox=toolbox,
                         budgets=loop.Budgets(research_timeout=250.0, token_budget=4096, max_tokens=256),
                         clock=lambda: float(next(clock)))
    # Charged to research, the summary's tokens alone would have used its 4,096 up before the first round.
    assert turn.tokens > 5000 and turn.rounds >= 1, "research ran after the summary, with its whole budget"
    assert any("summarized in 100 s" in n or "summarized in 200 s" in n for n in turn.notes)
