"""Tool calls in a model's reply, read in the native format of the model's family.

A local model asks for a tool by writing a call in the shape its chat template taught it. Each parser
here accepts only its family's documented shape; anything else is plain text, and a block that clearly
meant to be a call but cannot be read becomes a *problem*: one sentence that goes back to the model as
the tool error, so it can write the call again. Arguments come back as the model wrote them (JSON values,
or raw text for qwen-xml); ``arguments.type_arguments`` types them by the tool's schema.

The formats (``TOOL_FORMATS``):

``qwen-xml``  Qwen3-Coder and Qwen3.5 (their chat templates show it)::

                  <tool_call>
                  <function=NAME>
                  <parameter=P>
                  value, raw text over any number of lines
                  </parameter>
                  </function>
                  </tool_call>

              One ``<tool_call>`` block per call, several in a reply. A value loses exactly one leading and
              one trailing newline; the rest is kept verbatim.
``hermes``    Hermes 2 Pro / 3, Qwen2.5, Qwen3: ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``,
              several blocks allowed. ``arguments`` is an object, or a JSON string holding one (decoded).
              No other keys.
``llama3``    Llama 3.1-3.3 JSON tool calling (meta-llama/llama-models, ``llama3_1/prompt_format.md``, and the
              models' chat templates): the whole reply, after leading whitespace and an optional
              ``<|python_tag|>``, is one object ``{"name": ..., "parameters": {...}}``; the prompt-format page
              also shows ``"type": "function"`` in it, so that key is accepted with that value. ``"arguments"``
              is not documented for Llama and is refused (as a problem that names ``"parameters"``). The page
              says "Only single tool calls are supported": several objects (``;``-separated or otherwise) are a
              problem, not calls. JSON in a code fence, or a JSON object that is not call-like, is plain text.
              (Llama 3.2 1B/3B also document a pythonic ``[f(a=1)]`` form; it is not read here.)
``mistral``   Both shapes of mistral-common's instruct tokenizers (``tokens/tokenizers/instruct.py``):
              V2/V3/V7 (Mistral 7B v0.3, Nemo, Small 2409): ``[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]``
              where each object may carry an ``"id"``; V11+ (Mistral Small 3.1/3.2, Devstral, Ministral 3): one
              ``[TOOL_CALLS]NAME[ARGS]{...}`` per call, V11 optionally with ``[CALL_ID]ID`` before ``[ARGS]``.
              Both are accepted, since the decision which one a model uses is its tokenizer's, and the two
              cannot be confused. Text before the first ``[TOOL_CALLS]`` is the reply's text; text after a
              call's JSON is a problem. The reply must be detokenized with its special tokens shown.
``none``      The model calls no tools: the reply is text, unchanged.

A name must look like a tool name (letters, digits, ``_ . -``, at most 64); checking that the tool exists
is the caller's job.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import SettingsError

TOOL_FORMATS = ("qwen-xml", "hermes", "llama3", "mistral", "none")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
_OPEN, _CLOSE = "<tool_call>", "</tool_call>"
_FUNCTION = re.compile(r"\s*<function=([^>\n]*)>(.*)</function>\s*", re.S)
_PARAMETER = re.compile(r"<parameter=([^>\n]*)>(.*?)</parameter>", re.S)
_PYTHON_TAG = "<|python_tag|>"
_TOOL_CALLS = "[TOOL_CALLS]"
_V11_HEAD = re.compile(r"\s*([^\[\]\s]*)(?:\[CALL_ID\][A-Za-z0-9]*)?\[ARGS\]")

_SHAPES = {
    "qwen-xml": ("<tool_call>\\n<function=NAME>\\n<parameter=ARGUMENT>\\nvalue\\n</parameter>\\n</function>\\n"
                 "</tool_call>"),
    "hermes": '<tool_call>\\n{"name": NAME, "arguments": {...}}\\n</tool_call>',
    "llama3": '{"name": NAME, "parameters": {...}} and nothing else in the reply',
    "mistral": '[TOOL_CALLS][{"name": NAME, "arguments": {...}}] or [TOOL_CALLS]NAME[ARGS]{...}',
}


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for: the tool's name, its arguments as written, and the text it came from."""

    name: str
    arguments: dict[str, Any]
    raw: str


@dataclass(frozen=True)
class ParsedReply:
    """A reply read for tool calls.

    ``text`` is the reply without its call blocks (stripped); ``problems`` holds one sentence per block that
    looked like a call but could not be read, in reply order, meant to go back to the model as tool errors.
    """

    text: str
    calls: list[ToolCall] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def call_shape(tool_format: str) -> str:
    """How a call is written in ``tool_format`` ("" for none), as the problems quote it."""
    return _SHAPES.get(tool_format, "")


