"""basic-memory's Markdown notes: a folder of ``.md`` files, each with front matter (``title``, ``type``, ``tags``,
``permalink``), prose, observations and relations (basic-memory's "Knowledge Format").

- An observation ``- [category] text #tag (context)`` is one note: the category its type, its ``#tags`` and the
  file's tags its tags, the file's title its title, the line after the category its text.
- A relation ``- relation_type [[Target]] (context)`` is one fact: subject the file's title, predicate the relation
  type, object the target (``- [[Target]]`` alone: ``links_to``), its source ``basic-memory:<permalink>``.
- The rest of the file (its prose, without the ``# Title`` heading and the ``## Observations`` / ``## Relations``
  headings) is one note of the file's type and tags, when there is any.

``[[links]]`` inside prose are not made facts (basic-memory reads them as ``links_to``; the result says how many
were left). Task boxes (``- [ ]``, ``- [x]``) are prose, not observations.
"""

from __future__ import annotations

import re
from pathlib import Path

from .frontmatter import list_of, split_front_matter, text_of
from .peers import PeerFact, PeerImport, PeerNote

TAG = "from:basic-memory"
_OBSERVATION = re.compile(r"^\s*[-*+]\s+\[(?P<category>[^\[\]]+)\]\s+(?P<text>\S.*?)\s*$")
_RELATION = re.compile(r"^\s*[-*+]\s+(?:(?P<relation>[A-Za-z_][\w-]*)\s+)?\[\[(?P<target>[^\[\]]+)\]\]"
                       r"(?:\s*\((?P<context>[^()]*)\))?\s*$")
_HASHTAG = re.compile(r"(?:^|\s)#(?P<tag>\w[\w/-]*)")
_INLINE_LINK = re.compile(r"\[\[[^\[\]]+\]\]")
_SECTION = re.compile(r"^#{2,6}\s+(observations|relations)\s*$", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")
_TASK_BOXES = (" ", "x", "X")


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def read_note(text: str, *, stem: str) -> tuple[list[PeerNote], list[PeerFact], int]:
    """The notes and facts of one basic-memory file (``stem``: its file name without ``.md``), and how many
    ``[[links]]`` inside its prose were left out."""
    matter, body = split_front_matter(text)
    title = text_of(matter, "title") or stem
    type_ = text_of(matter, "type") or "note"
    tags = tuple(dict.fromkeys([*list_of(matter, "tags"), TAG]))
    source = "basic-memory:" + (text_of(matter, "permalink") or _slug(title))
    notes: list[PeerNote] = []
    facts: list[PeerFact] = []
    prose: list[str] = []
    fenced = False
    inline_links = 0
    for line in body.splitlines():
        if _FENCE.match(line) or fenced:
            fenced = fenced != bool(_FENCE.match(line))
            prose.append(line)
            continue
        observation = _OBSERVATION.match(line)
        if observation and observation["category"] not in _TASK_BOXES:
            text_ = observation["text"]
            own = [m["tag"] for m in _HASHTAG.finditer(text_)]
            notes.append(PeerNote(content=text_, title=title, type=observation["category"].strip(),
                                  tags=tuple(dict.fromkeys([*own, *tags]))))
            continue
        relation = _RELATION.match(line)
        if relation:
            target = relation["target"].split("|", 1)[0].strip()
            if target:
                facts.append(PeerFact(title, relation["relation"] or "links_to", target, source))
                continue
        if _SECTION.match(line.strip()) or line.strip().lstrip("#").strip() == title and line.startswith("# "):
            continue
        inline_links += len(_INLINE_LINK.findall(line))
        prose.append(line)
    text_ = re.sub(r"\n\s*\n(\s*\n)+", "\n\n", "\n".join(prose)).strip()  # the sections taken out leave gaps
    if text_:
        notes.insert(0, PeerNote(content=text_, title=title, type=type_, tags=tags))
    return notes, facts, inline_links


def note_files(path: Path) -> list[Path]:
    """The notes of a basic-memory folder (``.md`` files, hidden folders left out), or the one file given."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*.md")
                  if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts))


def read_basic_memory(path: Path, project: str | None) -> PeerImport:
    """Every note and fact of a basic-memory folder (or one note file); the project defaults to the folder's name.

    Raises:
        OSError, UnicodeDecodeError: a file cannot be read as text (the caller says so).
    """
    notes: list[PeerNote] = []
    facts: list[PeerFact] = []
    links = 0
    for file in note_files(path):
        found, related, inline = read_note(file.read_text(encoding="utf-8"), stem=file.stem)
        notes += found
        facts += related
        links += inline
    folder = path if path.is_dir() else path.parent
    remarks = (f"{links} [[link{'s' if links != 1 else ''}]] inside notes' text not made facts (a relation on its own "
               "line is one)",) if links else ()
    return PeerImport("basic-memory", project or folder.name or "general", tuple(notes), tuple(facts), remarks)
