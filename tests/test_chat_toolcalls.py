"""Reading tool calls out of a model's reply, one native format per model family, and only that format."""

from __future__ import annotations

import pytest

from engram.core.chat.toolcalls import TOOL_FORMATS, ParsedReply, ToolCall, parse_reply
from engram.core.errors import EngramError, SettingsError

QWEN_SHAPE = ("write each call as <tool_call>\\n<function=NAME>\\n<parameter=ARGUMENT>\\nvalue\\n</parameter>\\n"
              "</function>\\n</tool_call>.")
HERMES_SHAPE = 'write each call as <tool_call>\\n{"name": NAME, "arguments": {...}}\\n</tool_call>.'
LLAMA_SHAPE = 'write each call as {"name": NAME, "parameters": {...}} and nothing else in the reply.'
MISTRAL_SHAPE = 'write each call as [TOOL_CALLS][{"name": NAME, "arguments": {...}}] or [TOOL_CALLS]NAME[ARGS]{...}.'


def test_the_formats_are_the_five_families_and_none() -> None:
    assert TOOL_FORMATS == ("qwen-xml", "hermes", "llama3", "mistral", "none")


def test_an_unknown_format_is_a_settings_error_listing_the_accepted_ones() -> None:
    with pytest.raises(SettingsError) as refused:
        parse_reply("chatml", "hello")
    assert isinstance(refused.value, EngramError)
    assert refused.value.message == ("Unknown tool-call format 'chatml' (chat.tool_format); it accepts qwen-xml, "
                                     "hermes, llama3, mistral, none.")


# qwen-xml ------------------------------------------------------------------------------------------------------

QWEN_CALL = ("<tool_call>\n<function=search>\n<parameter=query>\nlighthouse keeper\n</parameter>\n"
             "<parameter=limit>\n3\n</parameter>\n</function>\n</tool_call>")


def test_qwen_xml_reads_a_call_with_raw_text_values() -> None:
    assert parse_reply("qwen-xml", QWEN_CALL) == ParsedReply(
        "", [ToolCall("search", {"query": "lighthouse keeper", "limit": "3"}, QWEN_CALL)], [])


def test_qwen_xml_keeps_multi_line_values_verbatim_but_one_newline_each_side() -> None:
    code = "def f():\n    return 1\n\n"
    reply = (f"<tool_call>\n<function=store>\n<parameter=content>\n{code}\n</parameter>\n"
             f"<parameter=note>\n\n  spaced  \n\n</parameter>\n</function>\n</tool_call>")
    parsed = parse_reply("qwen-xml", reply)
    assert parsed.problems == []
    assert parsed.calls[0].arguments == {"content": code, "note": "\n  spaced  \n"}


def test_qwen_xml_reads_several_calls_and_keeps_the_reasoning_before_them_as_text() -> None:
    second = "<tool_call>\n<function=status>\n</function>\n</tool_call>"
    parsed = parse_reply("qwen-xml", f"I will look it up.\n\n{QWEN_CALL}\n{second}\n")
    assert parsed == ParsedReply("I will look it up.", [
        ToolCall("search", {"query": "lighthouse keeper", "limit": "3"}, QWEN_CALL),
        ToolCall("status", {}, second)], [])


def test_qwen_xml_reads_a_hermes_block_as_a_problem_not_a_call() -> None:
    parsed = parse_reply("qwen-xml", '<tool_call>\n{"name": "search", "arguments": {"query": "x"}}\n</tool_call>')
    assert parsed == ParsedReply("", [], [
        "Tool call 1 could not be read (a <tool_call> block must hold exactly one <function=NAME>...</function>); "
        + QWEN_SHAPE])


