"""Which files under a folder get ingested, and why the others do not.

Git-aware: ``.gitignore`` files at every level are honoured (plus the user's extra patterns);
version-control folders, vendored dependencies and build output are pruned as whole folders;
oversized files and links that lead outside the named folder are skipped with a reason.
Reading a listed file (``read_text``) also skips binaries and undecodable text with a reason.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from ..errors import IngestError, InvalidArgument, SettingsError

logger = logging.getLogger(__name__)

VCS_DIRS = {".git", ".hg", ".svn", ".jj"}
VENDORED_DIRS = {
    "node_modules", "vendor", "third_party", "site-packages", ".venv", "venv", "__pycache__", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".cache", "dist", "build", ".eggs", "target", ".gradle",
    ".idea", ".next", ".nuxt", "bower_components",
}
BINARY_SUFFIXES = {
    ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".pdf", ".zip", ".gz", ".tgz", ".bz2", ".xz",
    ".7z", ".tar", ".whl", ".so", ".dylib", ".dll", ".exe", ".bin", ".o", ".a", ".pyc", ".class", ".jar",
    ".gguf", ".safetensors", ".onnx", ".pt", ".npy", ".npz", ".parquet", ".lance", ".sqlite", ".db", ".woff",
    ".woff2", ".ttf", ".otf", ".eot", ".mp3", ".mp4", ".wav", ".mov", ".avi", ".psd", ".mo",
}


@dataclass(frozen=True)
class ListedFile:
    path: Path  # absolute, resolved
    source: str  # the stored source key: the absolute path in POSIX form
    size: int
    mtime: float


@dataclass(frozen=True)
class Skip:
    path: str
    reason: str


@dataclass
class Listing:
    root: Path
    files: list[ListedFile] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)


def source_key(path: Path) -> str:
    """How a file is named in the store: its absolute, resolved path with forward slashes."""
    return path.as_posix()


def _compiles(pattern: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([pattern])
    except (ValueError, re.error):  # pathspec's own pattern errors are ValueErrors; a bad [range] is re.error
        return False
    return True


def _spec_for(folder: Path) -> pathspec.GitIgnoreSpec | None:
    ignore = folder / ".gitignore"
    try:
        lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, re.error):
        # Git skips a line that is no pattern and applies the others; so does the listing.
        kept = [line for line in lines if _compiles(line)]
        logger.info("%s: %d line(s) that are no .gitignore pattern skipped", ignore, len(lines) - len(kept))
        return pathspec.GitIgnoreSpec.from_lines(kept)


def _patterns(patterns: list[str], *, setting: bool) -> pathspec.GitIgnoreSpec:
    """``patterns`` compiled; one that is no .gitignore pattern is refused, named.

    Raises:
        InvalidArgument: an ``include`` pattern (a tool argument) does not compile.
        SettingsError: an ``ingest.exclude`` pattern (a setting) does not compile.
    """
    try:
        return pathspec.GitIgnoreSpec.from_lines(patterns)
    except (ValueError, re.error):
        bad = next((p for p in patterns if not _compiles(p)), patterns[0])
    if setting:
        raise SettingsError(f"ingest.exclude holds {bad!r}, which is no pattern in .gitignore syntax (such as "
                            "build/ or *.log). Correct it with `engram config set ingest.exclude`.")
    raise InvalidArgument(f"'include' pattern {bad!r} is no pattern in .gitignore syntax. Patterns name files "
                          "relative to the folder, such as docs/**/*.md, *.py or src/; a leading ! negates one.")


def _shown(path: Path) -> str:
    """A path as a message shows it: control characters escaped, at most 200 characters."""
    text = str(path)
    text = text if text.isprintable() else repr(text)[1:-1]
    return text if len(text) <= 200 else text[:197] + "..."


def _ignored(rel: str, is_dir: bool, specs: list[tuple[str, pathspec.GitIgnoreSpec]]) -> bool:
    candidate = rel + "/" if is_dir else rel
    for base, spec in specs:
        if base and not candidate.startswith(base + "/"):
            continue
        if spec.match_file(candidate[len(base) + 1:] if base else candidate):
            return True
    return False


def list_files(target: Path, *, max_bytes: int, use_gitignore: bool, exclude: list[str],
               include: list[str] | None = None, never: Sequence[Path] = ()) -> Listing:
    """List what ``ingest`` would read under ``target`` (a folder or one file).

    With ``include`` (gitignore-style patterns relative to ``target``), only matching files are
    listed; the others are left out silently, as the user asked for a subset. Folders in ``never``
    (resolved paths: Engram's own folders) are pruned with a reason.

    Raises:
        IngestError: ``target`` does not exist, cannot be named on this file system (a NUL character, a name
            too long), or is neither a file nor a folder.
        InvalidArgument: an ``include`` pattern is no .gitignore pattern.
        SettingsError: an ``ingest.exclude`` pattern is no .gitignore pattern.
    """
    wanted = _patterns(include, setting=False) if include else None
    extra = _patterns(exclude, setting=True) if exclude else None
    try:
        root = target.expanduser().resolve(strict=True)
    except (OSError, RuntimeError, ValueError) as exc:
        if isinstance(exc, ValueError):  # os functions refuse a path holding a NUL character
            reason = "a path cannot contain a NUL character"
        else:
            reason = getattr(exc, "strerror", None) or str(exc)
        raise IngestError(f"{_shown(target)} does not exist or cannot be opened ({reason}). Name a folder or a "
                          "file on this computer.") from exc
    listing = Listing(root)
    if root.is_file():
        _consider(root, root.parent, listing, max_bytes)
        return listing
    if not root.is_dir():
        raise IngestError(f"{target} is neither a file nor a folder.")

    specs: list[tuple[str, pathspec.GitIgnoreSpec]] = [("", extra)] if extra else []
    for folder, dirs, files in os.walk(root, followlinks=False, onerror=lambda e: listing.skipped.append(
            Skip(str(e.filename), f"cannot open folder ({e.strerror})"))):
        here = Path(folder)
        rel_dir = here.relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        if use_gitignore and (spec := _spec_for(here)) is not None:
            specs = [s for s in specs if s[0] != rel_dir] + [(rel_dir, spec)]
        kept = []
        for name in sorted(dirs):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if name in VCS_DIRS:
                continue
            if never and _is_within(here / name, never):
                listing.skipped.append(Skip(str(here / name), "Engram's own folder (never ingested)"))
            elif name in VENDORED_DIRS:
                listing.skipped.append(Skip(str(here / name), "vendored or generated folder"))
            elif _ignored(rel, True, specs):
                listing.skipped.append(Skip(str(here / name), "ignored folder (.gitignore or ingest.exclude)"))
            else:
                kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if wanted is not None and not wanted.match_file(rel):
                continue
            if _ignored(rel, False, specs):
                listing.skipped.append(Skip(str(here / name), "ignored (.gitignore or ingest.exclude)"))
                continue
            _consider(here / name, root, listing, max_bytes)
    if never:  # a link inside the folder may still lead into one of them
        own = [f for f in listing.files if any(f.path == o or f.path.is_relative_to(o) for o in never)]
        listing.files = [f for f in listing.files if f not in own]
        listing.skipped += [Skip(str(f.path), "inside Engram's own folder (never ingested)") for f in own]
    return listing


def _is_within(folder: Path, never: Sequence[Path]) -> bool:
    try:
        real = folder.resolve(strict=True)
    except (OSError, RuntimeError):
        return False
    return any(real == own or real.is_relative_to(own) for own in never)


def _consider(path: Path, root: Path, listing: Listing, max_bytes: int) -> None:
    if path.suffix.lower() in BINARY_SUFFIXES:
        listing.skipped.append(Skip(str(path), "binary file type"))
        return
    try:
        real = path.resolve(strict=True)
        stat = real.stat()
    except (OSError, RuntimeError) as exc:
        listing.skipped.append(Skip(str(path), f"cannot open ({getattr(exc, 'strerror', None) or exc})"))
        return
    if not real.is_relative_to(root):
        listing.skipped.append(Skip(str(path), f"link to {real}, outside the folder you named"))
        return
    if not real.is_file():
        listing.skipped.append(Skip(str(path), "not a regular file"))
        return
    if stat.st_size > max_bytes:
        listing.skipped.append(Skip(str(path), f"larger than ingest.max_file_bytes ({stat.st_size:,} > {max_bytes:,} bytes)"))
        return
    listing.files.append(ListedFile(real, source_key(real), stat.st_size, stat.st_mtime))


def read_text(file: ListedFile) -> str | Skip:
    """The file's text, or a ``Skip`` saying why it cannot be ingested (binary, not UTF-8, unreadable)."""
    try:
        data = file.path.read_bytes()
    except OSError as exc:
        return Skip(str(file.path), f"cannot read ({exc.strerror})")
    if b"\x00" in data[:8192]:
        return Skip(str(file.path), "binary content")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Skip(str(file.path), f"not UTF-8 text (undecodable byte at offset {exc.start})")
    return text.replace("\r\n", "\n").replace("\r", "\n")
