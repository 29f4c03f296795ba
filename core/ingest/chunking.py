"""Structure-aware chunking: split a text where its author did, then pack to a target length.

Sections start at Markdown headings, reStructuredText titles, and Python/JavaScript definitions;
other text splits at paragraphs. Consecutive small sections are packed together up to the target
length; a section longer than the target is split at blank lines (else at line ends) with a few
lines of overlap. Every chunk knows its line range and the heading path it falls under.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FORMATS = {
    ".md": "markdown", ".markdown": "markdown", ".mdx": "markdown",
    ".rst": "rst", ".txt": "text",
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "javascript", ".tsx": "javascript",
}


@dataclass(frozen=True)
class Chunk:
    """A piece of a text. Lines are 1-based and inclusive."""

    index: int
    title: str
    content: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class _Section:
    start: int  # 0-based line index
    end: int  # exclusive
    title: str


def text_format(suffix: str) -> str:
    """The chunking format for a file extension (``.py`` → ``python``); ``text`` when unknown."""
    return FORMATS.get(suffix.lower(), "text")


# ------------------------------------------------------------------ boundaries

_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_MD_FENCE = re.compile(r"^\s*(```|~~~)")
_RST_ADORNMENT = re.compile(r"^([=\-`:'\"~^_*+#<>])\1{2,}\s*$")
_PY_DEF = re.compile(r"^( {0,4})(?:async\s+def|def|class)\s+([A-Za-z_]\w*)")
_JS_DEF = re.compile(
    r"^(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?\s+([A-Za-z_$][\w$]*)|class\s+([A-Za-z_$][\w$]*)"
    r"|(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:\(|function|[A-Za-z_$][\w$]*\s*=>))"
)


def _markdown_heads(lines: list[str]) -> list[tuple[int, int, str]]:
    heads, fenced = [], False
    for i, line in enumerate(lines):
        if _MD_FENCE.match(line):
            fenced = not fenced
        elif not fenced and (m := _MD_HEADING.match(line)):
            heads.append((i, len(m.group(1)), m.group(2)))
    return heads


def _rst_heads(lines: list[str]) -> list[tuple[int, int, str]]:
    """reST titles: a text line underlined (optionally also overlined) by one repeated punctuation mark."""
    heads: list[tuple[int, int, str]] = []
    styles: list[tuple[str, bool]] = []
    i = 0
    while i < len(lines) - 1:
        text, under = lines[i].rstrip(), lines[i + 1].rstrip()
        m = _RST_ADORNMENT.match(under)
        if text.strip() and not _RST_ADORNMENT.match(text) and m and len(under) >= len(text.strip()) \
                and not text.startswith((" ", "\t", "..")):
            over = i > 0 and lines[i - 1].rstrip() == under
            style = (m.group(1), over)
            if style not in styles:
                styles.append(style)
            start = i - 1 if over else i
            heads.append((start, styles.index(style) + 1, text.strip()))
            i += 2
            continue
        i += 1
    return heads


def _title_line(lines: list[str]) -> list[tuple[int, int, str]]:
    """A plain text whose first line is short and stands alone (a title, as in an abstract or a note) is
    titled by it, so every chunk of the text carries it."""
    if len(lines) > 2 and 0 < len(lines[0].strip()) <= 160 and not lines[1].strip() and lines[2].strip():
        return [(0, 1, lines[0].strip())]
    return []


def _code_heads(lines: list[str], pattern: re.Pattern[str], python: bool) -> list[tuple[int, int, str]]:
    heads = []
    for i, line in enumerate(lines):
        m = pattern.match(line)
        if not m:
            continue
        if python:
            level, name = (1 if not m.group(1) else 2), m.group(2)
            kind = line.strip().split()[0] if not line.strip().startswith("async") else "async def"
            label = f"{kind} {name}"
        else:
            level, label = 1, next(g for g in m.groups() if g)
        start = i
        # Decorators and the comment block right above a definition belong to it.
        while start > 0 and lines[start - 1].strip().startswith(("@", "#", "//", "/*", "*")) \
                and (not python or len(lines[start - 1]) - len(lines[start - 1].lstrip()) <= len(m.group(1) or "")):
            start -= 1
        heads.append((start, level, label))
    return heads


def _sections(lines: list[str], fmt: str) -> list[_Section]:
    if fmt == "markdown":
        heads = _markdown_heads(lines)
    elif fmt in ("rst", "text"):
        heads = _rst_heads(lines) or (_title_line(lines) if fmt == "text" else [])
    elif fmt == "python":
        heads = _code_heads(lines, _PY_DEF, python=True)
    elif fmt == "javascript":
        heads = _code_heads(lines, _JS_DEF, python=False)
    else:
        heads = []
    sections: list[_Section] = []
    path: list[tuple[int, str]] = []
    if not heads or heads[0][0] > 0:
        sections.append(_Section(0, heads[0][0] if heads else len(lines), ""))
    for n, (start, level, title) in enumerate(heads):
        while path and path[-1][0] >= level:
            path.pop()
        path.append((level, title))
        end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        if end > start:
            sections.append(_Section(start, end, " > ".join(t for _, t in path)))
    return sections


# --------------------------------------------------------------------- packing

def _split_long(lines: list[str], start: int, end: int, target: int, overlap: int) -> list[tuple[int, int]]:
    """Line ranges covering ``lines[start:end]``, each about ``target`` characters, overlapping a little."""
    ranges: list[tuple[int, int]] = []
    i = start
    while i < end:
        size, j, last_break = 0, i, None
        while j < end and (size + len(lines[j]) + 1 <= target or j == i):
            size += len(lines[j]) + 1
            j += 1
            if j < end and not lines[j].strip():
                last_break = j
        if j < end and last_break is not None and last_break > i and \
                sum(len(x) + 1 for x in lines[i:last_break]) >= target // 2:
            j = last_break
        ranges.append((i, j))
        if j >= end:
            break
        back, k = 0, j
        while k > i + 1 and back + len(lines[k - 1]) + 1 <= overlap:
            back += len(lines[k - 1]) + 1
            k -= 1
        i = k if k < j else j
    return ranges


def chunk_text(text: str, fmt: str, *, chunk_chars: int, overlap_chars: int) -> list[Chunk]:
    """Split ``text`` (of format ``fmt``, see ``text_format``) into chunks of about ``chunk_chars``.

    Blank-only texts give no chunks. Chunks never cut a line in two.
    """
    lines = text.splitlines()
    pieces: list[tuple[int, int, str]] = []
    pending: list[_Section] = []

    def flush() -> None:
        if pending:
            pieces.append((pending[0].start, pending[-1].end, pending[0].title))
            pending.clear()

    for section in _sections(lines, fmt):
        size = sum(len(line) + 1 for line in lines[section.start:section.end])
        if size > chunk_chars:
            flush()
            for a, b in _split_long(lines, section.start, section.end, chunk_chars, overlap_chars):
                pieces.append((a, b, section.title))
            continue
        pending_size = sum(len(line) + 1 for s in pending for line in lines[s.start:s.end])
        if pending and pending_size + size > chunk_chars:
            flush()
        pending.append(section)
    flush()

    chunks: list[Chunk] = []
    for a, b, title in pieces:
        while a < b and not lines[a].strip():
            a += 1
        while b > a and not lines[b - 1].strip():
            b -= 1
        if a >= b:
            continue
        chunks.append(Chunk(len(chunks), title, "\n".join(lines[a:b]), a + 1, b))
    return chunks


def summarize(text: str, fmt: str, limit: int = 300) -> str:
    """An extractive summary: the document's first title, then its first prose, at most ``limit`` chars."""
    lines = text.splitlines()
    sections = _sections(lines, fmt)
    code = fmt in ("python", "javascript")
    title = "" if code else next((s.title.split(" > ")[0] for s in sections if s.title), "")
    prose: list[str] = []
    for line in lines:
        stripped = line.strip()
        if not stripped or _RST_ADORNMENT.match(stripped) or stripped.startswith(("#", "..", ":", "import ", "from ")):
            if prose:
                break
            continue
        if stripped.strip("\"'") != title:
            prose.append(stripped.strip("\"'"))
    body = " ".join(prose)
    summary = f"{title}: {body}" if title and body else (title or body)
    return summary if len(summary) <= limit else summary[: limit - 1].rstrip() + "…"
