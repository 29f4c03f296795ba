"""Reading and writing settings: defaults, the TOML file, the environment.

Precedence is environment > file > default. Loading never creates a file, and changes one only to rename
settings that have a new name (``settings_migration``): once, atomically, comments kept, and only when the
renamed file is valid. Writing (``set_value``/``reset_value``) validates first and replaces the file
atomically, so a refused value leaves the file exactly as it was; it edits the file's TOML document in place,
so the user's comments, blank lines and order survive and only the changed key's line differs. Groups may
nest (``[helper.local]`` in the file, ``helper.local.model`` as a key, ``ENGRAM_HELPER_LOCAL_MODEL`` in the
environment).
"""

from __future__ import annotations

import json
import logging
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import reduce
from pathlib import Path
from typing import Any, Literal

import tomlkit
from pydantic import ValidationError
from tomlkit.exceptions import TOMLKitError

from .errors import SettingsError
from .fileio import atomic_write_bytes
from .settings import GROUPS, Settings, accepted_values, is_group_field, setting_keys, split_key
from .settings_document import place_in_document, remove_from_document
from .settings_migration import OLD_GROUPS, migrate_text, migrated_environment, renamed_to
from .urls import mask_credentials

Origin = Literal["default", "file", "env"]
ENV_PREFIX = "ENGRAM_"
Tree = dict[str, Any]
logger = logging.getLogger(__name__)


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
    new = renamed_to(key)
    if new is not None:
        return f"Unknown setting '{key}': it is now '{new}' (the helper model's settings are helper.*)."
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


def _flatten(tree: Tree, prefix: str = "", groups: Collection[str] = GROUPS.keys()) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, value in tree.items():
        path = f"{prefix}{name}"
        if isinstance(value, dict) and path in groups:
            flat.update(_flatten(value, path + ".", groups))
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


def _current_text(path: Path) -> str:
    """The settings file's text with old setting names renamed (``settings_migration``): a file that holds
    any is rewritten with the new names first, once, atomically, comments kept.

    Raises:
        SettingsError: the file cannot be read; or it holds old names and, renamed, would still be refused
            (an unknown key, a value out of range): the file is left as it was and the message says why.
    """
    text = _read_text(path)
    migrated = migrate_text(text, lambda data: _flatten(data, groups=GROUPS.keys() | OLD_GROUPS))
    if migrated is None:
        return text
    try:
        data = _read_file(path, migrated.text)
        _validate(data, {key: f" (from {path})" for key in _flatten(data)})
    except SettingsError as exc:
        raise SettingsError(f"{exc} The file still uses old setting names ({'; '.join(migrated.changes)} once it "
                            "is valid) and was left as it was.") from None
    try:
        atomic_write_bytes(path, migrated.text.encode("utf-8"))
    except OSError as exc:  # a read-only file still loads: the new names are used in memory
        logger.warning("settings file %s: could not rename old settings in it (%s); read them as their new "
                       "names", path, exc.strerror)
        return migrated.text
    logger.warning("settings file %s: %s", path, "; ".join(migrated.changes))
    return migrated.text


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
    data = _read_file(settings_file, _current_text(settings_file))
    environ = migrated_environment(environ, env_name)
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
    content = _current_text(settings_file)
    data = _read_file(settings_file, content)
    _set(data, key, parse_text_value(key, text))
    stored = reduce(getattr, key.split("."), _validate(data, {key: ""}))
    document = _document(settings_file, content)
    place_in_document(document, key, stored)
    _write(settings_file, document)
    return stored


def reset_value(settings_file: Path, key: str | None) -> None:
    """Remove ``key`` (or, with ``None``, every key) from ``settings_file`` so defaults apply again.

    With ``None`` the file is replaced whatever it holds, so a file that is not TOML, has unknown keys or
    refused values is recovered this way (the messages for those say so); it is never read.

    Raises:
        SettingsError: unknown key, or the file cannot be read or written.
    """
    if key is None:
        if settings_file.exists() or settings_file.is_symlink():
            _write(settings_file, tomlkit.document())
        return
    _check(key)
    content = _current_text(settings_file)
    _read_file(settings_file, content)
    document = _document(settings_file, content)
    remove_from_document(document, key)
    if not settings_file.exists() and not document.as_string():
        return
    _write(settings_file, document)


def _document(path: Path, text: str) -> tomlkit.TOMLDocument:
    """``text`` as an editable document that renders back to the same text, comments and all."""
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:  # tomllib accepted the file: only a tomlkit shortcoming lands here
        raise _not_toml(path, exc) from exc


def _write(settings_file: Path, document: tomlkit.TOMLDocument) -> None:
    try:
        atomic_write_bytes(settings_file, document.as_string().encode("utf-8"))
    except OSError as exc:
        raise SettingsError(f"Cannot write the settings file {settings_file}: {exc.strerror}.") from exc
