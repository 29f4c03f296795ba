"""One turn of a chat: research with the read tools under budgets, then an answer that cites what was read.

Research starts with a search of the question itself, written into the conversation as the model's own
first call in its own format (so a small model sees evidence before its first word, and an example of a
call as its template writes one). Then it runs in rounds: the model replies, its tool calls run (a call repeated with the same arguments
in this turn is not run again: the model is pointed to the earlier result), and the results go back to it.
Research ends when the model answers without calling a tool, after ``no_progress_rounds`` rounds in a row
that found no memory it had not seen, at the research deadline, once its calls have read and written the
token budget, when the prompt no longer fits the context, or when the person stops it. Then, unless the
model has answered already, a tools-free answer gets its own deadline and output room; if that fails, the
reply is the evidence found, each excerpt labelled with its memory id.

Every event (streamed text, each tool call and its result, notes) goes to ``on_event`` as it happens,
from the thread the turn runs on.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ModelError
from ..models.generation import Completion
from ..settings import ChatSettings
from ..tools.reads import QUERY_MAX_CHARS
from .conversation import Conversation, Message
from .events import (
    ChatAnswer,
    ChatEvent,
    ChatNote,
    ChatProgress,
    ChatText,
    ChatTurn,
    Ended,
    ToolFinished,
    ToolStarted,
    ToolStep,
)
from .history import fit, fit_messages
from .model import ChatModel
from .sections import EXCERPT_CHARS, Analysis, AnalysisFailed, analyze
from .stream import CallFilter
from .summary import due, summarize, to_cover
from .toolbox import CHAT_READS, HISTORY, SECTION, ChatToolbox, ToolOutcome, evidence_ids, tool_specs
from .toolcalls import ParsedReply, ToolCall, call_shape, parse_reply

INSTRUCTIONS = (
    "You are Engram's chat. You answer the user's questions from their own memory: notes, conversations and "
    "files kept on this computer. Research with the tools first: search, then read what looks relevant "
    "(get_memory, file_chunks, neighbors). When you know enough, answer briefly and cite each memory you "
    "use by its id in square brackets, e.g. [c5fa596cf60c]. If the memory does not hold the answer, say so. When "
    "the user refers to something said earlier in this conversation that you do not see, read it with "
    "conversation_history rather than search.")
ANSWER_NOW = ("Answer my question now from what the tools returned, without calling any tool. Cite each memory "
              "you use by its id in square brackets. If nothing found answers it, say so.")
FALLBACK_ITEMS = 8
FALLBACK_CHARS = 300
#: The memories read that the closing request lists by id, each with the start of what it says (a small model
#: copies an id near the end of its prompt far more often than one it read thousands of tokens earlier).
READ_LIST_ITEMS = 12
READ_LIST_CHARS = 160
_CITATION = re.compile(r"\[([0-9a-f]{12})\]")
_CALL_START = re.compile(r'^\{\s*"name"\s*:')
_BARE_ID = re.compile(r"(?<![0-9a-zA-Z\[])([0-9a-f]{12})(?![0-9a-zA-Z\]])")
_RESULT_BLOCK = re.compile(r"^\[(?:\d+|\+)\] ([0-9a-f]{12}) ·[^\n]*\n?(.*?)(?=^\[(?:\d+|\+)\] |^— |\Z)", re.M | re.S)

@dataclass(frozen=True)
class Budgets:
    no_progress_rounds: int = 4
    research_timeout: float = 300.0
    token_budget: int = 65536
    answer_timeout: float = 120.0
    max_tokens: int = 1024
    analysis_workers: int = 2

    @classmethod
    def from_settings(cls, chat: ChatSettings) -> Budgets:
        return cls(chat.research_no_progress_rounds, chat.research_timeout_sec, chat.research_token_budget,
                   chat.answer_timeout_sec, chat.max_tokens, chat.analysis_workers)


def run_turn(conversation: Conversation, question: str, *, model: ChatModel, toolbox: ChatToolbox,
             budgets: Budgets, on_event: Callable[[ChatEvent], None] | None = None,
             stop: Callable[[], bool] | None = None, clock: Callable[[], float] = time.monotonic) -> ChatTurn:
    """Answer ``question`` in ``conversation`` (its messages are appended to it; the caller saves it)."""
    return _Turn(conversation, model, toolbox, budgets, on_event or (lambda _e: None), stop or (lambda: False),
                 clock).run(question)


class _Turn:
    def __init__(self, conversation: Conversation, model: ChatModel, toolbox: ChatToolbox, budgets: Budgets,
                 emit: Callable[[ChatEvent], None], stop: Callable[[], bool], clock: Callable[[], float]) -> None:
        self.conversation = conversation
        self.model = model
        self.toolbox = toolbox
        self.budgets = budgets
        self.emit = emit
        self.stop = stop
        self.clock = clock
        self.number = conversation.turns + 1
        self.result = ChatTurn(conversation.id)
        self.seen: dict[str, None] = {}  # memory ids read in this turn, in order
        self.done: dict[str, int] = {}  # a call's name and arguments -> the step that ran it
        self.step = 0
        self.question = ""
        self.spent = 0  # tokens of research's model calls: what its budget counts (a summary's are not)
        self.draft = ""  # an answer research wrote without citing what it read: kept if asking again fails
        self.deadline = 0.0  # research's

    def note(self, text: str) -> None:
        self.result.notes.append(text)
        self.emit(ChatNote(text))

    def run(self, question: str) -> ChatTurn:
        started = self.clock()
        self.question = question
        asked = self.conversation.add("user", question, turn=self.number)
        # conversation_history is offered once there are earlier messages to read.
        tools = tool_specs(history=self.number > 1) if self.model.tool_format != "none" else None
        deadline = self.clock() + self.budgets.research_timeout
        if self._too_long(tools):
            if not self._read_in_sections(asked, deadline):
                self._answered(self._evidence_reply(), fallback=True)
                self.result.seconds = round(self.clock() - started, 3)
                return self.result
            if tools is not None:
                tools = tool_specs(history=self.number > 1, sections=True)
        self._summarize_if_due(tools)
        if tools is None:
            self.result.ended = "no_tools"
            self.note(f"This model chats without reading your memory: {self.model.format_note}")
        else:
            # Reading a long question in sections is research's first part and shares its deadline; a summary is
            # outside research, so without sections its deadline starts now.
            self._research(tools, deadline if self.result.sections else self.clock() + self.budgets.research_timeout)
        if not self.result.answer:
            self._answer()
        self.result.seconds = round(self.clock() - started, 3)
        self.result.evidence = list(self.seen)
        return self.result

    def _summarize_if_due(self, tools: list[dict[str, Any]] | None) -> None:
        model = self.model
        fitted = fit(self.conversation, self.number, model, tools, INSTRUCTIONS, reserve=self.budgets.max_tokens)
        if fitted is None or not due(self.conversation, fitted.hidden) or self.stop():
            return
        current = [m.as_template() for m in self._this_turn()]
        room = model.context - self.budgets.max_tokens - model.prompt_tokens(
            [{"role": "system", "content": INSTRUCTIONS}, *current], tools)
        todo = to_cover(self.conversation, self.number, fitted.hidden, room,
                        lambda ms: model.prompt_tokens([m.as_template() for m in ms], None))
        if not todo:
            return
        span = f"{todo[0].number}–{todo[-1].number}"
        self.note(f"Summarizing the earlier conversation (messages {span}), which no longer fits…")
        started = self.clock()
        try:
            done = summarize(self.conversation, todo, model, clock=self.clock)
        except ModelError as exc:
            self.note(f"Earlier messages {span} could not be summarized ({exc.message}); they are left out, and "
                      "summarizing is tried again later.")
            return
        self.result.tokens += done.tokens  # reported with the turn; research's budgets start after it
        cut = " (the summary was cut at its length; the rest waits for the next one)" if done.cut else ""
        self.note(f"Earlier messages {done.first}–{done.last} were summarized in {self.clock() - started:.0f} s{cut}.")

    def _too_long(self, tools: list[dict[str, Any]] | None) -> bool:
        """Whether the question would take more than half of the room the context leaves research beside the
        instructions and the tool definitions."""
        fixed = self.model.prompt_tokens([{"role": "system", "content": INSTRUCTIONS}], tools)
        alone = self.model.prompt_tokens([{"role": "system", "content": INSTRUCTIONS},
                                          self._this_turn()[0].as_template()], tools)
        return alone - fixed > (self.model.context - self.budgets.max_tokens - fixed) // 2

    def _read_in_sections(self, asked: Message, deadline: float) -> bool:
        """Read the question in sections (``sections.analyze``) and let the model read the readers' notes in its
        place; False (with the reason noted, the turn ended) when that is off or fails."""
        if self.budgets.analysis_workers == 0:
            self.result.ended = "context"
            self.note(f"The question ({len(asked.content):,} characters) is too long for the model's context, and "
                      "section analysis is off (chat.analysis_workers is 0).")
            return False
        try:
            found = self._analyze(asked.content, f"q{self.number}", asked.content, deadline)
        except AnalysisFailed as exc:
            self.result.ended = "stopped" if self.stop() else "context"
            self.note(f"The long question could not be read: {exc.message}")
            return False
        self.result.sections, self.result.analysis_seconds = len(found.sections), found.seconds
        asked.shown = found.report(asked.content[:EXCERPT_CHARS])
        self.note(f"The question ({found.chars:,} characters) was read in {len(found.sections)} sections in "
                  f"{found.seconds:.0f} s.")
        if self.model.prompt_tokens([{"role": "system", "content": INSTRUCTIONS}, asked.as_template()],
                                    None) > self.model.context - self.budgets.max_tokens:
            self.result.ended = "context"
            self.note("The readers' notes on the long question do not fit the model's context; nothing was "
                      "answered from them.")
            return False
        return True

    # ----------------------------------------------------------- research

    def _research(self, tools: list[dict[str, Any]], deadline: float) -> None:
        self.deadline = deadline
        quiet = 0 if self._run_calls("", [ToolCall("search", {"query": seed_query(self.question)}, "")], []) else 1
        while True:
            ended = self._should_end(quiet, deadline)
            if ended is not None:
                self.result.ended = ended
                return
            if self.toolbox.originals and SECTION not in (t["function"]["name"] for t in tools):
                tools = tool_specs(history=self.number > 1, sections=True)  # a long result was read in sections
            fitted = fit(self.conversation, self.number, self.model, tools, INSTRUCTIONS,
                         reserve=self.budgets.max_tokens)
            if fitted is None:
                self.result.ended = "context"
                self.note("Research stopped: what was read no longer fits the model's context.")
                return
            if self.spent + fitted.tokens + self.budgets.max_tokens > self.budgets.token_budget:
                # Reserved before the call (its whole prompt and the longest reply), so the last call never
                # takes research past its budget.
                self.result.ended = "tokens"
                return
            messages = fitted.messages
            shown = CallFilter(self.model.tool_format, lambda piece: self.emit(ChatText(piece, "research")))
            try:
                completion = self.model.reply(messages, tools, deadline=deadline, max_tokens=self.budgets.max_tokens,
                                              on_text=shown.feed, stop=self.stop)
            except ModelError as exc:
                self.result.ended = "model_error"
                self.note(f"The model stopped researching: {exc.message}")
                return
            self.result.rounds += 1
            self._count(completion)
            parsed = parse_reply(self.model.tool_format, completion.text)
            stray = _stray_call(parsed.text, self.model.tool_format) if not parsed.calls and not parsed.problems \
                else None
            if stray and getattr(self.model, "forces_calls", False):
                # The model meant a call but wrote it outside its format: ask again, held to the format.
                self.note("The model wrote a tool call outside its format; it was asked again, held to the format.")
                try:
                    completion = self.model.reply(messages, tools, deadline=deadline, max_tokens=self.budgets.max_tokens,
                                                  stop=self.stop, force_call=True)
                except ModelError as exc:
                    self.result.ended = "model_error"
                    self.note(f"The model stopped researching: {exc.message}")
                    return
                self._count(completion)
                parsed = parse_reply(self.model.tool_format, completion.text)
                stray = None if parsed.calls or parsed.problems else stray
            if stray:
                parsed = ParsedReply("", [], [stray])  # a call written outside the model's format is no answer
            if not parsed.calls and not parsed.problems:
                if completion.stopped == "cancelled":
                    self.result.ended = "stopped"
                    return
                if completion.stopped == "deadline":
                    self.result.ended = "timeout"
                    return
                if parsed.text and self.seen and not self._cites_read(parsed.text):
                    # Written without an id of what was read (small models, measured: 5 of 8 answers): it becomes
                    # a draft that the closing request, which lists the memories read by id, shows the model.
                    self.draft = parsed.text
                    self.result.ended = "uncited"
                    self.note("That answer cites none of the memories read; the model is asked once more, with "
                              "them listed by id.")
                    return
                if parsed.text:
                    self._answered(parsed.text, fallback=False)
                    return
                self.note("The model wrote nothing; it is asked again.")
                quiet += 1
                continue
            # With an unreadable call the model reads back what it wrote, to see what to correct.
            said = parsed.text if parsed.calls else completion.text.strip()
            quiet = 0 if self._run_calls(said, parsed.calls, parsed.problems) else quiet + 1

    def _should_end(self, quiet: int, deadline: float) -> Ended | None:
        if self.stop():
            return "stopped"
        if self.clock() >= deadline:
            return "timeout"
        if self.spent >= self.budgets.token_budget:
            return "tokens"
        if quiet >= self.budgets.no_progress_rounds:
            return "no_progress"
        return None

    def _run_calls(self, text: str, calls: list[ToolCall], problems: list[str]) -> bool:
        """Run a reply's calls; True when they found a memory not read before in this turn."""
        ids = [f"call{self.step + i + 1:05d}" for i in range(len(calls))]  # nine letters and digits (Mistral)
        self.conversation.add("assistant", text, turn=self.number, research=True, tool_calls=[
            {"id": cid, "name": c.name, "arguments": c.arguments} for cid, c in zip(ids, calls)])
        progress = False
        for cid, call in zip(ids, calls):
            self.step += 1
            self.emit(ToolStarted(self.step, call.name, call.arguments))
            key = f"{call.name} {json.dumps(call.arguments, sort_keys=True, ensure_ascii=False)}"
            earlier = self.done.get(key)
            if earlier is not None:
                text_out, error, new = (f"Same call as step {earlier}; its result is above. {self._what_is_new()}",
                                        False, 0)
            else:
                outcome = self.toolbox.run(call)
                if outcome.whole is not None:
                    outcome = self._read_long_result(call.name, outcome)
                fresh = [i for i in outcome.ids if i not in self.seen]
                self.seen.update(dict.fromkeys(sorted(fresh)))
                text_out, error, new = outcome.text, outcome.error, len(fresh)
                self.done[key] = self.step
                progress = progress or new > 0
                if call.name == "search" and not error and self.step == 1:
                    # Small models repeat the search of the question word for word (23 of 24 calls, measured):
                    # say that it ran, and what a new one would be.
                    text_out += ("\n\nThat was a search of your whole question. To find more, search one part of "
                                 "it in other words, or read a result above in full (get_memory with its id, "
                                 "file_chunks with its source).")
            self.conversation.add("tool", text_out, turn=self.number, research=True, tool_call_id=cid,
                                  tool_name=call.name)
            self.result.steps.append(ToolStep(self.step, call.name, call.arguments, error, new, earlier))
            self.emit(ToolFinished(self.step, call.name, text_out, error, new, earlier))
        for problem in problems:
            self.conversation.add("user", f"Your tool call could not be read: {problem}", turn=self.number,
                                  research=True)
            self.emit(ChatNote(f"A tool call could not be read: {problem}"))
        return progress

    def _analyze(self, text: str, source: str, question: str, deadline: float) -> Analysis:
        """Read ``text`` in sections (``sections.analyze``) as ``source``: its tokens are research's, and
        ``read_chat_section`` reads the original from now on.

        Raises:
            AnalysisFailed: as ``sections.analyze`` (the original is kept all the same).
        """
        self.toolbox.originals[source] = text
        found = analyze(self.model, text, source=source, question=question, readers=self.budgets.analysis_workers,
                        deadline=deadline, progress=lambda said: self.emit(ChatProgress(said)), stop=self.stop,
                        clock=self.clock)
        self.spent += found.tokens
        self.result.tokens += found.tokens
        return found

    def _read_long_result(self, tool: str, outcome: ToolOutcome) -> ToolOutcome:
        """A tool's answer longer than the chat's budget, read in sections like a long question: the readers' notes
        stand in for it, and ``read_chat_section`` reads the original. Without section analysis, or when it
        fails, the model keeps the answer's start and may read the rest with ``read_chat_section``."""
        whole = outcome.whole or ""
        source = f"r{self.step}"
        rest = (f'\n(read_chat_section(source="{source}", start, end) reads the whole answer, {len(whole):,} '
                "characters, exactly.)")
        if self.budgets.analysis_workers == 0:
            self.toolbox.originals[source] = whole
            return ToolOutcome(outcome.text + rest, outcome.ids)
        try:
            found = self._analyze(whole, source, self.question, self.deadline)
        except AnalysisFailed as exc:
            self.note(f"A long answer of {tool} could not be read in sections ({exc.message}); the model reads its "
                      "start.")
            return ToolOutcome(outcome.text + rest, outcome.ids)
        self.note(f"The answer of {tool} ({found.chars:,} characters) was read in {len(found.sections)} sections in "
                  f"{found.seconds:.0f} s.")
        return ToolOutcome(found.report(whole[:EXCERPT_CHARS]), evidence_ids(whole))

    def _what_is_new(self) -> str:
        """What a repeated call is told: the searches made so far, and what would find something new."""
        searched = [json.loads(k.split(" ", 1)[1]).get("query", "") for k in self.done if k.startswith("search ")]
        listed = "; ".join(f'"{q[:80]}"' for q in searched if q)
        return ((f"Searched so far: {listed}. " if listed else "")
                + "Search different words (a part of the question, a name or term from the results), read a "
                  "result in full (get_memory with its id, file_chunks with its source), or answer.")

    # ------------------------------------------------------------- answer

    def _answer(self) -> None:
        researched = any(m.research for m in self._this_turn())  # else the question itself is the last message
        messages = fit_messages(self.conversation, self.number, self.model, None, INSTRUCTIONS,
                                reserve=self.budgets.max_tokens, closing=self._closing() if researched else None)
        if messages is not None and not self.stop():
            shown = CallFilter(self.model.tool_format, lambda piece: self.emit(ChatText(piece, "answer")))
            try:
                completion = self.model.reply(messages, None, deadline=self.clock() + self.budgets.answer_timeout,
                                              max_tokens=self.budgets.max_tokens, on_text=shown.feed, stop=self.stop)
                self._count(completion)
                text = parse_reply(self.model.tool_format, completion.text).text
                if text:
                    self._answered(text, fallback=False)
                    return
                self.note("The model wrote no answer.")
            except ModelError as exc:
                self.note(f"The model could not answer: {exc.message}")
        elif messages is None:
            self.note("The question and what was read no longer fit the model's context.")
        if self.draft:
            self._answered(self.draft, fallback=False)  # the answer research wrote, though it cites nothing
            return
        self._answered(self._evidence_reply(), fallback=True)

    def _cites_read(self, text: str) -> bool:
        """Whether ``text`` names a memory research read, in brackets or bare."""
        return any(found in self.seen for found in _CITATION.findall(text) + _BARE_ID.findall(text))

    def _count(self, completion: Completion) -> None:
        self.spent += completion.prompt_tokens + completion.tokens
        self.result.tokens += completion.prompt_tokens + completion.tokens
        self.result.evaluated += (completion.prompt_tokens if completion.evaluated_tokens is None
                                  else completion.evaluated_tokens)

    def _closing(self) -> str:
        """The request for the final answer, with the memories research read listed by id."""
        # A small model that copies a line of this list copies a fact with its citation.
        read = self._read_excerpts(READ_LIST_CHARS)
        drafted = (f"You answered this without citing the memories it comes from:\n{self.draft}\n\n"
                   if self.draft else "")
        if not read:
            return drafted + ANSWER_NOW
        items = list(read.items())[:READ_LIST_ITEMS]
        return (drafted + ANSWER_NOW + "\nThe memories you read, by id:\n"
                + "\n".join(f"[{m}] {label}" for m, label in items))

    def _read_excerpts(self, width: int) -> dict[str, str]:
        """Memory id -> the first ``width`` characters of what it says, for each memory research read this turn,
        in the order it was read."""
        excerpts: dict[str, str] = {}
        for m in self._this_turn():
            if m.role != "tool":
                continue
            for found in _RESULT_BLOCK.finditer(m.content):
                memory, body = found.group(1), " ".join(found.group(2).split())
                if memory in self.seen and memory not in excerpts and body:
                    excerpts[memory] = body[:width] + ("…" if len(body) > width else "")
        return excerpts

    def _answered(self, text: str, *, fallback: bool) -> None:
        # An id the model read and wrote without brackets is still a citation: written as one, so that it links.
        text = _BARE_ID.sub(lambda found: f"[{found.group(1)}]" if found.group(1) in self.seen else found.group(1),
                            text)
        self.conversation.add("assistant", text, turn=self.number)
        cited = list(dict.fromkeys(_CITATION.findall(text)))
        self.result.answer = text
        self.result.fallback = fallback
        self.result.cited = [c for c in cited if c in self.seen]
        self.result.unread_citations = [c for c in cited if c not in self.seen]
        self.emit(ChatAnswer(text, tuple(self.result.cited), fallback))

    def _evidence_reply(self) -> str:
        blocks = self._read_excerpts(FALLBACK_CHARS)
        if not blocks:
            return "I could not write an answer, and research found nothing in your memory about this."
        items = list(blocks.items())[:FALLBACK_ITEMS]
        return "I could not write an answer in time. This is what I found:\n\n" + "\n\n".join(
            f"[{memory}] {body}" for memory, body in items)

    def _this_turn(self) -> list[Message]:
        return [m for m in self.conversation.messages if m.turn == self.number]


