"""The pinned model manifest (``resources/models.toml``)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources

from .errors import ModelError


@dataclass(frozen=True)
class ConvertedFrom:
    """A model produced on this computer from a PyPI package's files, each pinned by SHA256."""

    package: str
    version: str
    module: str
    folder: str
    sha256: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelEntry:
    """One pinned model file."""

    id: str
    name: str
    roles: tuple[str, ...]
    file: str
    sha256: str
    size: int
    license: str
    min_memory_mb: int
    embedding_dimensions: int | None = None
    max_tokens: int | None = None
    converted_from: ConvertedFrom | None = None


def load_manifest(text: str | None = None) -> dict[str, ModelEntry]:
    """Parse the manifest (the packaged ``models.toml`` unless ``text`` is given), keyed by model id.

    Raises:
        ModelError: the manifest is not valid TOML or an entry lacks a required field.
    """
    if text is None:
        text = resources.files("engram.resources").joinpath("models.toml").read_text(encoding="utf-8")
    try:
        raw = tomllib.loads(text)
        entries = {}
        for item in raw.get("models", []):
            item = dict(item)
            conv = item.pop("converted_from", None)
            entry = ModelEntry(
                **{**item, "roles": tuple(item["roles"])},
                converted_from=ConvertedFrom(**conv) if conv else None,
            )
            entries[entry.id] = entry
    except (tomllib.TOMLDecodeError, TypeError, KeyError) as exc:
        raise ModelError(f"The model manifest is damaged ({exc}); reinstall Engram.") from exc
    return entries


def model_entry(model_id: str) -> ModelEntry:
    """The manifest entry for ``model_id``.

    Raises:
        ModelError: no such model in the manifest (the message lists the known ids).
    """
    entries = load_manifest()
    if model_id not in entries:
        raise ModelError(f"No model '{model_id}' in the manifest. Known models: {', '.join(entries)}.")
    return entries[model_id]