def parse_reply(tool_format: str, reply: str) -> ParsedReply:
    """Read the tool calls of ``reply``, written in ``tool_format`` (one of ``TOOL_FORMATS``).

    Never raises for what the model wrote: unreadable calls are ``problems``.

    Raises:
        SettingsError: ``tool_format`` is not one of ``TOOL_FORMATS`` (the message lists them).
    """
    if tool_format not in _PARSERS:
        raise SettingsError(f"Unknown tool-call format '{tool_format}' (chat.tool_format); it accepts "
                            f"{', '.join(TOOL_FORMATS)}.", title="Unknown tool-call format")
    return _PARSERS[tool_format](reply)


class _Reading:
    """What one parse collects: calls and problems in reply order, numbered as the model would count them."""

    def __init__(self, tool_format: str) -> None:
        self.shape = _SHAPES[tool_format]
        self.calls: list[ToolCall] = []
        self.problems: list[str] = []

    def call(self, name: str, arguments: dict[str, Any], raw: str) -> None:
        self.calls.append(ToolCall(name, arguments, raw))

    def problem(self, what: str) -> None:
        n = len(self.calls) + len(self.problems) + 1
        self.problems.append(f"Tool call {n} could not be read ({what}); write each call as {self.shape}.")

    def reply(self, text: str) -> ParsedReply:
        return ParsedReply(text.strip(), self.calls, self.problems)


def _name_problem(name: Any) -> str | None:
    """Why ``name`` is not a tool name, or None when it is one."""
    if not isinstance(name, str) or not name.strip():
        return "the call has no tool name"
    if not _NAME.fullmatch(name):
        return f"{_shown(name)} is not a tool name"
    return None


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _tagged_blocks(reply: str) -> tuple[str, list[tuple[str, str | None]]]:
    """The text outside ``<tool_call>`` blocks, and each block as (raw, inner); inner is None when unclosed."""
    outside: list[str] = []
    blocks: list[tuple[str, str | None]] = []
    pos = 0
    while (start := reply.find(_OPEN, pos)) >= 0:
        outside.append(reply[pos:start])
        end = reply.find(_CLOSE, start + len(_OPEN))
        if end < 0:
            blocks.append((reply[start:], None))
            pos = len(reply)
            break
        blocks.append((reply[start:end + len(_CLOSE)], reply[start + len(_OPEN):end]))
        pos = end + len(_CLOSE)
    outside.append(reply[pos:])
    return "".join(outside), blocks


def _parse_qwen_xml(reply: str) -> ParsedReply:
    reading = _Reading("qwen-xml")
    text, blocks = _tagged_blocks(reply)
    for raw, inner in blocks:
        if inner is None:
            reading.problem("<tool_call> is never closed by </tool_call>")
            continue
        function = _FUNCTION.fullmatch(inner)
        if function is None:
            reading.problem("a <tool_call> block must hold exactly one <function=NAME>...</function>")
            continue
        name, body = function[1], function[2]
        if "<function=" in body:
            reading.problem("a <tool_call> block must hold exactly one <function=NAME>...</function>")
            continue
        if (why := _name_problem(name)) is not None:
            reading.problem(why)
            continue
        arguments, why = _qwen_parameters(body)
        if why is not None:
            reading.problem(why)
            continue
        reading.call(name, arguments, raw)
    if "<function=" in text:
        reading.problem("a <function=...> block stands outside <tool_call></tool_call>")
    return reading.reply(text)


def _qwen_parameters(body: str) -> tuple[dict[str, Any], str | None]:
    """The parameters of a ``<function>`` body, or why they cannot be read."""
    arguments: dict[str, Any] = {}
    pos = 0
    for parameter in _PARAMETER.finditer(body):
        if body[pos:parameter.start()].strip():
            return {}, "there is text between the <parameter> blocks"
        pos = parameter.end()
        name, value = parameter[1], parameter[2]
        if not _NAME.fullmatch(name):
            return {}, f"{_shown(name)} is not an argument name"
        if name in arguments:
            return {}, f"the argument '{name}' is given twice"
        value = value[1:] if value.startswith("\n") else value
        arguments[name] = value[:-1] if value.endswith("\n") else value
    if body[pos:].strip():
        return {}, "a <parameter=NAME> block is not closed by </parameter>, or text stands outside the blocks"
    return arguments, None


