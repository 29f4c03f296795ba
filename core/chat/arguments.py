"""Typing a model's tool-call arguments by the tool's JSON schema.

Models write arguments loosely: qwen-xml gives every value as raw text, and JSON formats often quote
numbers or lists. ``type_arguments`` reads each value as the schema's type says: a string given for a
number, integer, boolean, null, array or object is read as JSON; a value the schema types as a string is
kept verbatim, however it looks (multi-line text and text that happens to be JSON included). It checks the
names, the types, ``enum`` and a number's ``minimum`` and ``maximum`` (chat's own ``conversation_history`` has
no other validation); lengths and patterns are the tool's own validation to check (the catalog's
``validate_call``), which also fills defaults.

The schemas are those pydantic emits for the tools' call models: an object with ``properties``,
``required``, ``anyOf`` with ``{"type": "null"}`` for optional values, ``enum``, ``items`` and local
``$ref`` into ``$defs``.
"""

from __future__ import annotations

import json
import reprlib
from typing import Any

from ..errors import InvalidArgument

#: What a JSON value's Python type is called in the schema.
_JSON_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "object",
               type(None): "null"}


class _Invalid:
    """The result of a value that was refused (its problem is already recorded)."""


_INVALID = _Invalid()


def type_arguments(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` typed by ``schema`` (a JSON schema of an object): only the names given, in their order.

    Every argument name must be one of the schema's properties (whatever ``additionalProperties`` says at
    the top), every required one must be given, and each value must be of its type once read.

    Raises:
        InvalidArgument: an unknown or missing argument, or a value of the wrong type; the message names
            each such argument, what was given and what it accepts.
    """
    typing = _Typing(schema)
    typed = typing.fields(arguments, schema, "", top=True)
    if typing.problems:
        message = "; ".join(typing.problems)
        raise InvalidArgument(message[0].upper() + message[1:] + ".")
    assert isinstance(typed, dict)
    return typed


class _Typing:
    """One typing pass over a call's arguments: the root schema (for ``$ref``) and the problems found."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.problems: list[str] = []
        #: Where a value was refused itself (not inside it), in order.
        self.refused: list[str] = []

    def resolve(self, node: Any) -> dict[str, Any]:
        """``node`` with a local ``$ref`` followed (``#/$defs/Name``); an unusable node accepts anything."""
        seen = 0
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and seen < 32:
            target: Any = self.root
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target.get(part) if isinstance(target, dict) else None
            node = {**(target if isinstance(target, dict) else {}), **{k: v for k, v in node.items() if k != "$ref"}}
            seen += 1
        return node if isinstance(node, dict) else {}

    def fields(self, given: dict[str, Any], node: dict[str, Any], where: str, *, top: bool = False) -> dict[str, Any]:
        found = node.get("properties")
        properties: dict[str, Any] = found if isinstance(found, dict) else {}
        extra = node.get("additionalProperties", True)
        typed: dict[str, Any] = {}
        for name, value in given.items():
            path = f"{where}.{name}" if where else name
            if name in properties:
                result = self.value(value, properties[name], path)
            elif top or extra is False:
                known = ", ".join(properties) or "none"
                self.problems.append(f"{'argument' if top else 'key'} '{path}' (given {_shown(value)}) is not one "
                                     f"of the {'arguments' if top else 'keys'} it accepts: {known}")
                continue
            elif isinstance(extra, dict):
                result = self.value(value, extra, path)
            else:
                result = value
            if not isinstance(result, _Invalid):
                typed[name] = result
        for name in node.get("required", ()):
            if name not in given:
                path = f"{where}.{name}" if where else name
                self.problems.append(f"missing required {'argument' if top else 'key'} '{path}' "
                                     f"({self.describe(properties.get(name, {}))})")
        return typed

    def value(self, value: Any, node: Any, where: str) -> Any:
        """``value`` typed by ``node``, or ``_INVALID`` with the problem recorded."""
        node = self.resolve(node)
        options = self.options(node)
        if options is not None:
            return self.any_of(value, node, options, where)
        given = value
        if isinstance(value, str) and not _takes_string(node):
            value = _read_json(value)
            if isinstance(value, _Invalid | str):
                return self.refuse(given, node, where)
        result = self.of_type(value, given, node, where)
        if isinstance(result, _Invalid):
            return result
        if "enum" in node and not any(_same(result, allowed) for allowed in node["enum"]):
            return self.refuse(given, node, where)
        if "const" in node and not _same(result, node["const"]):
            return self.refuse(given, node, where)
        return result

    def options(self, node: dict[str, Any]) -> list[dict[str, Any]] | None:
        """The alternatives of a node (``anyOf``, ``oneOf``, or a list of types), or None for a single type."""
        for key in ("anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                rest = {k: v for k, v in node.items() if k not in (key, "default", "description", "title")}
                return [{**rest, **self.resolve(option)} for option in node[key]]
        if isinstance(node.get("type"), list):
            return [{**node, "type": kind} for kind in node["type"]]
        return None

    def any_of(self, value: Any, node: dict[str, Any], options: list[dict[str, Any]], where: str) -> Any:
        given = value
        if isinstance(value, str):
            # Text is first offered verbatim to the options that take text, and only then read as JSON for
            # the others: "null" for an optional enum is null, but "null" for an optional string is "null".
            for option in options:
                if _takes_string(option) and not isinstance(result := _Typing(self.root).value(value, option, where),
                                                             _Invalid):
                    return result
            value = _read_json(value)
            if isinstance(value, _Invalid | str):
                return self.refuse(given, node, where)
            options = [option for option in options if not _takes_string(option)]
        non_null = [option for option in options if option.get("type") != "null"]
        if value is None:
            return None if len(non_null) < len(options) else self.refuse(given, node, where)
        for option in non_null:
            tried = _Typing(self.root)
            result = tried.value(value, option, where)
            if not isinstance(result, _Invalid):
                return result
            if len(non_null) == 1 and tried.refused != [where]:
                # "X or null" with X refused deeper down (an item of a list, a key): those problems are precise.
                self.problems += tried.problems
                self.refused += tried.refused
                return _INVALID
        return self.refuse(given, node, where)

    def of_type(self, value: Any, given: Any, node: dict[str, Any], where: str) -> Any:
        """``value`` (read from ``given``) checked against the node's one type; lists and objects typed inside."""
        kind = node.get("type")
        if kind is None:
            return value
        actual = _JSON_TYPES.get(type(value))
        if kind == "integer" and isinstance(value, float) and value.is_integer():
            value, actual = int(value), "integer"
        if kind == "number" and actual == "integer":
            actual = "number"
        if actual != kind:
            return self.refuse(given, node, where)
        if kind in ("integer", "number") and not _in_range(value, node):
            return self.refuse(given, node, where)
        if kind == "array" and "items" in node:
            typed = [self.value(item, node["items"], f"{where}[{i}]") for i, item in enumerate(value)]
            return _INVALID if any(isinstance(item, _Invalid) for item in typed) else typed
        if kind == "object" and (isinstance(node.get("properties"), dict) or "required" in node
                                 or node.get("additionalProperties") is False
                                 or isinstance(node.get("additionalProperties"), dict)):
            before = len(self.problems)
            fields = self.fields(value, node, where)
            return _INVALID if len(self.problems) > before else fields
        return value

    def refuse(self, given: Any, node: dict[str, Any], where: str) -> _Invalid:
        self.problems.append(f"argument '{where}' got {_shown(given)}, but it accepts {self.describe(node)}")
        self.refused.append(where)
        return _INVALID

    def describe(self, node: Any, depth: int = 0) -> str:
        """What ``node`` accepts, in words: "an integer from 1 to 50 or null"."""
        node = self.resolve(node)
        if depth > 4:
            return "a value"
        options = self.options(node)
        if options is not None:
            words = []
            for option in options:
                if (said := self.describe(option, depth + 1)) not in words:
                    words.append(said)
            return " or ".join(words)
        if "enum" in node:
            return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in node["enum"])
        if "const" in node:
            return json.dumps(node["const"], ensure_ascii=False)
        kind = node.get("type")
        if kind == "string":
            return "a date-time string such as 2024-05-01T12:00:00Z" if node.get("format") == "date-time" \
                else "a string"
        if kind in ("integer", "number"):
            said = "an integer" if kind == "integer" else "a number"
            low, high = node.get("minimum"), node.get("maximum")
            if low is not None and high is not None:
                return f"{said} from {low} to {high}"
            return said + (f" of at least {low}" if low is not None else "") + (
                f" of at most {high}" if high is not None else "")
        if kind == "boolean":
            return "true or false"
        if kind == "null":
            return "null"
        if kind == "array":
            items = node.get("items")
            return "a JSON list" + (f" whose items are each {self.describe(items, depth + 1)}" if items else "")
        if kind == "object":
            keys = node.get("properties")
            return "a JSON object" + (f" with keys {', '.join(keys)}" if isinstance(keys, dict) and keys else "")
        return "any JSON value"


def _in_range(value: float, node: dict[str, Any]) -> bool:
    low, high = node.get("minimum"), node.get("maximum")
    return (not isinstance(low, int | float) or value >= low) and (not isinstance(high, int | float) or value <= high)


def _read_json(text: str) -> Any:
    """``text`` read as one JSON value, or ``_INVALID``."""
    try:
        return json.loads(text)
    except ValueError:
        return _INVALID


def _takes_string(node: dict[str, Any]) -> bool:
    """Whether the node accepts text as it is (so a string given for it is never read as JSON)."""
    kind = node.get("type")
    return kind == "string" or (kind is None and ("enum" not in node or _has_string(node["enum"])))


def _has_string(values: Any) -> bool:
    return isinstance(values, list) and any(isinstance(v, str) for v in values)


def _same(value: Any, allowed: Any) -> bool:
    """JSON equality: ``true`` is not ``1``."""
    return type(value) is type(allowed) and value == allowed or (
        isinstance(value, int | float) and isinstance(allowed, int | float)
        and not isinstance(value, bool) and not isinstance(allowed, bool) and value == allowed)


def _shown(value: Any) -> str:
    """A given value as the model wrote it (JSON), at most 80 characters, however deeply it nests."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):  # nested past the stack; an int too long to write
        text = reprlib.repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
