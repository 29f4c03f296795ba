"""Which tool-call format a model writes, found from its own chat template.

A GGUF carries the Jinja chat template its makers trained the model with, and the template shows how
the model's past tool calls are written, which is how the model writes new ones. So we render a short
conversation whose assistant turn calls one probe tool, cut out the text that turn rendered, and pick
the format whose parser reads the probe call back exactly (name and typed arguments). Rendering follows
llama.cpp and Hugging Face: a sandboxed, immutable Jinja environment with ``trim_blocks`` and
``lstrip_blocks``, the loop-control extension, ``raise_exception`` and ``strftime_now``, and a ``tojson``
that keeps key order and non-ASCII text as Hugging Face's does.

When no format reads the call back, or the template fails, the choice is None and its reason says to set
``chat.tool_format`` by hand.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jinja2 import TemplateError

from ..errors import InvalidArgument
from ..models.generation import shared_prefix, template_environment
from .arguments import type_arguments
from .toolcalls import TOOL_FORMATS, parse_reply

#: The tool the probe conversation calls, as an OpenAI-style function spec.
PROBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "What to look for, in plain words."},
                   "limit": {"type": "integer", "description": "Results to return."}},
    "required": ["query"],
    "additionalProperties": False,
}
PROBE_TOOL: dict[str, Any] = {"type": "function", "function": {
    "name": "search", "description": "Search the memory.", "parameters": PROBE_SCHEMA}}
PROBE_ARGUMENTS: dict[str, Any] = {"query": "probe words", "limit": 3}
#: Mistral's templates want call ids of nine letters and digits.
_CALL_ID = "probe0001"
_TEXT_MARK = "Probe answer text."
_SETTING = "chat.tool_format"
_CANDIDATES = tuple(f for f in TOOL_FORMATS if f != "none")
#: A template is code from the model file: besides its own errors it can fail as any Python expression does
#: (adding None to a string, indexing past a list).
_RENDER_ERRORS = (TemplateError, TypeError, ValueError, LookupError, AttributeError, ArithmeticError, RecursionError)


@dataclass(frozen=True)
class FormatChoice:
    """The tool-call format a template uses (one of ``TOOL_FORMATS`` but "none"), or None, and why."""

    tool_format: str | None
    reason: str


def detect_tool_format(chat_template: str, *, bos_token: str = "", eos_token: str = "") -> FormatChoice:
    """The tool-call format ``chat_template`` writes past calls in, found by rendering a probe call.

    The assistant turn's call is given with its arguments as an object first, then as a JSON string (some
    templates want that) when the object fails to render or renders nothing readable. Never raises: a
    template that does not compile or render gives a None choice whose reason says so.
    """
    try:
        template = template_environment().from_string(chat_template)
    except TemplateError as exc:
        return _undecided(f"The chat template does not compile ({_said(exc)})")

    def render(messages: list[dict[str, Any]], prompt: bool) -> str:
        return template.render(messages=messages, tools=[PROBE_TOOL], add_generation_prompt=prompt,
                               bos_token=bos_token, eos_token=eos_token)

    system = {"role": "system", "content": "You answer from the user's memory."}
    user = {"role": "user", "content": "What do my notes say about probes?"}
    failures: list[str] = []
    rendered: list[str] = []
    try:
        prompt = render([system, user], True)
    except _RENDER_ERRORS as exc:
        return _undecided(f"The chat template does not render a conversation ({_said(exc)})")
    ending = _turn_ending(render, [system, user], prompt)
    for as_text in (False, True):
        arguments: Any = json.dumps(PROBE_ARGUMENTS) if as_text else dict(PROBE_ARGUMENTS)
        call = {"role": "assistant", "content": "", "tool_calls": [
            {"id": _CALL_ID, "type": "function", "function": {"name": "search", "arguments": arguments}}]}
        try:
            full = render([system, user, call], False)
        except _RENDER_ERRORS as exc:
            failures.append(_said(exc))
            continue
        turn = _strip_ending(full[shared_prefix(prompt, full):], ending, eos_token)
        rendered.append(turn)
        found = [f for f in _CANDIDATES if _reads_probe(f, turn)]
        if found:
            how = "a JSON string" if as_text else "an object"
            return FormatChoice(found[0], f"The chat template writes a tool call (arguments given as {how}) in the "
                                          f"{found[0]} format, which reads it back exactly.")
    if not rendered:
        return _undecided(f"The chat template cannot render a tool call ({failures[0]})")
    wrote = f"it wrote {_said(rendered[0])}" if rendered[0].strip() else "it writes nothing for the call"
    return _undecided(f"No tool-call format ({', '.join(_CANDIDATES)}) reads back the tool call the chat template "
                      f"renders ({wrote})")


def _undecided(why: str) -> FormatChoice:
    return FormatChoice(None, f"{why}; if the model does call tools, set {_SETTING} by hand to the format it "
                              f"uses ({', '.join(TOOL_FORMATS)}).")


def _reads_probe(tool_format: str, turn: str) -> bool:
    """Whether ``tool_format`` reads ``turn`` as exactly the probe call and nothing it cannot read."""
    parsed = parse_reply(tool_format, turn)
    if parsed.problems or len(parsed.calls) != 1 or parsed.calls[0].name != "search":
        return False
    try:
        return type_arguments(parsed.calls[0].arguments, PROBE_SCHEMA) == PROBE_ARGUMENTS
    except InvalidArgument:
        return False


def _turn_ending(render: Callable[[list[dict[str, Any]], bool], str], before: list[dict[str, Any]],
                 prompt: str) -> str:
    """What the template writes after an assistant turn's content (``<|im_end|>\\n``, ``<|eot_id|>``, …).

    Found by rendering a plain assistant answer; empty when that fails or the answer is not found.
    """
    try:
        full = render([*before, {"role": "assistant", "content": _TEXT_MARK}], False)
    except _RENDER_ERRORS:
        return ""
    turn = full[shared_prefix(prompt, full):]
    at = turn.find(_TEXT_MARK)
    return turn[at + len(_TEXT_MARK):] if at >= 0 else ""


def _strip_ending(turn: str, ending: str, eos_token: str) -> str:
    if ending and turn.endswith(ending):
        turn = turn[:-len(ending)]
    turn = turn.rstrip()
    if eos_token and turn.endswith(eos_token):
        turn = turn[:-len(eos_token)]
    return turn


def _said(value: object) -> str:
    """An error or rendered text as a reason quotes it: one line, at most 160 characters."""
    text = json.dumps(str(value), ensure_ascii=False) if not isinstance(value, BaseException) else str(value)
    text = " ".join(text.split())
    return text if len(text) <= 160 else text[:157] + "..."