def _object_argument(value: Any) -> dict[str, Any] | None:
    """An arguments object, also when the model wrote it as a JSON string holding one; None otherwise."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def _parse_hermes(reply: str) -> ParsedReply:
    reading = _Reading("hermes")
    text, blocks = _tagged_blocks(reply)
    for raw, inner in blocks:
        if inner is None:
            reading.problem("<tool_call> is never closed by </tool_call>")
            continue
        try:
            call = json.loads(inner)
        except ValueError:
            reading.problem("the text inside <tool_call> is not one JSON object")
            continue
        if not isinstance(call, dict):
            reading.problem("the text inside <tool_call> is not one JSON object")
            continue
        if (why := _name_problem(call.get("name"))) is not None:
            reading.problem(why)
            continue
        if extra := sorted(set(call) - {"name", "arguments"}):
            reading.problem(f"the call has keys other than \"name\" and \"arguments\": {', '.join(extra)}")
            continue
        if "arguments" not in call:
            reading.problem('the call has no "arguments" (give {} when there are none)')
            continue
        arguments = _object_argument(call["arguments"])
        if arguments is None:
            reading.problem('"arguments" is not a JSON object')
            continue
        reading.call(call["name"], arguments, raw)
    return reading.reply(text)


def _parse_llama3(reply: str) -> ParsedReply:
    reading = _Reading("llama3")
    body = reply.lstrip()
    tagged = body.startswith(_PYTHON_TAG)
    if tagged:
        body = body[len(_PYTHON_TAG):]
    body = body.strip()
    try:
        call, end = json.JSONDecoder().raw_decode(body)
    except ValueError:
        # Unreadable JSON is a call only where the reply was plainly meant as one.
        if tagged or re.match(r'\{\s*"(name|type|parameters)"\s*:', body):
            reading.problem("the reply is not one JSON object")
            return reading.reply("")
        return reading.reply(reply)
    if not isinstance(call, dict) or not (tagged or {"name", "parameters"} & set(call)
                                          or call.get("type") == "function"):
        if tagged:
            reading.problem("the text after <|python_tag|> is not a JSON call")
            return reading.reply("")
        return reading.reply(reply)
    if body[end:].strip():
        rest = body[end:].lstrip()
        reading.problem("only one call per reply is supported" if rest[:1] in (";", "{", ",")
                        else "there is text after the call's JSON object")
        return reading.reply("")
    if (why := _name_problem(call.get("name"))) is not None:
        reading.problem(why)
    elif "arguments" in call and "parameters" not in call:
        reading.problem('this model\'s calls give their arguments as "parameters", not "arguments"')
    elif extra := sorted(set(call) - {"name", "parameters", "type"}):
        reading.problem(f"the call has keys other than \"name\" and \"parameters\": {', '.join(extra)}")
    elif "type" in call and call["type"] != "function":
        reading.problem('"type" must be "function"')
    elif not isinstance(call.get("parameters"), dict):
        reading.problem('"parameters" is not a JSON object (give {} when there are none)')
    else:
        reading.call(call["name"], call["parameters"], reply.strip())
    return reading.reply("")


def _parse_mistral(reply: str) -> ParsedReply:
    reading = _Reading("mistral")
    first = reply.find(_TOOL_CALLS)
    if first < 0:
        return reading.reply(reply)
    for segment in reply[first + len(_TOOL_CALLS):].split(_TOOL_CALLS):
        raw = _TOOL_CALLS + segment
        if (head := _V11_HEAD.match(segment)) is not None:
            _mistral_v11(reading, head, segment, raw)
        elif segment.lstrip().startswith("["):
            _mistral_list(reading, segment, raw)
        else:
            reading.problem("[TOOL_CALLS] is followed neither by a JSON list nor by NAME[ARGS]")
    return reading.reply(reply[:first])


def _mistral_list(reading: _Reading, segment: str, raw: str) -> None:
    """``[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]`` (tokenizers V2 to V7)."""
    body = segment.strip()
    try:
        calls, end = json.JSONDecoder().raw_decode(body)
    except ValueError:
        reading.problem("the text after [TOOL_CALLS] is not a JSON list of calls")
        return
    if body[end:].strip():
        reading.problem("there is text after the list of calls")
        return
    if not isinstance(calls, list) or not calls:
        reading.problem("the text after [TOOL_CALLS] is not a JSON list of calls")
        return
    for call in calls:
        if not isinstance(call, dict):
            reading.problem("an item of the list is not a JSON object")
        elif (why := _name_problem(call.get("name"))) is not None:
            reading.problem(why)
        elif extra := sorted(set(call) - {"name", "arguments", "id"}):
            reading.problem(f"the call has keys other than \"name\", \"arguments\" and \"id\": {', '.join(extra)}")
        elif (arguments := _object_argument(call.get("arguments"))) is None:
            reading.problem('"arguments" is missing or not a JSON object')
        else:
            reading.call(call["name"], arguments, raw)


def _mistral_v11(reading: _Reading, head: re.Match[str], segment: str, raw: str) -> None:
    """``[TOOL_CALLS]NAME[ARGS]{...}``, with ``[CALL_ID]ID`` before ``[ARGS]`` in V11 (tokenizers V11+)."""
    if (why := _name_problem(head[1])) is not None:
        reading.problem(why)
        return
    body = segment[head.end():].strip()
    try:
        arguments, end = json.JSONDecoder().raw_decode(body)
    except ValueError:
        reading.problem("the text after [ARGS] is not a JSON object")
        return
    if not isinstance(arguments, dict):
        reading.problem("the text after [ARGS] is not a JSON object")
    elif body[end:].strip():
        reading.problem("there is text after the call's arguments")
    else:
        reading.call(head[1], arguments, raw)


def _parse_none(reply: str) -> ParsedReply:
    return ParsedReply(reply, [], [])


_PARSERS: dict[str, Callable[[str], ParsedReply]] = {
    "qwen-xml": _parse_qwen_xml,
    "hermes": _parse_hermes,
    "llama3": _parse_llama3,
    "mistral": _parse_mistral,
    "none": _parse_none,
}
