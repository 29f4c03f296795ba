"""The tools the chat model may call: Engram's read tools and ``conversation_history``, with their schemas.

Schemas come from the catalog (``catalog.input_schema``: the same ones MCP clients see), without
``workspace`` and ``max_chars``: a chat runs in one workspace and the loop sizes every result. A call is
typed by its schema (``arguments.type_arguments``); a wrong argument goes back to the model as a tool
error, never as an exception. Search treats its filters as hints: it also lists up to three results the
filters left out, under "Also matching without …", so a model that guessed a wrong project still sees them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..catalog import input_schema
from ..errors import EngramError
from ..tools.descriptions import DESCRIPTIONS
from .arguments import type_arguments
from .conversation import Conversation
from .sections import read_section
from .toolcalls import ToolCall

#: The read tools chat may call, in the order the model sees them.
CHAT_READS = ("search", "get_memory", "neighbors", "file_chunks", "file_summary", "list_sources", "kg_query",
              "graph_scope", "status", "wake_up")
HISTORY = "conversation_history"
HISTORY_CHARS = 4000
#: Reading tools whose answer may be longer than the chat's budget: run at the tools' own cap, an answer longer
#: than the budget is kept whole for the loop to read in sections (``ToolOutcome.whole``).
LONG_READS = frozenset({"get_memory", "file_chunks"})
LONG_READ_CHARS = 12000
#: Earlier messages a search of the history lists, and the places in each it shows (characters around each).
HISTORY_MATCHES = 8
PLACES = 3
PLACE_CHARS = 160
#: Search arguments that filter (everything else shapes the query).
SEARCH_FILTERS = ("project", "source_prefix", "kind", "type", "tags", "since", "until")
ALSO_MATCHING = 3
_HIDDEN = ("workspace", "max_chars")
#: A memory's id as results print it: twelve hex digits right after the result's number.
_RESULT_ID = re.compile(r"^\[\d+\] ([0-9a-f]{12}) ·", re.M)

HISTORY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "query": {"type": "string", "description": "Words to look for in this conversation's earlier messages."},
        "number": {"type": "integer", "minimum": 1, "description": "Read the message with this number."},
        "offset": {"type": "integer", "minimum": 0, "default": 0,
                   "description": f"Where to start reading a long message, in characters ({HISTORY_CHARS:,} at a "
                                  "time)."},
    },
}
SECTION = "read_chat_section"
SECTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["source", "start"],
    "properties": {
        "source": {"type": "string", "description": "The long text's id, as its notes give it (e.g. q3)."},
        "start": {"type": "integer", "minimum": 0, "description": "The first character to read."},
        "end": {"type": "integer", "minimum": 0,
                "description": f"The character after the last to read (at most {HISTORY_CHARS:,} at a time)."},
    },
}
SECTION_DESCRIPTION = ("Exact characters of a long text sent in this reply that was read in sections, by position: "
                       "check a detail its notes point to.")
HISTORY_DESCRIPTION = ("Earlier messages of this conversation (questions, answers and tool results), also those no "
                       "longer shown: search them by words, or read one by its number.")

#: Runs a catalog tool in the chat's workspace: (name, arguments) -> (rendered text, result object).
Runner = Callable[[str, dict[str, Any]], tuple[str, Any]]


def _chat_schema(name: str) -> dict[str, Any]:
    schema = input_schema(name)
    schema["properties"] = {k: v for k, v in schema["properties"].items() if k not in _HIDDEN}
    if "required" in schema:
        schema["required"] = [r for r in schema["required"] if r not in _HIDDEN]
    return schema


def tool_schemas() -> dict[str, dict[str, Any]]:
    """Every chat tool's JSON schema by name (the read tools, then ``conversation_history``)."""
    return {**{name: _chat_schema(name) for name in CHAT_READS}, HISTORY: HISTORY_SCHEMA}


