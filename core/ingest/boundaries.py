"""What an ingest may read: folders under ``ingest.allowed_roots``, never Engram's own folders.

Any MCP client can ask the service to ingest a path, and what is ingested can be read back by any
client: so an ingest is bounded to the folders the user allowed (by default their home), and Engram's
data, settings and log folders (memories, model files, the service token) are never read, even
inside an allowed folder. Paths are judged where they really are, after following links, so a link
in the home folder that leads to ``/etc`` is outside. Paths must be absolute: the service runs in a
folder of its own, so a relative path means nothing to it (the CLI and the stdio launcher resolve
relative paths against their caller's folder before they call).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import IngestError, InvalidArgument


@dataclass(frozen=True)
class Boundaries:
    """The folders an ingest may read (``allowed``) and those it never reads (``own``), all resolved."""

    allowed: tuple[Path, ...]
    own: tuple[Path, ...]

    @classmethod
    def of(cls, allowed_roots: Sequence[str], own_folders: Sequence[Path]) -> Boundaries:
        """``allowed_roots`` as the setting holds them (``~`` expanded), ``own_folders`` Engram's folders."""
        return cls(tuple(_real(Path(root).expanduser()) for root in allowed_roots),
                   tuple(_real(folder) for folder in own_folders))

    def is_own(self, path: Path) -> bool:
        """Whether the resolved ``path`` is one of Engram's folders or inside one."""
        return any(path == own or path.is_relative_to(own) for own in self.own)

    def check(self, path: str) -> Path:
        """``path`` (as the caller wrote it, ``~`` allowed) resolved, once it is allowed.

        Raises:
            InvalidArgument: ``path`` is not absolute.
            IngestError: it names no usable path, is one of Engram's own folders (or inside one), or lies
                outside every allowed root.
        """
        shown = repr(path)[1:-1][:200]
        try:
            target = Path(path).expanduser()
        except RuntimeError as exc:  # "~someone" for a user this computer does not know
            raise IngestError(f"'{shown}' names a home folder this computer does not know ({exc}).") from exc
        if not target.is_absolute():
            raise InvalidArgument(
                f"ingest_path needs an absolute path; '{shown}' is relative, and the Engram service does not know "
                "your working folder. Give the full path (e.g. /home/you/project or C:\\Users\\you\\project).")
        real = _real(target)
        if self.is_own(real):
            raise IngestError(f"'{shown}' is Engram's own data, settings or log folder (or inside one): Engram never "
                              "ingests its own files (memories, model files, the service token).",
                              title="Cannot ingest Engram's own folder")
        if not any(real == root or real.is_relative_to(root) for root in self.allowed):
            allowed = ", ".join(str(root) for root in self.allowed) or "none"
            raise IngestError(
                f"'{shown}' is outside the folders Engram may ingest (ingest.allowed_roots: {allowed}). To allow it, "
                "add its folder in Settings or with `engram config set ingest.allowed_roots '[\"~\", \"/path/to/it\"]'`.",
                title="Folder not allowed")
        return real


def _real(path: Path) -> Path:
    """``path`` absolute with links followed, as far as it exists (the rest is kept as written).

    Raises:
        IngestError: the path cannot be named on this file system (a NUL character, a name too long).
    """
    try:
        return path.resolve(strict=False)
    except (OSError, RuntimeError, ValueError) as exc:
        reason = "a path cannot contain a NUL character" if isinstance(exc, ValueError) else (
            getattr(exc, "strerror", None) or str(exc))
        raise IngestError(f"{repr(str(path))[1:-1][:200]} cannot be used as a path ({reason}).") from exc
