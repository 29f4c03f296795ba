"""Reading and writing settings: defaults, the TOML file, the environment.

Precedence is environment > file > default. Loading never creates or changes a file. Writing
(``set_value``/``reset_value``) validates first and replaces the file atomically, so a refused value
leaves the file exactly as it was; it edits the file's TOML document in place, so the user's comments,
blank lines and order survive and only the changed key's line differs. Groups may nest (``[tagger.local]``
in the file, ``tagger.local.model`` as a key, ``ENGRAM_TAGGER_LOCAL_MODEL`` in the environment).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from functools import reduce
from pathlib import Path
from typing import Any, Literal

import tomlkit
from pydantic import ValidationError
from tomlkit.container import Container
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, InlineTable, Null, Table, Whitespace

from .errors import SettingsError
from .fileio import atomic_write_bytes
from .settings import GROUPS, Settings, accepted_values, is_group_field, setting_keys, split_key
from .urls import mask_credentials

Origin = Literal["default", "file", "env"]
ENV_PREFIX = "ENGRAM_"
Tree = dict[str, Any]


def env_name(key: str) -> str:
    """The environment variable that overrides ``group.key``: ``ENGRAM_GROUP_KEY``."""
    return ENV_PREFIX + key.replace(".", "_").upper()


@dataclass(frozen=True)
class LoadedSettings:
    """Validated settings plus where each key's value came from."""

    settings: Settings
    origins: dict[str, Origin]
    file: Path

    def value(self, key: str) -> Any:
        _check(key)
        return reduce(getattr, key.split("."), self.settings)


def _check(key: str) -> None:
    group, name = split_key(key)
    if group not in GROUPS or name not in GROUPS[group].model_fields or is_group_field(group, name):
        raise SettingsError(_unknown_key_message(key))


def _unknown_key_message(key: str) -> str:
    return f"Unknown setting '{key}'. Known settings: {', '.join(setting_keys())}."


def _is_list_key(key: str) -> bool:
    group, name = split_key(key)
    return GROUPS[group].model_fields[name].annotation == list[str]


def _set(tree: Tree, key: str, value: Any) -> None:
    *path, name = key.split(".")
    node = tree
    for part in path:
        node = node.setdefault(part, {})
    node[name] = value


def _flatten(tree: Tree, prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, value in tree.items():
        path = f"{prefix}{name}"
        if isinstance(value, dict) and path in GROUPS:
            flat.update(_flatten(value, path + "."))
        else:
            flat[path] = value
    return flat


def parse_text_value(key: str, text: str) -> Any:
    """Turn a value typed as text (CLI, environment) into what TOML would hold for ``key``.

    Scalars are passed through for pydantic to convert (``"20"`` → 20, ``"true"`` → True); lists
    accept JSON (``["a","b"]``) or comma-separated text (``a,b``).
    """
    if _is_list_key(key):
        stripped = text.strip()
        if stripped.startswith("["):
            try:
                parsed = json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise SettingsError(f"Setting '{key}' got {text!r}, which is not a JSON list ({exc.msg}). "
                                    f"It accepts {accepted_values(key)}.") from exc
            return parsed
        return [part.strip() for part in stripped.split(",") if part.strip()]
    return text


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise SettingsError(f"Cannot read the settings file {path}: {exc.strerror}.") from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_toml(path, exc) from exc


def _not_toml(path: Path, exc: Exception) -> SettingsError:
    return SettingsError(f"The settings file {path} is not valid TOML ({exc}). Fix or delete it; "
                         "`engram config reset --all` writes a fresh one.")


def _read_file(path: Path, text: str | None = None) -> Tree:
    """The file's settings tree (``text``: its content, already read), checked for unknown sections and keys."""
    try:
        data = tomllib.loads(_read_text(path) if text is None else text)
    except tomllib.TOMLDecodeError as exc:
        raise _not_toml(path, exc) from exc
    for group, values in data.items():
        if group not in GROUPS or not isinstance(values, dict):
            roots = sorted(g for g in GROUPS if "." not in g)
            raise SettingsError(f"The settings file {path} has an unknown section [{group}]. "
                                f"Known sections: {', '.join(roots)}.")
    for key in _flatten(data):
        group, name = split_key(key)
        if group not in GROUPS or name not in GROUPS[group].model_fields:
            raise SettingsError(f"The settings file {path} sets unknown key '{key}'. {_unknown_key_message(key)}")
    return data


def _read_env(environ: Mapping[str, str]) -> dict[str, tuple[str, Any]]:
    """Environment overrides as ``{key: (variable, value)}``; a misspelt group variable is refused."""
    known = {env_name(k): k for k in setting_keys()}
    group_prefixes = tuple(ENV_PREFIX + g.replace(".", "_").upper() + "_" for g in GROUPS)
    found: dict[str, tuple[str, Any]] = {}
    for var, text in environ.items():
        if var in known:
            found[known[var]] = (var, parse_text_value(known[var], text))
        elif var.startswith(group_prefixes):
            raise SettingsError(f"Environment variable {var} names no setting. "
                                f"Settings are overridden as ENGRAM_<GROUP>_<KEY>, e.g. {env_name('search.limit')}; "
                                f"known settings: {', '.join(setting_keys())}.")
    return found


def _validate(data: Tree, where: dict[str, str]) -> Settings:
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(p) for p in err["loc"]]
        keys = set(setting_keys())
        key = next((".".join(loc[:n]) for n in range(len(loc), 0, -1) if ".".join(loc[:n]) in keys), ".".join(loc))
        source = where.get(key, "")
        accepts = accepted_values(key) if key in keys else "see `engram config list`"
        given = err.get("input")
        shown = repr(mask_credentials(given)) if isinstance(given, str) else repr(given)
        raise SettingsError(f"Setting '{key}'{source} got {shown}: {err['msg']}. It accepts {accepts}.") from None


