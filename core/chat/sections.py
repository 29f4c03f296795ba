"""Section analysis: a question too long for the chat model's context is read in sections before research.

Readers (``chat.analysis_workers``, run one at a time on the chat's own model) take turns over the sections:
each reader keeps its own bounded notes and updates them from the next section it is given, in a fresh prompt
that holds a short excerpt of the question, its notes so far and that section. Every section is read before the
answer is researched; the readers' notes then stand in the conversation in place of the question for the model
(the person's words stay stored whole), and ``read_chat_section`` reads exact character ranges of the original
during that reply. Limits are explicit: a section budget per reply, a longest source, a deadline per section and
the research deadline; a reader that fails, a budget spent before the last section, or notes too long for the
model end the analysis with an error that says which, never with sections silently skipped.

Sections are sized by the model's own token count (every part of the reader's prompt and its output counted,
within a context of at most ``READER_CONTEXT`` tokens), overlap by ``OVERLAP`` characters, and end at a line
break or a space where one is near.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelError
from ..models.redact import redact
from .model import ChatModel

#: A reader's context at most (tokens): its instructions, notes, the section and the notes it writes.
READER_CONTEXT = 4096
#: Tokens a reader may write for its updated notes.
NOTES_TOKENS = 384
#: Characters of overlap between one section and the next.
OVERLAP = 64
#: Sections one reply may read, over every source.
MAX_SECTIONS = 64
#: The longest source read (characters).
MAX_SOURCE_CHARS = 1_000_000
#: Seconds one reader's call may take.
SECTION_TIMEOUT_SEC = 120.0
#: Characters of the question every reader sees, as its excerpt.
EXCERPT_CHARS = 600
READER_INSTRUCTIONS = (
    "You read one section of a long text that a person sent with a question. Keep notes that help answer the "
    "question: facts, names, numbers, decisions, with the character positions they come from (e.g. @1200). "
    "Update your notes with what this section adds; keep what your notes already hold unless the section "
    "corrects it. Write only the notes, at most 250 words.")


class AnalysisFailed(ModelError):
    """Section analysis could not read every section (the message says why and where it stopped)."""

    title = "Long question not read"


@dataclass(frozen=True)
class Section:
    number: int  # from 1
    start: int  # character offsets in the source
    end: int


@dataclass
class Analysis:
    """What the readers made of one source: their notes, the sections, the tokens and time spent."""

    source: str  # its id for ``read_chat_section``, e.g. ``q3`` (the question of turn 3)
    chars: int
    sections: list[Section] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # one per reader
    tokens: int = 0
    seconds: float = 0.0

    def report(self, excerpt: str) -> str:
        """The text that stands for the source in the model's prompt: an excerpt, how it was read, the notes."""
        readers = len(self.notes)
        lines = [excerpt.rstrip() + ("…" if self.chars > len(excerpt) else ""), "",
                 f"[This text is {self.chars:,} characters long, too long to read at once; it was read in "
                 f"{len(self.sections)} sections by {readers} reader{'s' if readers != 1 else ''}, whose notes follow. "
                 f'read_chat_section(source="{self.source}", start, end) reads the original exactly, e.g. to check '
                 "a detail a note points to with @position.]"]
        for n, notes in enumerate(self.notes, 1):
            read = [s.number for s in self.sections if (s.number - 1) % readers == n - 1]
            lines += ["", f"Notes of reader {n} (sections {', '.join(str(k) for k in read)}):", notes.strip() or
                      "(nothing relevant)"]
        return "\n".join(lines)


