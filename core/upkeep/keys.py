"""The keys an exact duplicate is found by: a memory's text normalised, and its kind and project hashed with it."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import datetime

_SPACE = re.compile(r"\s+")


def normalised(text: str) -> str:
    """``text`` as duplicates are compared: Unicode NFKC, case-folded, every run of white space one space, stripped."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def dedup_key(kind: str, project: str, text: str, title: str = "", when: datetime | None = None) -> str:
    """The exact-duplicate key of a memory: 32 hex digits of SHA-256 over its kind, project and normalised text.

    A conversation turn's key also holds its title (who spoke and when), or without a title the minute ``when`` it
    was written: the same words said at another time are another turn.
    """
    parts = [kind, project, normalised(text)]
    if kind == "exchange":
        parts.append(normalised(title) if title.strip() else f"@{when:%Y-%m-%dT%H:%M}" if when else "")
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:32]
