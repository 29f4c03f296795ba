"""Claude Code's memory files: ``CLAUDE.md`` (instructions a person writes; also ``CLAUDE.local.md``) and auto memory's
``MEMORY.md`` (the index Claude writes in ``~/.claude/projects/<project>/memory/``, beside its topic files).

Each ``##`` section of a file is one note (its heading the title, everything under it — deeper headings, bullets,
code — the text); outside a section each top-level bullet (with the lines indented under it) and each paragraph is
one note, titled by the file's ``#`` heading. A topic file's front matter (``name``, ``description``, ``type``)
gives its notes' title and type. Code blocks are never split. The project is the folder the file is in — for
``.claude/CLAUDE.md`` the folder above ``.claude``, for auto memory the project folder above ``memory`` — unless
``--project`` names one.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from .frontmatter import split_front_matter, text_of
from .peers import PeerImport, PeerNote

#: The files Claude Code reads as memory.
FILE_NAMES = ("MEMORY.md", "CLAUDE.md", "CLAUDE.local.md")
TAG = "from:claude-code"
_H1 = re.compile(r"^#\s+(?P<text>.*?)\s*#*\s*$")
_H2 = re.compile(r"^##\s+(?P<text>.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(?:[-*+]|\d+[.)])\s+(?P<text>.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def is_memory_file(path: Path) -> bool:
    """Whether ``path`` is named as one of Claude Code's memory files."""
    return path.name in FILE_NAMES


def memory_files(folder: Path) -> list[Path]:
    """The memory files of a folder: an auto-memory folder's ``MEMORY.md`` and its topic files, else its
    ``CLAUDE.md`` and ``CLAUDE.local.md``."""
    if (folder / "MEMORY.md").is_file():
        topics = sorted(p for p in folder.glob("*.md") if p.is_file() and p.name != "MEMORY.md")
        return [folder / "MEMORY.md", *topics]
    return [folder / name for name in FILE_NAMES[1:] if (folder / name).is_file()]


def project_of(folder: Path) -> str:
    """The project a memory folder belongs to, by name."""
    if folder.name in (".claude", "memory") and folder.parent.name:
        folder = folder.parent
    # Auto memory's project folders are the project's path with "/" made "-" (e.g. "-home-ann-shop").
    return folder.name.lstrip("-") or "general"


@dataclass
class _Block:
    title: str
    lines: list[str] = field(default_factory=list)
    section: bool = False
    bullet: bool = False
    blank_after: bool = False  # a blank line ended its last line (a paragraph ends there)


def notes_of(text: str, *, title: str = "", type_: str = "note") -> list[PeerNote]:
    """The notes of one memory file's text (its front matter, if any, read for title and type)."""
    matter, body = split_front_matter(text)
    title = text_of(matter, "name") or text_of(matter, "title") or title
    type_ = text_of(matter, "type") or type_
    blocks: list[_Block] = []
    current: _Block | None = None
    doc_title = title
    fenced = False

    def start(block: _Block) -> _Block:
        blocks.append(block)
        return block

    for line in body.splitlines():
        fence = bool(_FENCE.match(line))
        if fenced or fence:
            if current is None or (not current.section and current.blank_after and not fenced):
                current = start(_Block(doc_title))
            current.lines.append(line)
            current.blank_after = False
            fenced = fenced != fence
            continue
        if (h1 := _H1.match(line)) is not None:
            doc_title = title or h1["text"]
            current = None
            continue
        if (h2 := _H2.match(line)) is not None:
            current = start(_Block(h2["text"], section=True))
            continue
        if current is not None and current.section:
            current.lines.append(line)
            continue
        if not line.strip():
            if current is not None:
                current.blank_after = True
            continue
        if (bullet := _BULLET.match(line)) is not None:
            current = start(_Block(doc_title, [bullet["text"]], bullet=True))
            continue
        indented = line[:1] in (" ", "\t")
        if current is not None and (not current.blank_after or (current.bullet and indented)):
            current.lines.append(line)
            current.blank_after = False
            continue
        current = start(_Block(doc_title, [line]))
    notes = []
    for block in blocks:
        lines = block.lines
        if block.bullet and len(lines) > 1:  # the lines under a bullet, as indented as they were among themselves
            lines = [lines[0], *textwrap.dedent("\n".join(lines[1:])).splitlines()]
        content = "\n".join(lines).strip("\n").rstrip()
        if not content.strip():
            if not block.section or not block.title:
                continue
            content = block.title
        notes.append(PeerNote(content=content, title=block.title, type=type_, tags=(TAG,)))
    return notes


def read_claude_memory(path: Path, project: str | None) -> PeerImport:
    """The notes of a Claude Code memory file, or of the memory files of a folder (``memory_files``).

    Raises:
        OSError, UnicodeDecodeError: a file cannot be read as text (the caller says so).
    """
    files = memory_files(path) if path.is_dir() else [path]
    folder = path if path.is_dir() else path.parent
    notes: list[PeerNote] = []
    for file in files:
        notes += notes_of(file.read_text(encoding="utf-8"), title="" if file.name in FILE_NAMES else file.stem)
    return PeerImport("claude-code", project or project_of(folder), tuple(notes))
