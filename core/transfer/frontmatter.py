"""Front matter of a Markdown note: the ``---`` block of ``key: value`` lines at its top (a YAML subset).

What the peers' notes use is read — ``key: value``, quoted values, ``[a, b]`` lists and ``- item`` lists under a
key; anything else in the block (nested mappings, multi-line strings) is skipped, not refused.
"""

from __future__ import annotations

import re

FrontMatter = dict[str, str | list[str]]
_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w-]*)\s*:\s*(?P<value>.*)$")
_ITEM = re.compile(r"^\s*-\s+(?P<value>.*)$")


def _unquoted(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return re.sub(r"\s+#.*$", "", value)  # a trailing comment


def _value(raw: str) -> str | list[str]:
    raw = raw.strip()
    if raw.startswith("[") and raw.endswith("]"):
        return [v for v in (_unquoted(p) for p in raw[1:-1].split(",")) if v]
    return _unquoted(raw)


def split_front_matter(text: str) -> tuple[FrontMatter, str]:
    """(the front matter of ``text``, the text after it); no front matter gives ``({}, text)``."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return {}, text
    found: FrontMatter = {}
    pending: str | None = None  # a key whose value is the "- item" lines below it
    for line in lines[1:end]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM.match(line)
        if item and pending is not None:
            listed = found.setdefault(pending, [])
            if isinstance(listed, list):
                listed.append(_unquoted(item["value"]))
            continue
        pair = _KEY.match(line)
        if pair is None:
            pending = None
            continue
        if pair["value"].strip():
            found[pair["key"]] = _value(pair["value"])
            pending = None
        else:
            pending = pair["key"]
    return found, "".join(lines[end + 1:])


def text_of(matter: FrontMatter, key: str) -> str:
    """The front matter's ``key`` as one string ("" when absent; a list joined with commas)."""
    value = matter.get(key, "")
    return ", ".join(value) if isinstance(value, list) else value


def list_of(matter: FrontMatter, key: str) -> list[str]:
    """The front matter's ``key`` as a list (``tags: a, b`` and ``tags: [a, b]`` alike)."""
    value = matter.get(key, [])
    if isinstance(value, str):
        value = value.split(",")
    return [v.strip() for v in value if v.strip()]