def split(text: str, size: int, overlap: int = OVERLAP) -> list[Section]:
    """``text`` in sections of at most ``size`` characters, each starting ``overlap`` before the last one ended and
    ending at a line break or space in its last quarter where there is one."""
    out: list[Section] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            window = text[start + size * 3 // 4:end]
            cut = max(window.rfind("\n"), window.rfind(" "))
            if cut > 0:
                end = start + size * 3 // 4 + cut + 1
        out.append(Section(len(out) + 1, start, end))
        if end >= len(text):
            break
        start = max(end - overlap, start + 1)
    return out


def _reader_prompt(excerpt: str, notes: str, section: Section, count: int, body: str,
                   source: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": READER_INSTRUCTIONS},
            {"role": "user", "content": f"The question starts: {excerpt}\n\nYour notes so far:\n{notes or '(none yet)'}"
                                        f"\n\nSection {section.number} of {count} of {source} (characters "
                                        f"{section.start}–{section.end}):\n{body}"}]


def section_size(model: ChatModel, text: str, excerpt: str) -> int:
    """The most characters a section of ``text`` may hold so that a reader's whole prompt (with notes as long as
    it may write) and its output fit ``READER_CONTEXT`` (or the model's context, when smaller).

    Raises:
        AnalysisFailed: not even a small section fits.
    """
    room = min(READER_CONTEXT, model.context) - NOTES_TOKENS
    notes = "x " * (NOTES_TOKENS * 2)  # notes as long as a reader may write them (roughly)
    size = min(len(text), room * 4)
    while size >= 200:
        trial = _reader_prompt(excerpt, notes, Section(1, 0, size), 2, text[:size], "the text")
        if model.prompt_tokens(trial, None) <= room:
            return size
        size = size * 4 // 5
    raise AnalysisFailed(f"The model's context ({model.context:,} tokens) is too small to read a long text in "
                         "sections; choose a model with a larger context (chat.n_ctx).")


def analyze(model: ChatModel, text: str, *, source: str, question: str, readers: int, deadline: float,
            progress: Callable[[str], None], stop: Callable[[], bool] | None = None,
            clock: Callable[[], float] = time.monotonic) -> Analysis:
    """Read ``text`` in sections with ``readers`` readers taking turns; every section is read, or it fails.

    Raises:
        AnalysisFailed: the text is longer than ``MAX_SOURCE_CHARS`` or needs more than ``MAX_SECTIONS``
            sections, a reader failed or wrote nothing, the deadline passed, or the person stopped it (the
            message names the section it stopped at).
    """
    started = clock()
    if len(text) > MAX_SOURCE_CHARS:
        raise AnalysisFailed(f"The text is {len(text):,} characters; chat reads at most {MAX_SOURCE_CHARS:,} "
                             "characters of one text.")
    excerpt = redact(question[:EXCERPT_CHARS]).text
    sections = split(text, section_size(model, text, excerpt))
    if len(sections) > MAX_SECTIONS:
        raise AnalysisFailed(f"The text needs {len(sections)} sections to read; chat reads at most {MAX_SECTIONS} "
                             "in one reply. Send a shorter text, or ask about a part of it.")
    found = Analysis(source, len(text), sections, [""] * max(1, readers))
    for section in sections:
        reader = (section.number - 1) % len(found.notes)
        if stop is not None and stop():
            raise AnalysisFailed(f"Stopped while reading section {section.number} of {len(sections)}.")
        if clock() >= deadline:
            raise AnalysisFailed(f"Research ran out of time at section {section.number} of {len(sections)}.")
        progress(f"Reading the long text: section {section.number} of {len(sections)} (reader {reader + 1})…")
        body = redact(text[section.start:section.end]).text
        prompt = _reader_prompt(excerpt, found.notes[reader], section, len(sections), body, source)
        try:
            out = model.reply(prompt, None, deadline=min(deadline, clock() + SECTION_TIMEOUT_SEC),
                              max_tokens=NOTES_TOKENS, stop=stop)
        except ModelError as exc:
            raise AnalysisFailed(f"Reader {reader + 1} failed at section {section.number} of {len(sections)}: "
                                 f"{exc.message}") from exc
        found.tokens += out.prompt_tokens + out.tokens
        if out.stopped in ("deadline", "cancelled") or not out.text.strip():
            why = {"deadline": "ran out of time", "cancelled": "was stopped"}.get(out.stopped, "wrote no notes")
            raise AnalysisFailed(f"Reader {reader + 1} {why} at section {section.number} of {len(sections)}.")
        found.notes[reader] = out.text.strip()
    found.seconds = round(clock() - started, 3)
    return found


def read_section(text: str, start: int, end: int | None, limit: int) -> str:
    """Characters ``start`` to ``end`` of ``text`` (at most ``limit`` of them), saying where the next ones are."""
    start = max(0, min(start, len(text)))
    stop_at = min(len(text), end if end is not None and end > start else start + limit, start + limit)
    part = text[start:stop_at]
    more = f"\n— characters {start}–{stop_at} of {len(text):,}" + (
        f"; read on with start={stop_at}" if stop_at < len(text) else "")
    return part + more
