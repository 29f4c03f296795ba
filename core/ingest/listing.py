"""Which files under a folder get ingested, and why the others do not.

Git-aware: ``.gitignore`` files at every level are honoured (plus the user's extra patterns);
version-control folders, vendored dependencies and build output are pruned as whole folders;
oversized files and links that lead outside the named folder are skipped with a reason.
Reading a listed file (``read_text``) also skips binaries and undecodable text with a reason.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from ..errors import IngestError

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


def _spec_for(folder: Path) -> pathspec.PathSpec | None:
    ignore = folder / ".gitignore"
    try:
        lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(rel: str, is_dir: bool, specs: list[tuple[str, pathspec.PathSpec]]) -> bool:
    candidate = rel + "/" if is_dir else rel
    for base, spec in specs:
        if base and not candidate.startswith(base + "/"):
            continue
        if spec.match_file(candidate[len(base) + 1:] if base else candidate):
            return True
    return False


def list_files(target: Path, *, max_bytes: int, use_gitignore: bool, exclude: list[str],
               include: list[str] | None = None) -> Listing:
    """List what ``ingest`` would read under ``target`` (a folder or one file).

    With ``include`` (gitignore-style patterns relative to ``target``), only matching files are
    listed; the others are left out silently, as the user asked for a subset.

    Raises:
        IngestError: ``target`` does not exist or is neither a file nor a folder.
    """
    try:
        root = target.expanduser().resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise IngestError(f"{target} does not exist or cannot be opened ({exc}). Name a folder or a file.") from exc
    listing = Listing(root)
    if root.is_file():
        _consider(root, root.parent, listing, max_bytes)
        return listing
    if not root.is_dir():
        raise IngestError(f"{target} is neither a file nor a folder.")

    wanted = pathspec.GitIgnoreSpec.from_lines(include) if include else None
    extra = pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None
    specs: list[tuple[str, pathspec.PathSpec]] = [("", extra)] if extra else []
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
            if name in VENDORED_DIRS:
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
    return listing


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