def test_qwen_xml_unclosed_blocks_and_parameters_are_problems() -> None:
    unclosed = parse_reply("qwen-xml", "Searching.\n<tool_call>\n<function=search>\n<parameter=query>\nx\n")
    assert unclosed == ParsedReply("Searching.", [], [
        "Tool call 1 could not be read (<tool_call> is never closed by </tool_call>); " + QWEN_SHAPE])
    open_parameter = parse_reply("qwen-xml", "<tool_call>\n<function=search>\n<parameter=query>\nx\n</function>\n"
                                             "</tool_call>")
    assert open_parameter.calls == []
    assert open_parameter.problems == [
        "Tool call 1 could not be read (a <parameter=NAME> block is not closed by </parameter>, or text stands "
        "outside the blocks); " + QWEN_SHAPE]


def test_qwen_xml_counts_problems_among_calls_and_refuses_bad_names_and_repeats() -> None:
    reply = (f"{QWEN_CALL}\n<tool_call>\n<function=>\n</function>\n</tool_call>\n"
             "<tool_call>\n<function=search>\n<parameter=query>\na\n</parameter>\n<parameter=query>\nb\n</parameter>\n"
             "</function>\n</tool_call>")
    parsed = parse_reply("qwen-xml", reply)
    assert [c.name for c in parsed.calls] == ["search"]
    assert parsed.problems == [
        "Tool call 2 could not be read (the call has no tool name); " + QWEN_SHAPE,
        "Tool call 3 could not be read (the argument 'query' is given twice); " + QWEN_SHAPE]


def test_qwen_xml_flags_a_function_block_outside_tool_call() -> None:
    parsed = parse_reply("qwen-xml", "<function=search>\n<parameter=query>\nx\n</parameter>\n</function>")
    assert parsed.calls == []
    assert parsed.problems == [
        "Tool call 1 could not be read (a <function=...> block stands outside <tool_call></tool_call>); "
        + QWEN_SHAPE]


def test_plain_text_has_no_calls_and_no_problems_in_every_format() -> None:
    for tool_format in TOOL_FORMATS:
        assert parse_reply(tool_format, "  The answer is 42.\n") == ParsedReply(
            "  The answer is 42.\n" if tool_format == "none" else "The answer is 42.", [], [])


# hermes --------------------------------------------------------------------------------------------------------

def test_hermes_reads_several_calls_with_objects_or_json_strings_as_arguments() -> None:
    first = '<tool_call>\n{"name": "search", "arguments": {"query": "lighthouse", "limit": 3}}\n</tool_call>'
    second = '<tool_call>\n{"arguments": "{\\"id\\": \\"m-1\\"}", "name": "get_memory"}\n</tool_call>'
    parsed = parse_reply("hermes", f"Let me check.\n{first}\n{second}")
    assert parsed == ParsedReply("Let me check.", [
        ToolCall("search", {"query": "lighthouse", "limit": 3}, first),
        ToolCall("get_memory", {"id": "m-1"}, second)], [])


def test_hermes_keeps_multi_line_strings_as_json_wrote_them() -> None:
    block = '<tool_call>\n{"name": "store", "arguments": {"content": "line one\\n  line two\\n"}}\n</tool_call>'
    assert parse_reply("hermes", block).calls == [ToolCall("store", {"content": "line one\n  line two\n"}, block)]


@pytest.mark.parametrize(("reply", "why"), [
    ('<tool_call>\n{"name": "search", "arguments": {"query": "x"}}\n', "<tool_call> is never closed by </tool_call>"),
    ("<tool_call>\n<function=search>\n</function>\n</tool_call>", "the text inside <tool_call> is not one JSON object"),
    ('<tool_call>\n{"name": "search", "arguments": {"query": "x"}\n</tool_call>',
     "the text inside <tool_call> is not one JSON object"),
    ('<tool_call>\n["search"]\n</tool_call>', "the text inside <tool_call> is not one JSON object"),
    ('<tool_call>\n{"arguments": {"query": "x"}}\n</tool_call>', "the call has no tool name"),
    ('<tool_call>\n{"name": "", "arguments": {}}\n</tool_call>', "the call has no tool name"),
    ('<tool_call>\n{"name": "web search", "arguments": {}}\n</tool_call>', '"web search" is not a tool name'),
    ('<tool_call>\n{"name": "search"}\n</tool_call>', 'the call has no "arguments" (give {} when there are none)'),
    ('<tool_call>\n{"name": "search", "arguments": "query=x"}\n</tool_call>', '"arguments" is not a JSON object'),
    ('<tool_call>\n{"name": "search", "arguments": [1]}\n</tool_call>', '"arguments" is not a JSON object'),
    ('<tool_call>\n{"name": "search", "parameters": {}, "arguments": {}}\n</tool_call>',
     'the call has keys other than "name" and "arguments": parameters'),
])
def test_hermes_near_misses_are_problems_not_calls(reply: str, why: str) -> None:
    assert parse_reply("hermes", reply) == ParsedReply(
        "", [], [f"Tool call 1 could not be read ({why}); " + HERMES_SHAPE])