def tool_specs(*, history: bool = True, sections: bool = False) -> list[dict[str, Any]]:
    """The chat tools as OpenAI-style function specs, the shape chat templates and remote APIs read;
    ``conversation_history`` only with ``history`` (a conversation with earlier messages), ``read_chat_section``
    only with ``sections`` (a long text of this reply was read in sections)."""
    specs = [{"type": "function", "function": {"name": name, "description": DESCRIPTIONS.get(name, HISTORY_DESCRIPTION),
                                               "parameters": schema}}
             for name, schema in tool_schemas().items() if history or name != HISTORY]
    if sections:
        specs.append({"type": "function", "function": {"name": SECTION, "description": SECTION_DESCRIPTION,
                                                       "parameters": SECTION_SCHEMA}})
    return specs


@dataclass(frozen=True)
class ToolOutcome:
    """What one call gave the model: the text it reads, the memory ids in it, and whether it failed."""

    text: str
    ids: frozenset[str] = field(default_factory=frozenset)
    error: bool = False
    #: The whole answer when ``text`` is its start, cut at the chat's budget (a long read; see ``LONG_READS``).
    whole: str | None = None


def evidence_ids(text: str) -> frozenset[str]:
    """The memory ids a rendered result lists."""
    return frozenset(_RESULT_ID.findall(text))


