"""Opt-in session summaries: a finished session's turns condensed by the helper model into one memory.

Off unless ``capture.summaries`` is on (capture never loads a generation model otherwise). When a session ends
(Claude Code's ``SessionEnd``; for an editor without that event, its file quiet for ``QUIET_BEFORE_SUMMARY_S``)
the session's stored turns — already redacted — are read newest first until ``TRANSCRIPT_TOKENS`` tokens, put back
in order, and the helper model is asked for the session's goal, what was decided or changed, and what is left
open. The answer, redacted again, is stored as a ``session-summary`` note of the session's project with the
session as its source (forgetting the session forgets it too), linked to the session's turns through the
session's node in the graph (``part_of``, as a file's chunks are to their file). A session summarised again
(resumed, then ended again) has its summary replaced in place. A model that fails or runs out of time leaves
no summary, and says so in the log.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime

from ..errors import EngramError
from ..ingest.records import edge, embedding_text, note_row
from ..models.providers import Provider
from ..models.redact import redact
from ..store.schema import SOURCE_PREFIX
from .storing import Scope, session_source

logger = logging.getLogger(__name__)

#: The transcript a summary reads: at most this many tokens of the session's turns (the newest kept).
TRANSCRIPT_TOKENS = 5000
SUMMARY_SECONDS = 60.0
QUIET_BEFORE_SUMMARY_S = 1800.0
SUMMARY_TYPE = "session-summary"
#: No ``maxLength``: llama.cpp expands one into a grammar rule per character, and at 1,200 it refused the grammar
#: and then crashed the process (llama-cpp-python 0.3, seen here); ``max_tokens`` bounds the answer instead.
SCHEMA = {"type": "object", "additionalProperties": False, "required": ["summary"],
          "properties": {"summary": {"type": "string"}}}
SUMMARY_CHARS = 1500
INSTRUCTION = ("Summarise this coding session between a person and an AI assistant in at most five sentences: the "
               "goal, what was decided or changed (name files and commands), and what is left open. Reply with JSON.")


def summary_id(editor: str, session_id: str) -> str:
    return "s" + hashlib.sha256(f"summary\0{editor}\0{session_id}".encode()).hexdigest()[:15]


def transcript(turns: list[str], count_tokens: Callable[[str], int], budget: int = TRANSCRIPT_TOKENS) -> str:
    """The newest ``turns`` (in order, oldest first) that fit ``budget`` tokens together."""
    kept: list[str] = []
    used = 0
    for text in reversed(turns):
        cost = count_tokens(text) + 2
        if kept and used + cost > budget:
            break
        kept.append(text if cost <= budget else text[: budget * 3])
        used += cost
    return "\n\n".join(reversed(kept))


def summarize_session(scope: Scope, provider_for: Callable[[str], Provider], editor: str, session_id: str,
                      *, seconds: float = SUMMARY_SECONDS) -> str | None:
    """Write (or rewrite) the summary of a captured session; its memory id, or ``None`` when there was nothing to
    summarise or the model gave no usable answer.

    Raises:
        StoreError: the workspace cannot be read or written.
    """
    source = session_source(editor, session_id)
    rows = [r for r in scope.store.chunks_of(source, ["id", "content", "created_at", "type", "project", "title"])
            if r["type"] != SUMMARY_TYPE]
    if not rows:
        return None
    rows.sort(key=lambda r: (r["created_at"], r["id"]))
    try:
        provider = provider_for("summarizer")
        text = transcript([str(r["content"]) for r in rows], provider.count_tokens)
        out = provider.complete([{"role": "system", "content": INSTRUCTION}, {"role": "user", "content": text}],
                                deadline=time.monotonic() + seconds, max_tokens=300, json_schema=SCHEMA)
        summary = redact(str(json.loads(out.text)["summary"]).strip()).text[:SUMMARY_CHARS]
    except (EngramError, ValueError, KeyError, TypeError) as exc:
        logger.warning("no summary of %s session %s: %s", editor, session_id, getattr(exc, "message", exc))
        return None
    if not summary:
        return None
    memory_id = summary_id(editor, session_id)
    title = f"Session summary: {rows[0]['title']}"[:200]
    project = str(rows[0]["project"])
    vector = scope.embedder().embed([embedding_text(title, summary)])[0]
    row = note_row(memory_id=memory_id, project=project, kind="note", type_=SUMMARY_TYPE,
                   tags=["captured", editor, "summary"], title=title, content=summary, vector=vector,
                   now=datetime.now(UTC), source=source)
    first = memory_id not in scope.store.memories_by_ids([memory_id], ["id"])

    def write() -> None:
        scope.store.upsert_memories([row])
        if first:  # linked to the session's node once; a rewritten summary keeps its link
            scope.store.add_memories([], [edge(memory_id, SOURCE_PREFIX + source, "part_of", source)])

    scope.writer.run(write)
    return memory_id