def seed_query(question: str) -> str:
    """The search research starts with: the question, or the start of a long one (search takes at most
    ``QUERY_MAX_CHARS`` characters), cut at a space."""
    if len(question) <= QUERY_MAX_CHARS:
        return question
    head = question[:QUERY_MAX_CHARS]
    return head[: head.rfind(" ")] if " " in head[QUERY_MAX_CHARS // 2:] else head


def _stray_call(text: str, tool_format: str) -> str | None:
    """A problem sentence when ``text`` is only bare JSON tool calls (a tool's name and its arguments) that the
    model did not write in its format — one object, an array of them, or one per line (the last may be cut off
    by the reply's length), with or without a code fence; None for anything else."""
    stripped = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        values = json.loads(stripped)
    except ValueError:
        lines = [line.strip() for line in stripped.splitlines() if line.strip()]
        if not lines or not all(_CALL_START.match(line) for line in lines):
            return None
        values = []
        for line in lines:
            try:
                values.append(json.loads(line))
            except ValueError:
                continue  # a call cut off by the reply's length
    calls = values if isinstance(values, list) else [values]
    known = (*CHAT_READS, HISTORY, SECTION)
    if not calls or not all(isinstance(c, dict) and c.get("name") in known for c in calls):
        return None
    return (f"the reply is a tool call but not written as one; write it as {call_shape(tool_format)}, or answer "
            "in words.")