def test_hermes_does_not_read_other_families_shapes() -> None:
    assert parse_reply("hermes", '{"name": "search", "parameters": {"query": "x"}}').calls == []
    assert parse_reply("hermes", '[TOOL_CALLS][{"name": "search", "arguments": {}}]').calls == []


# llama3 --------------------------------------------------------------------------------------------------------

def test_llama3_reads_the_whole_reply_as_one_call_with_or_without_python_tag() -> None:
    bare = '{"name": "search", "parameters": {"query": "lighthouse", "limit": 3}}'
    assert parse_reply("llama3", f"\n {bare}\n") == ParsedReply(
        "", [ToolCall("search", {"query": "lighthouse", "limit": 3}, bare)], [])
    tagged = '<|python_tag|>{\n    "type": "function",\n    "name": "kg_query",\n    "parameters": {"entity": "Ada"}\n}'
    assert parse_reply("llama3", tagged) == ParsedReply("", [ToolCall("kg_query", {"entity": "Ada"}, tagged)], [])


def test_llama3_json_in_a_code_fence_or_in_prose_is_text() -> None:
    fenced = '```json\n{"name": "search", "parameters": {"query": "x"}}\n```'
    assert parse_reply("llama3", fenced) == ParsedReply(fenced, [], [])
    prose = 'Call it like {"name": "search", "parameters": {}} next time.'
    assert parse_reply("llama3", prose) == ParsedReply(prose, [], [])
    data = '{"title": "Notes", "count": 2}'
    assert parse_reply("llama3", data) == ParsedReply(data, [], [])


@pytest.mark.parametrize(("reply", "why"), [
    ('{"name": "search", "arguments": {"query": "x"}}',
     "this model's calls give their arguments as \"parameters\", not \"arguments\""),
    ('{"name": "search", "parameters": {"query": "x"}}; {"name": "status", "parameters": {}}',
     "only one call per reply is supported"),
    ('{"name": "search", "parameters": {"query": "x"}}\n{"name": "status", "parameters": {}}',
     "only one call per reply is supported"),
    ('{"name": "search", "parameters": {"query": "x"}} and then I will answer.',
     "there is text after the call's JSON object"),
    ('{"type": "function", "parameters": {"query": "x"}}', "the call has no tool name"),
    ('{"name": "search", "parameters": "query=x"}', '"parameters" is not a JSON object (give {} when there are none)'),
    ('{"name": "search"}', '"parameters" is not a JSON object (give {} when there are none)'),
    ('{"name": "search", "parameters": {}, "id": "1"}', 'the call has keys other than "name" and "parameters": id'),
    ('{"type": "tool", "name": "search", "parameters": {}}', '"type" must be "function"'),
    ('{"name": "search", "parameters": {"query": "x"}', "the reply is not one JSON object"),
    ("<|python_tag|>brave_search.call(query=\"x\")", "the reply is not one JSON object"),
    ("<|python_tag|>[1, 2]", "the text after <|python_tag|> is not a JSON call"),
])
def test_llama3_near_misses_are_problems_not_calls(reply: str, why: str) -> None:
    assert parse_reply("llama3", reply) == ParsedReply(
        "", [], [f"Tool call 1 could not be read ({why}); " + LLAMA_SHAPE])


