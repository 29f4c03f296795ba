"""Settings renamed since a file was written: old keys and environment variables read as their new names.

The helper model's settings were first a part of the ``tagger`` group (``tagger.llm_provider``,
``tagger.local.model`` …) although recall, summaries and chat threads use the same model; they are now the
``helper`` group (``helper.provider``, ``helper.local.model`` …), and ``tagger`` keeps what is about tagging.

A settings file that still holds old keys is rewritten once, the first time it is read: the old section
headers and key lines are renamed in the file's own text, so its comments, blank lines and order stay; only
when the file spells them another way (dotted keys, inline tables, a ``[helper]`` section already there) are
they moved through the TOML document instead, which keeps every other line but may drop a moved key's own
comment. Either way the result is checked to hold exactly the renamed settings before it is used. Where a
file or the environment sets both an old name and its new one, the new one wins and the old one is dropped.
Old environment variables keep working, with a note in Engram's log.
"""

from __future__ import annotations

import logging
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import tomlkit

from .settings_document import place_in_document, remove_from_document

logger = logging.getLogger(__name__)

_LOCAL_KEYS = ("model", "n_ctx", "n_gpu_layers", "threads", "batch")
#: Every renamed setting: old ``group.key`` → new ``group.key``.
RENAMED: dict[str, str] = {
    "tagger.llm_provider": "helper.provider",
    "tagger.base_url": "helper.base_url",
    "tagger.remote_model": "helper.remote_model",
    **{f"tagger.local.{key}": f"helper.local.{key}" for key in _LOCAL_KEYS},
}
#: Groups of settings that no longer exist, whose keys were all renamed.
OLD_GROUPS = frozenset({"tagger.local"})
#: The keys of ``[tagger]`` that move to ``[helper]``, by their name there.
_MOVED_TO_HELPER = {"llm_provider": "provider", "base_url": "base_url", "remote_model": "remote_model"}
_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
_KEY_LINE = re.compile(r"^(\s*)([A-Za-z0-9_-]+)(\s*=.*)$")


@dataclass(frozen=True)
class Migrated:
    """A settings file's text with old keys renamed, and one sentence per change for the log."""

    text: str
    changes: list[str]


def renamed_to(key: str) -> str | None:
    """The new name of an old setting ``key`` (``tagger.local.model`` → ``helper.local.model``), else None."""
    return RENAMED.get(key)