class ChatToolbox:
    """Runs the model's calls against one workspace (through ``runner``) and this conversation's history."""

    def __init__(self, runner: Runner, conversation: Conversation, *, max_chars: int) -> None:
        self.runner = runner
        self.conversation = conversation
        #: The turn being answered: ``conversation_history`` searches the turns before it.
        self.turn = conversation.turns + 1
        #: Long texts of this reply read in sections, by id: ``read_chat_section`` reads them (this reply only).
        self.originals: dict[str, str] = {}
        self.max_chars = max_chars
        self.schemas = tool_schemas()
        #: The tools whose results ``max_chars`` sizes (``status`` and ``graph_scope`` take no such argument).
        self.sized = frozenset(name for name in CHAT_READS if "max_chars" in input_schema(name)["properties"])

    def run(self, call: ToolCall) -> ToolOutcome:
        """Run ``call``; any refusal or failure is the outcome's text, with ``error`` set. A result that lists
        memories ends with a reminder of how to cite them (small models follow a nearby example best)."""
        outcome = self._run(call)
        if outcome.ids and not outcome.error:
            example = next(iter(sorted(outcome.ids)))
            return ToolOutcome(f"{outcome.text}\n\nCite what you use by its id in square brackets, e.g. [{example}].",
                               outcome.ids, whole=outcome.whole)
        return outcome

    def _run(self, call: ToolCall) -> ToolOutcome:
        schema = self.schemas.get(call.name) or (SECTION_SCHEMA if call.name == SECTION and self.originals else None)
        if schema is None:
            return ToolOutcome(f"Error: there is no tool '{call.name}'. Tools: {', '.join(self.schemas)}.",
                               error=True)
        try:
            arguments = type_arguments(call.arguments, schema)
            if call.name == HISTORY:
                return ToolOutcome(self._history(**arguments))
            if call.name == SECTION:
                return ToolOutcome(self._section(**arguments))
            if call.name == "search":
                return self._search(arguments)
            if call.name in LONG_READS and self.max_chars < LONG_READ_CHARS:
                return self._long_read(call.name, arguments)
            text, _ = self.runner(call.name, self._sized(call.name, arguments))
        except EngramError as exc:
            return ToolOutcome(f"Error: {exc.message}", error=True)
        if len(text) > self.max_chars:  # a tool that takes no max_chars: cut here, saying so
            text = text[:self.max_chars] + f"\n— cut at {self.max_chars:,} characters."
        return ToolOutcome(text, evidence_ids(text))

    def _long_read(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """A reading tool run at the tools' own cap: an answer over the chat's budget is cut here, kept whole."""
        text, _ = self.runner(name, {**arguments, "max_chars": LONG_READ_CHARS})
        if len(text) <= self.max_chars:
            return ToolOutcome(text, evidence_ids(text))
        shown = text[:self.max_chars] + f"\n— cut at {self.max_chars:,} of {len(text):,} characters."
        return ToolOutcome(shown, evidence_ids(shown), whole=text)

    def _sized(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {**arguments, "max_chars": self.max_chars} if name in self.sized else arguments

    def _search(self, arguments: dict[str, Any]) -> ToolOutcome:
        text, result = self.runner("search", {**arguments, "max_chars": self.max_chars})
        filters = [f for f in SEARCH_FILTERS if arguments.get(f) not in (None, "", [])]
        if not filters:
            return ToolOutcome(text, evidence_ids(text))
        shown = {h.id for h in result.hits}
        loose = {k: v for k, v in arguments.items() if k not in SEARCH_FILTERS}
        loose["limit"] = min(50, len(shown) + ALSO_MATCHING)
        _, wider = self.runner("search", {**loose, "max_chars": self.max_chars})
        extra = [h for h in wider.hits if h.id not in shown][:ALSO_MATCHING]
        if extra:
            lines = [f"\n\nAlso matching without {', '.join(filters)}:"]
            lines += [f"[+] {h.id} · {h.project} · {h.source or h.kind} · {' '.join(h.content.split())[:200]}"
                      for h in extra]
            text += "\n".join(lines)
        return ToolOutcome(text, evidence_ids(text) | {h.id for h in extra})

    def _section(self, source: str, start: int, end: int | None = None) -> str:
        text = self.originals.get(source)
        if text is None:
            known = ", ".join(self.originals) or "none in this reply"
            return f"Error: there is no long text '{source}' in this reply (known: {known})."
        return read_section(text, start, end, HISTORY_CHARS)

    def _history(self, query: str | None = None, number: int | None = None, offset: int = 0) -> str:
        messages = self.conversation.messages
        if number is not None:
            if not 1 <= number <= len(messages):
                return f"Error: this conversation has messages 1 to {len(messages)}; there is no message {number}."
            m = messages[number - 1]
            part = m.content[offset:offset + HISTORY_CHARS]
            more = len(m.content) - offset - len(part)
            tail = f"\n— {more:,} more characters: offset={offset + len(part)}" if more > 0 else ""
            calls = "".join(f"\n(called {c['name']} {json.dumps(c['arguments'], ensure_ascii=False)})"
                            for c in m.tool_calls)
            return f"Message {m.number} ({m.role}{', ' + m.tool_name if m.tool_name else ''}, {m.at}):\n{part}" \
                   f"{calls}{tail}"
        if not query or not query.strip():
            return "Error: give query (words to look for) or number (a message to read)."
        words = [w for w in re.findall(r"\w+", query.lower()) if len(w) > 2] or [query.lower().strip()]
        earlier = [m for m in messages if m.turn < self.turn]
        scored = [(sum(m.content.lower().count(w) for w in words), m) for m in earlier]
        hits = sorted(((s, m) for s, m in scored if s > 0), key=lambda h: (-h[0], h[1].number))[:HISTORY_MATCHES]
        if not hits:
            return f"No earlier message of this conversation mentions {query!r}."
        lines = []
        for _, m in sorted(hits, key=lambda h: h[1].number):
            who = f"{m.role}, {m.tool_name}" if m.tool_name else m.role
            lines.append(f"Message {m.number} ({who}, {m.at}, {len(m.content):,} characters): "
                         + " … ".join(_places(m.content, words)))
        return "\n".join(lines) + "\n— number=N reads a message in full."


def _places(text: str, words: list[str]) -> list[str]:
    """Up to ``PLACES`` short excerpts of ``text`` around where ``words`` occur, in order, not overlapping."""
    lowered = text.lower()
    starts = sorted({found.start() for w in words for found in re.finditer(re.escape(w), lowered)})
    out: list[str] = []
    covered = -1
    for at in starts:
        if at <= covered:
            continue
        begin, end = max(0, at - PLACE_CHARS // 2), min(len(text), at + PLACE_CHARS // 2)
        out.append(("…" if begin else "") + " ".join(text[begin:end].split()) + ("…" if end < len(text) else ""))
        covered = end
        if len(out) == PLACES:
            break
    return out
