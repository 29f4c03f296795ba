"""Identifiers and names a memory mentions: the nodes that connect memories in the graph plane."""

from __future__ import annotations

import re

_BACKTICKED = re.compile(r"``?([A-Za-z_][\w.:/-]{2,80}?)(?:\(\))?``?")
_CAMEL = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b")
_SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9]\b")
_DOTTED = re.compile(r"\b[A-Za-z_]\w+(?:\.[A-Za-z_]\w+){1,6}\b")
_NOT_NAMES = {"e.g", "i.e", "etc", "true", "false", "none", "null", "self", "cls", "this"}
_FILE_SUFFIX = re.compile(r"\.(txt|rst|md|html|py|js|json|png|jpg|gif|css)$")


def extract_entities(text: str, limit: int = 16) -> list[str]:
    """Up to ``limit`` distinct identifiers in ``text``, lower-cased, in order of first appearance.

    Counted: backticked names (Markdown/reST literals), CamelCase words with two or more humps,
    snake_case and UPPER_SNAKE names, and dotted paths such as ``django.middleware.security``.
    """
    found: dict[str, int] = {}
    for pattern in (_BACKTICKED, _CAMEL, _SNAKE, _DOTTED):
        for match in pattern.finditer(text):
            name = (match.group(1) if match.groups() else match.group(0)).strip(".:/-").lower()
            name = name.removeprefix("self.").removeprefix("cls.").removeprefix("this.")
            if len(name) < 3 or name in _NOT_NAMES or _FILE_SUFFIX.search(name) or name.isdigit():
                continue
            found.setdefault(name, match.start())
    return [name for name, _ in sorted(found.items(), key=lambda kv: kv[1])[:limit]]
