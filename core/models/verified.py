"""Model files verified once: hashed when they arrive or when their identity changes, checked by identity after.

Hashing a model takes seconds (2.7 GB for Qwen3.5-4B); reading its identity takes microseconds. The
identity is what ``os.stat`` says of the file: size, modification time, inode (the file id on Windows)
and device, and on POSIX the change time too, which moves whenever the file is written or its times are
set, so a file rewritten in place with its old modification time put back is still noticed.

``verified.json`` in the models folder records, per model id, the path of the file last verified, the
identity it had when it was hashed and the SHA256 it was checked against::

    {"<model id>": {"path": "/…/Qwen3.5-4B-Q4_K_M.gguf", "sha256": "…", "size": 2740937888, "mtime_ns": …,
                    "inode": …, "device": …, "ctime_ns": …, "verified_at": "2025-01-01T12:00:00+00:00"}}

A record vouches for a file only while its path, its identity and that SHA256 all equal what is expected
now: a new pin, another path or any change sends the file back to hashing, and a file that no longer
matches loses its record. One record per model keeps the file small when a model's path changes. The file is rewritten whole and replaced atomically (mode 0600); two processes writing
at once may lose each other's new record (the loser's file is hashed again next time), never corrupt it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..fileio import atomic_write_bytes, sha256_file

logger = logging.getLogger(__name__)

VERIFIED = "verified.json"

# Serialises this process's read-modify-write of the record file (other processes: see the docstring).
_WRITING = threading.Lock()


@dataclass(frozen=True)
class FileIdentity:
    """What ``os.stat`` says of a file; any change to its bytes changes at least one field."""

    size: int
    mtime_ns: int
    inode: int
    device: int
    ctime_ns: int  # 0 on Windows, where st_ctime is the creation time, not the last change

    @classmethod
    def of(cls, path: Path) -> FileIdentity:
        """The identity of ``path`` now.

        Raises:
            OSError: the file cannot be looked at (gone, no permission).
        """
        st = os.stat(path)
        return cls(st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev, st.st_ctime_ns if os.name != "nt" else 0)


class _Record(BaseModel):
    path: str
    sha256: str
    size: int
    mtime_ns: int
    inode: int
    device: int
    ctime_ns: int
    verified_at: str = ""

    def identity(self) -> FileIdentity:
        return FileIdentity(self.size, self.mtime_ns, self.inode, self.device, self.ctime_ns)


_RECORDS = TypeAdapter(dict[str, _Record])


@dataclass(frozen=True)
class Checked:
    """The outcome of ``VerifiedFiles.check``."""

    sha256: str  # the file's SHA256: hashed now, or the recorded one when its identity vouched for it
    hashed: bool
    changed: bool  # the file had been verified against the expected SHA256, and has changed since


class VerifiedFiles:
    """The record of verified model files in ``folder`` (``verified.json``)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / VERIFIED

    def check(self, model_id: str, path: Path, expected_sha256: str, full: bool = False) -> Checked:
        """The SHA256 of ``path``, read from the record when the file's identity is the one verified against
        ``expected_sha256``, hashed otherwise (always with ``full``: what an identity cannot show, such as
        a disk's silent damage, only the bytes can). A hash that matches records the identity the file had while it
        was hashed; one that does not drops the record of ``model_id``. The caller compares
        ``sha256`` with what it expects and refuses the file when they differ.

        A record that cannot be written (a read-only folder) is logged; the file is then hashed next time.

        Raises:
            OSError: the file cannot be read.
        """
        before = FileIdentity.of(path)
        record = self._read().get(model_id)
        if record is not None and record.path != str(path):
            record = None  # the record of another copy says nothing of this one
        if not full and record is not None and record.sha256 == expected_sha256 and record.identity() == before:
            return Checked(expected_sha256, hashed=False, changed=False)
        actual = sha256_file(path)
        # A file written while it was hashed is not recorded: the next call hashes it again.
        steady = FileIdentity.of(path) == before
        if actual == expected_sha256 and steady:
            self.record(model_id, path, actual, before)
        elif record is not None:
            self.forget(model_id, path)
        changed = record is not None and record.sha256 == expected_sha256 and actual != expected_sha256
        return Checked(actual, hashed=True, changed=changed)

    def record(self, model_id: str, path: Path, sha256: str, identity: FileIdentity) -> None:
        """Record that ``path``, with ``identity``, was verified to have ``sha256`` (e.g. as it arrived); this
        replaces the record of ``model_id``, whatever path it had."""
        entry = _Record(path=str(path), sha256=sha256, **asdict(identity),
                        verified_at=datetime.now(UTC).isoformat(timespec="seconds"))
        with _WRITING:
            records = self._read()
            records[model_id] = entry
            self._write(records)

    def forget(self, model_id: str, path: Path | None = None) -> bool:
        """Drop the record of ``model_id`` (only if it is of ``path``, when given); ``False`` if there was none."""
        with _WRITING:
            records = self._read()
            record = records.get(model_id)
            if record is None or (path is not None and record.path != str(path)):
                return False
            del records[model_id]
            self._write(records)
        return True

    def _read(self) -> dict[str, _Record]:
        try:
            return _RECORDS.validate_json(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValidationError) as exc:
            # Derived state: a damaged record only costs one hash per file, then it is rewritten.
            logger.warning("ignoring the damaged record of verified models %s (%s)", self.path, exc)
            return {}

    def _write(self, records: dict[str, _Record]) -> None:
        data = {model: record.model_dump() for model, record in records.items()}
        try:
            atomic_write_bytes(self.path, json.dumps(data, indent=2, sort_keys=True).encode(), mode=0o600)
        except OSError as exc:
            logger.warning("cannot record verified models in %s (%s); they are hashed again next time",
                           self.path, exc.strerror)
