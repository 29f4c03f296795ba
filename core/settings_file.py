"""Reading and writing settings: defaults, the TOML file, the environment.

Precedence is environment > file > default. Loading never creates or changes a file. Writing
(``set_value``/``reset_value``) validates first and replaces the file atomically, so a refused value
leaves the file exactly as it was.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomli_w
from pydantic import ValidationError

from .errors import SettingsError
from .fileio import atomic_write_bytes
from .settings import GROUPS, Settings, accepted_values, setting_keys

Origin = Literal["default", "file", "env"]
ENV_PREFIX = "ENGRAM_"


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
        group, name = _split(key)
        return getattr(getattr(self.settings, group), name)


def _split(key: str) -> tuple[str, str]:
    if key.count(".") != 1:
        raise SettingsError(_unknown_key_message(key))
    group, name = key.split(".")
    if group not in GROUPS or name not in GROUPS[group].model_fields:
        raise SettingsError(_unknown_key_message(key))
    return group, name


def _unknown_key_message(key: str) -> str:
    return f"Unknown setting '{key}'. Known settings: {', '.join(setting_keys())}."


def _is_list_key(key: str) -> bool:
    group, name = key.split(".")
    return GROUPS[group].model_fields[name].annotation == list[str]


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


def _read_file(path: Path) -> dict[str, dict[str, Any]]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsError(f"Cannot read the settings file {path}: {exc.strerror}.") from exc
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SettingsError(f"The settings file {path} is not valid TOML ({exc}). Fix or delete it; "
                            "`engram config reset --all` writes a fresh one.") from exc
    for group, values in data.items():
        if group not in GROUPS or not isinstance(values, dict):
            raise SettingsError(f"The settings file {path} has an unknown section [{group}]. "
                                f"Known sections: {', '.join(GROUPS)}.")
        for name in values:
            if name not in GROUPS[group].model_fields:
                raise SettingsError(f"The settings file {path} sets unknown key '{group}.{name}'. "
                                    f"{_unknown_key_message(f'{group}.{name}')}")
    return data


def _read_env(environ: Mapping[str, str]) -> dict[str, tuple[str, Any]]:
    """Environment overrides as ``{key: (variable, value)}``; a misspelt group variable is refused."""
    known = {env_name(k): k for k in setting_keys()}
    group_prefixes = tuple(ENV_PREFIX + g.upper() + "_" for g in GROUPS)
    found: dict[str, tuple[str, Any]] = {}
    for var, text in environ.items():
        if var in known:
            found[known[var]] = (var, parse_text_value(known[var], text))
        elif var.startswith(group_prefixes):
            raise SettingsError(f"Environment variable {var} names no setting. "
                                f"Settings are overridden as ENGRAM_<GROUP>_<KEY>, e.g. {env_name('search.limit')}; "
                                f"known settings: {', '.join(setting_keys())}.")
    return found


def _validate(data: dict[str, dict[str, Any]], where: dict[str, str]) -> Settings:
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(p) for p in err["loc"]]
        key = ".".join(loc[:2]) if len(loc) >= 2 else ".".join(loc)
        source = where.get(key, "")
        value = err.get("input")
        detail = err["msg"]
        accepts = accepted_values(key) if key in setting_keys() else "see `engram config list`"
        raise SettingsError(f"Setting '{key}'{source} got {value!r}: {detail}. It accepts {accepts}.") from None


def load_settings(settings_file: Path, environ: Mapping[str, str]) -> LoadedSettings:
    """Defaults, overridden by ``settings_file``, overridden by ``ENGRAM_<GROUP>_<KEY>`` variables.

    Raises:
        SettingsError: the file is unreadable or not TOML, or a key or value (from the file or the
            environment) is refused; the message names the key, where it came from and what it accepts.
    """
    data = _read_file(settings_file)
    origins: dict[str, Origin] = {k: "default" for k in setting_keys()}
    where: dict[str, str] = {}
    for group, values in data.items():
        for name in values:
            origins[f"{group}.{name}"] = "file"
            where[f"{group}.{name}"] = f" (from {settings_file})"
    for key, (var, value) in _read_env(environ).items():
        group, name = key.split(".")
        data.setdefault(group, {})[name] = value
        origins[key] = "env"
        where[key] = f" (from environment variable {var})"
    return LoadedSettings(_validate(data, where), origins, settings_file)


def set_value(settings_file: Path, key: str, text: str) -> Any:
    """Validate ``text`` for ``key`` and write it into ``settings_file``; returns the stored value.

    Raises:
        SettingsError: unknown key, a value the key does not accept, or an unreadable/unwritable file.
            Nothing is written in that case.
    """
    group, name = _split(key)
    data = _read_file(settings_file)
    data.setdefault(group, {})[name] = parse_text_value(key, text)
    settings = _validate(data, {key: ""})
    stored = getattr(getattr(settings, group), name)
    data[group][name] = stored
    _write(settings_file, data)
    return stored


def reset_value(settings_file: Path, key: str | None) -> None:
    """Remove ``key`` (or, with ``None``, every key) from ``settings_file`` so defaults apply again.

    Raises:
        SettingsError: unknown key, or the file cannot be read or written.
    """
    data = _read_file(settings_file)
    if key is None:
        data = {}
    else:
        group, name = _split(key)
        data.get(group, {}).pop(name, None)
        if group in data and not data[group]:
            del data[group]
    if not data and not settings_file.exists():
        return
    _write(settings_file, data)


def _write(settings_file: Path, data: dict[str, dict[str, Any]]) -> None:
    ordered = {g: dict(sorted(v.items())) for g, v in data.items() if v}
    try:
        atomic_write_bytes(settings_file, tomli_w.dumps(ordered).encode("utf-8"))
    except OSError as exc:
        raise SettingsError(f"Cannot write the settings file {settings_file}: {exc.strerror}.") from exc