def migrate_text(text: str, flatten: Callable[[dict[str, Any]], dict[str, Any]]) -> Migrated | None:
    """``text`` (a settings file) with every old key under its new name; None when it holds no old key.

    ``flatten`` turns a parsed file into ``{group.key: value}`` (the settings file's own). A file that is not
    TOML is left alone (None): reading it reports that, as for any other file.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    flat = flatten(data)
    old = [key for key in flat if key in RENAMED]
    if not old:
        return None
    expected = {k: v for k, v in flat.items() if k not in RENAMED}
    changes = []
    for key in old:
        new = RENAMED[key]
        if new in flat:
            changes.append(f"dropped '{key}' (the file also sets '{new}', which wins)")
        else:
            expected[new] = flat[key]
            changes.append(f"renamed '{key}' to '{new}'")
    rewritten = _renamed_lines(text, {RENAMED[k] for k in old if RENAMED[k] in flat})
    if rewritten is None or _settings_of(rewritten, flatten) != expected:
        rewritten = _renamed_in_document(text, old, flat)
    if _settings_of(rewritten, flatten) != expected:  # never write a file that lost or changed a setting
        raise AssertionError("settings migration changed a value")  # a programming error; tests cover it
    return Migrated(_without_bare_tagger(rewritten, flatten), changes)


def migrated_environment(environ: Mapping[str, str], env_name: Callable[[str], str]) -> dict[str, str]:
    """``environ`` with each old variable (``ENGRAM_TAGGER_LOCAL_MODEL``) under its new name; a new variable
    that is set too wins. Each old variable found is noted in the log."""
    out = dict(environ)
    for old, new in RENAMED.items():
        old_var, new_var = env_name(old), env_name(new)
        if old_var not in out:
            continue
        value = out.pop(old_var)
        if new_var in out:
            logger.warning("environment variable %s is ignored: %s is set too (the helper model's settings are "
                           "now %s)", old_var, new_var, new)
        else:
            out[new_var] = value
            logger.warning("environment variable %s is read as %s; rename it (the helper model's settings are "
                           "now helper.*)", old_var, new_var)
    return out


def _settings_of(text: str, flatten: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any] | None:
    try:
        return flatten(tomllib.loads(text))
    except tomllib.TOMLDecodeError:
        return None


def _renamed_lines(text: str, shadowed: set[str]) -> str | None:
    """The file's lines with ``[tagger.local]`` as ``[helper.local]`` and ``[tagger]``'s helper keys moved to
    a ``[helper]`` section written just before ``[tagger]`` (with the comment lines directly above each moved
    key). Keys whose new name the file already sets (``shadowed``) are dropped. None when the file has a
    ``[helper…]`` section already (the document route handles that)."""
    lines = text.splitlines(keepends=True)
    headers = [(i, re.sub(r"\s+", "", m.group(1))) for i, line in enumerate(lines) if (m := _HEADER.match(line))]
    if any(name == "helper" or name.startswith("helper.") for _, name in headers):
        return None
    out: list[str] = []
    moved: list[str] = []
    tagger_at: int | None = None
    section = ""
    pending_comments: list[str] = []
    for line in lines:
        header = _HEADER.match(line)
        if header:
            out += pending_comments
            pending_comments = []
            section = re.sub(r"\s+", "", header.group(1))
            if section == "tagger":
                tagger_at = len(out)
            elif section == "tagger.local":
                line = line.replace(header.group(1), "helper.local", 1)
            out.append(line)
            continue
        if section != "tagger":
            out.append(line)
            continue
        if line.lstrip().startswith("#"):
            pending_comments.append(line)
            continue
        key = _KEY_LINE.match(line)
        if key and key.group(2) in _MOVED_TO_HELPER:
            new_name = _MOVED_TO_HELPER[key.group(2)]
            if f"helper.{new_name}" not in shadowed:
                moved += pending_comments
                ending = line[len(line.rstrip("\r\n")):] or "\n"
                moved.append(f"{key.group(1)}{new_name}{key.group(3).rstrip(chr(13))}{ending}")
            pending_comments = []
            continue
        out += pending_comments
        pending_comments = []
        out.append(line)
    out += pending_comments
    if moved:
        if tagger_at is None:
            return None
        # Before the comment lines that introduce [tagger]: they are about tagging.
        while tagger_at > 0 and out[tagger_at - 1].lstrip().startswith("#"):
            tagger_at -= 1
        block = ["[helper]\n", *moved, "\n"]
        if tagger_at > 0 and not out[tagger_at - 1].endswith("\n"):
            out[tagger_at - 1] += "\n"
        out[tagger_at:tagger_at] = block
    return "".join(out)


def _renamed_in_document(text: str, old: list[str], flat: dict[str, Any]) -> str:
    """The same renaming through the TOML document: each old key removed, and set under its new name unless
    the file sets that already."""
    document = tomlkit.parse(text)
    for key in old:
        remove_from_document(document, key)
        if RENAMED[key] not in flat:
            place_in_document(document, RENAMED[key], flat[key])
    return document.as_string()


def _without_bare_tagger(text: str, flatten: Callable[[dict[str, Any]], dict[str, Any]]) -> str:
    """``text`` without a ``[tagger]`` header the move left with nothing under it (no key, no comment)."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if not m or re.sub(r"\s+", "", m.group(1)) != "tagger" or m.group(2):
            continue
        rest = lines[i + 1:]
        end = next((j for j, later in enumerate(rest) if _HEADER.match(later)), len(rest))
        if all(not later.strip() for later in rest[:end]):
            candidate = "".join(lines[:i] + rest[end:] if end < len(rest) else lines[:i])
            if _settings_of(candidate, flatten) == _settings_of(text, flatten):
                return candidate
    return text
