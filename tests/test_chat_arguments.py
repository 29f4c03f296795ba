"""Typing a model's tool-call arguments by the tool's real JSON schema (the search and recall tools')."""

from __future__ import annotations

from typing import Any

import pytest

from engram.core.catalog import call_model, validate_call
from engram.core.chat.arguments import type_arguments
from engram.core.errors import EngramError, InvalidArgument
from engram.mcp.server import input_schema

#: What pydantic emits for the search tool's call model (Optional values as anyOf with null, $defs for recall).
SEARCH = call_model("search").model_json_schema()
#: What MCP clients see for the same tool: nulls and titles dropped.
SEARCH_MCP = input_schema("search")
RECALL = call_model("recall").model_json_schema()


def refusal(arguments: dict[str, Any], schema: dict[str, Any]) -> str:
    with pytest.raises(InvalidArgument) as refused:
        type_arguments(arguments, schema)
    assert isinstance(refused.value, EngramError)
    return refused.value.message


@pytest.mark.parametrize("schema", [SEARCH, SEARCH_MCP], ids=["pydantic", "mcp"])
def test_text_values_are_read_as_json_where_the_schema_wants_numbers_and_lists(schema: dict[str, Any]) -> None:
    typed = type_arguments({"query": "lighthouse", "limit": "3", "tags": '["a", "b"]', "channels": '["lexical"]',
                            "max_chars": "2000"}, schema)
    assert typed == {"query": "lighthouse", "limit": 3, "tags": ["a", "b"], "channels": ["lexical"],
                     "max_chars": 2000}
    assert validate_call("search", typed).model_dump()["limit"] == 3  # what the tool itself then accepts


def test_strings_stay_verbatim_even_when_they_look_like_json_or_span_lines() -> None:
    query = 'def f():\n    return {"a": 1}\n\n'
    typed = type_arguments({"query": query, "project": "42", "type": "null", "source_prefix": "[1]"}, SEARCH)
    assert typed == {"query": query, "project": "42", "type": "null", "source_prefix": "[1]"}


def test_json_values_of_the_right_type_pass_unchanged_in_the_order_given() -> None:
    typed = type_arguments({"tags": ["x"], "limit": 5, "query": "q", "kind": "note"}, SEARCH)
    assert list(typed) == ["tags", "limit", "query", "kind"]
    assert typed == {"tags": ["x"], "limit": 5, "query": "q", "kind": "note"}


def test_optional_values_take_null_as_json_or_as_text_where_null_is_accepted() -> None:
    assert type_arguments({"query": "q", "limit": None, "kind": "null"}, SEARCH) == {
        "query": "q", "limit": None, "kind": None}


def test_an_integral_number_is_an_integer_but_a_fraction_or_a_boolean_is_not() -> None:
    assert type_arguments({"query": "q", "limit": 3.0}, SEARCH) == {"query": "q", "limit": 3}
    assert refusal({"query": "q", "limit": 2.5}, SEARCH) == (
        "Argument 'limit' got 2.5, but it accepts an integer from 1 to 50 or null.")
    assert refusal({"query": "q", "limit": True}, SEARCH) == (
        "Argument 'limit' got true, but it accepts an integer from 1 to 50 or null.")


def test_a_refusal_names_each_argument_what_was_given_and_what_it_accepts() -> None:
    message = refusal({"limit": "many", "kind": "notes", "colour": "red", "tags": [1, "x"],
                       "channels": ["semantic", "web"]}, SEARCH)
    assert message == (
        "Argument 'limit' got \"many\", but it accepts an integer from 1 to 50 or null; "
        "argument 'kind' got \"notes\", but it accepts one of \"note\", \"exchange\", \"chunk\", \"content\" or null; "
        "argument 'colour' (given \"red\") is not one of the arguments it accepts: query, limit, project, "
        "source_prefix, kind, type, tags, since, until, channels, history, workspace, run, max_chars; "
        "argument 'tags[0]' got 1, but it accepts a string; "
        "argument 'channels[1]' got \"web\", but it accepts one of \"semantic\", \"lexical\", \"graph\"; "
        "missing required argument 'query' (a string).")


def test_a_string_argument_refuses_other_json_types() -> None:
    assert refusal({"query": 5}, SEARCH) == "Argument 'query' got 5, but it accepts a string."
    assert refusal({"query": "q", "since": 5}, SEARCH_MCP) == (
        "Argument 'since' got 5, but it accepts a date-time string such as 2024-05-01T12:00:00Z.")


def test_the_mcp_schema_without_nulls_refuses_null() -> None:
    assert refusal({"query": "q", "limit": None}, SEARCH_MCP) == (
        "Argument 'limit' got null, but it accepts an integer from 1 to 50.")


def test_text_that_is_not_json_or_is_a_json_string_is_refused_for_other_types() -> None:
    assert refusal({"query": "q", "tags": "a, b"}, SEARCH_MCP) == (
        "Argument 'tags' got \"a, b\", but it accepts a JSON list whose items are each a string.")
    assert refusal({"query": "q", "limit": '"3"'}, SEARCH_MCP) == (
        "Argument 'limit' got \"\\\"3\\\"\", but it accepts an integer from 1 to 50.")


def test_nested_objects_follow_refs_and_are_typed_inside() -> None:
    typed = type_arguments({"question": "q", "plan": '[{"tool": "search", "args": {"query": "x", "limit": "2"}}]',
                            "condense": "false"}, RECALL)
    # "args" is a free object: its values are the inner tool's to type, so they stay as given.
    assert typed == {"question": "q", "plan": [{"tool": "search", "args": {"query": "x", "limit": "2"}}],
                     "condense": False}


def test_nested_problems_name_the_path_inside_the_argument() -> None:
    message = refusal({"question": "q", "plan": [{"tool": 5, "args": {}, "extra": 1}, {"args": {}}],
                       "condense": "no"}, RECALL)
    assert message == (
        "Argument 'plan[0].tool' got 5, but it accepts a string; "
        "key 'plan[0].extra' (given 1) is not one of the keys it accepts: tool, args; "
        "missing required key 'plan[1].tool' (a string); "
        "argument 'condense' got \"no\", but it accepts true or false.")


def test_unknown_names_are_refused_even_where_the_schema_allows_extra_properties() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert refusal({"a": "x", "b": 1}, schema) == (
        "Argument 'b' (given 1) is not one of the arguments it accepts: a.")


def test_plain_schemas_with_type_lists_numbers_and_any_values() -> None:
    schema = {"type": "object", "required": ["n"], "properties": {
        "n": {"type": "number"}, "flag": {"type": ["boolean", "null"]}, "free": {}, "obj": {"type": "object"}}}
    assert type_arguments({"n": "2.5", "flag": "true", "free": "[1]", "obj": '{"k": [1]}'}, schema) == {
        "n": 2.5, "flag": True, "free": "[1]", "obj": {"k": [1]}}
    assert type_arguments({"n": 7, "flag": "null"}, schema) == {"n": 7, "flag": None}
    assert refusal({"n": "True", "flag": "yes"}, schema) == (
        "Argument 'n' got \"True\", but it accepts a number; "
        "argument 'flag' got \"yes\", but it accepts true or false or null.")