def load_settings(settings_file: Path, environ: Mapping[str, str]) -> LoadedSettings:
    """Defaults, overridden by ``settings_file``, overridden by ``ENGRAM_<GROUP>_<KEY>`` variables.

    Raises:
        SettingsError: the file is unreadable or not TOML, or a key or value (from the file or the
            environment) is refused; the message names the key, where it came from and what it accepts.
    """
    data = _read_file(settings_file)
    origins: dict[str, Origin] = {k: "default" for k in setting_keys()}
    where: dict[str, str] = {}
    for key in _flatten(data):
        origins[key] = "file"
        where[key] = f" (from {settings_file})"
    for key, (var, value) in _read_env(environ).items():
        _set(data, key, value)
        origins[key] = "env"
        where[key] = f" (from environment variable {var})"
    return LoadedSettings(_validate(data, where), origins, settings_file)


def set_value(settings_file: Path, key: str, text: str) -> Any:
    """Validate ``text`` for ``key`` and write it into ``settings_file``; returns the stored value.

    Raises:
        SettingsError: unknown key, a value the key does not accept, or an unreadable/unwritable file.
            Nothing is written in that case.
    """
    _check(key)
    content = _read_text(settings_file)
    data = _read_file(settings_file, content)
    _set(data, key, parse_text_value(key, text))
    stored = reduce(getattr, key.split("."), _validate(data, {key: ""}))
    document = _document(settings_file, content)
    _place(document, key, stored)
    _write(settings_file, document)
    return stored


def reset_value(settings_file: Path, key: str | None) -> None:
    """Remove ``key`` (or, with ``None``, every key) from ``settings_file`` so defaults apply again.

    Raises:
        SettingsError: unknown key, or the file cannot be read or written.
    """
    content = _read_text(settings_file)
    _read_file(settings_file, content)
    if key is None:
        document = tomlkit.document()
    else:
        _check(key)
        document = _document(settings_file, content)
        _remove(document, key)
    if not settings_file.exists() and not document.as_string():
        return
    _write(settings_file, document)


def _document(path: Path, text: str) -> tomlkit.TOMLDocument:
    """``text`` as an editable document that renders back to the same text, comments and all."""
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:  # tomllib accepted the file: only a tomlkit shortcoming lands here
        raise _not_toml(path, exc) from exc


def _place(document: tomlkit.TOMLDocument, key: str, value: Any) -> None:
    """Set ``key`` in ``document``: in place when present (its line keeps its comment), else in its table."""
    *path, name = key.split(".")
    parent: MutableMapping[str, Any] = document
    node: MutableMapping[str, Any] = document
    for depth, part in enumerate(path):
        if part not in node:
            # A group's new table goes to the end of the file (or of its parent group); a parent that holds no
            # keys of its own gets no header of its own (``[tagger.local]``, not ``[tagger]`` then ``[tagger.local]``).
            node[part] = tomlkit.inline_table() if isinstance(node, InlineTable) else tomlkit.table(
                is_super_table=depth < len(path) - 1)
        parent, node = node, node[part]
    if name in node:
        node[name] = value
        return
    table = _table_with_keys(parent, path[-1])
    if table is not None:
        body = table.value.body
        last = max(i for i, (k, item) in enumerate(body) if k is not None and not isinstance(item, (Table, AoT)))
        # After the table's last key: what trails it (blank lines, a comment) introduces the next table,
        # and tomlkit's ``add`` would append after that, so insert after the last key instead. (tomlkit has no
        # public insert; ``_insert_at`` is the one private call, present from 0.12 to 0.15.3 at least, and
        # ``_insert_after`` went away in 0.15.3.)
        if last + 1 < len(body):
            table.value._insert_at(last + 1, name, value)
        else:
            table.append(name, value)
        return
    node[name] = value


def _table_with_keys(parent: MutableMapping[str, Any], name: str) -> Table | None:
    """The ``[name]`` table under ``parent`` that has a header and keys (the first, when the file splits it)."""
    body = parent.body if isinstance(parent, Container) else parent.value.body if isinstance(parent, Table) else []
    for key, item in body:
        if (key is not None and key.key == name and isinstance(item, Table) and not item.is_super_table()
                and any(k is not None and not isinstance(v, (Table, AoT)) for k, v in item.value.body)):
            return item
    return None


def _remove(document: tomlkit.TOMLDocument, key: str) -> None:
    """Remove ``key`` from ``document``, and each of its tables left with no key and no comment."""
    *path, name = key.split(".")
    nodes: list[Any] = [document]
    for part in path:
        if part not in nodes[-1] or not isinstance(nodes[-1][part], MutableMapping):
            return
        nodes.append(nodes[-1][part])
    if name in nodes[-1]:
        del nodes[-1][name]
    for parent, part, child in reversed(list(zip(nodes, path, nodes[1:]))):
        if _is_bare(child):
            del parent[part]


def _is_bare(table: Any) -> bool:
    """A table with nothing of the user's left in it: no key, no comment, no comment on its header."""
    if not isinstance(table, Table):
        return not table
    return not table.trivia.comment and all(isinstance(item, (Null, Whitespace))
                                            for _, item in table.value.body)


def _write(settings_file: Path, document: tomlkit.TOMLDocument) -> None:
    try:
        atomic_write_bytes(settings_file, document.as_string().encode("utf-8"))
    except OSError as exc:
        raise SettingsError(f"Cannot write the settings file {settings_file}: {exc.strerror}.") from exc