def test_llama3_does_not_read_hermes_blocks() -> None:
    block = '<tool_call>\n{"name": "search", "arguments": {"query": "x"}}\n</tool_call>'
    assert parse_reply("llama3", block) == ParsedReply(block, [], [])


# mistral -------------------------------------------------------------------------------------------------------

def test_mistral_reads_the_json_list_shape_with_ids_and_text_before() -> None:
    raw = ('[TOOL_CALLS][{"name": "search", "arguments": {"query": "x", "limit": 2}, "id": "a1b2c3d4e"}, '
           '{"name": "status", "arguments": {}}]')
    assert parse_reply("mistral", f"Looking.{raw}") == ParsedReply("Looking.", [
        ToolCall("search", {"query": "x", "limit": 2}, raw), ToolCall("status", {}, raw)], [])
    spaced = '[TOOL_CALLS] [{"name": "status", "arguments": "{}"}]'
    assert parse_reply("mistral", spaced).calls == [ToolCall("status", {}, spaced)]


def test_mistral_reads_the_v11_shape_with_and_without_call_ids() -> None:
    first = '[TOOL_CALLS]search[CALL_ID]a1b2c3d4e[ARGS]{"query": "two\\nlines"}'
    second = '[TOOL_CALLS]get_memory[ARGS]{"id": "m-1"}'
    assert parse_reply("mistral", first + second) == ParsedReply("", [
        ToolCall("search", {"query": "two\nlines"}, first), ToolCall("get_memory", {"id": "m-1"}, second)], [])


@pytest.mark.parametrize(("reply", "why"), [
    ('[TOOL_CALLS][{"name": "search", "arguments": {"query": "x"}}',
     "the text after [TOOL_CALLS] is not a JSON list of calls"),
    ("[TOOL_CALLS][]", "the text after [TOOL_CALLS] is not a JSON list of calls"),
    ('[TOOL_CALLS][{"name": "search", "arguments": {}}] Done.', "there is text after the list of calls"),
    ('[TOOL_CALLS][{"arguments": {}}]', "the call has no tool name"),
    ('[TOOL_CALLS][{"name": "search", "parameters": {}}]',
     'the call has keys other than "name", "arguments" and "id": parameters'),
    ('[TOOL_CALLS][{"name": "search"}]', '"arguments" is missing or not a JSON object'),
    ('[TOOL_CALLS][5]', "an item of the list is not a JSON object"),
    ('[TOOL_CALLS]search{"query": "x"}', "[TOOL_CALLS] is followed neither by a JSON list nor by NAME[ARGS]"),
    ('[TOOL_CALLS][ARGS]{"query": "x"}', "the call has no tool name"),
    ('[TOOL_CALLS]search[ARGS]query=x', "the text after [ARGS] is not a JSON object"),
    ('[TOOL_CALLS]search[ARGS]["x"]', "the text after [ARGS] is not a JSON object"),
    ('[TOOL_CALLS]search[ARGS]{"query": "x"} thanks', "there is text after the call's arguments"),
])
def test_mistral_near_misses_are_problems_not_calls(reply: str, why: str) -> None:
    assert parse_reply("mistral", reply) == ParsedReply(
        "", [], [f"Tool call 1 could not be read ({why}); " + MISTRAL_SHAPE])


def test_mistral_does_not_read_other_families_shapes() -> None:
    for reply in ('{"name": "search", "parameters": {"query": "x"}}',
                  '<tool_call>\n{"name": "search", "arguments": {"query": "x"}}\n</tool_call>'):
        assert parse_reply("mistral", reply) == ParsedReply(reply, [], [])


# none ----------------------------------------------------------------------------------------------------------

def test_none_leaves_every_reply_as_text() -> None:
    reply = f"{QWEN_CALL}\n[TOOL_CALLS]search[ARGS]{{}}\n"
    assert parse_reply("none", reply) == ParsedReply(reply, [], [])
