"""Who said it: a question that names a speaker looks first at what that speaker said.

Conversation exchanges are stored as ``Name: what they said``. When a query names the speaker of some of the
candidate exchanges (as a whole word, in any case) but not of all of them, those speakers' exchanges move ahead of
the rest, each group keeping its order. Measured on LoCoMo: when a question names one of the two speakers, 97% of
its evidence turns (694 of 717) were spoken by that person, yet both channels rank the other speaker's turns high
for the words they share (benchmark/RESULTS.md). A query naming every speaker, or none, changes nothing, and so
do memories that are not exchanges.

The semantic channel embeds a question about a conversation without the names of its speakers
(``without_speakers``): every greeting names the other person ("Hey Gina!"), so a name in the question pulls the
vectors towards the turns with the least to say. Chosen on the tuning conversations of LoCoMo (issue 50): evidence
all@10 0.760 → 0.773, multi-hop 0.357 → 0.381; leaving the names out of the lexical query as well lost more than
it gained (0.768), as the names there weigh little against the other words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_SPEAKER = re.compile(r"^([^\n:]{1,40}):\s")


def speaker_of(row: Mapping[str, Any]) -> str | None:
    """The speaker of an exchange stored as ``Name: …``; ``None`` for anything else."""
    if row.get("kind") != "exchange":
        return None
    found = _SPEAKER.match(str(row.get("content", "")))
    return found.group(1).strip() or None if found else None


def without_speakers(query: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """``query`` without the names (and their possessive ``'s``) of the speakers of the exchanges among ``rows``, as
    whole words in any case; ``query`` itself when it names none, or is nothing but names."""
    names = {n for r in rows if (n := speaker_of(r))}
    left = query
    for name in sorted(names, key=len, reverse=True):
        left = re.sub(rf"(?<!\w){re.escape(name)}(?:['’]s)?(?!\w)", " ", left, flags=re.IGNORECASE)
    if left == query:
        return query
    left = re.sub(r"\s+", " ", left).strip()
    return left if re.search(r"\w", left) else query


def named_speakers_first(query: str, ids: Sequence[str], rows: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """``ids`` (best first) with the exchanges of the speakers ``query`` names moved ahead (see the module)."""
    speakers = {i: s for i in ids if i in rows and (s := speaker_of(rows[i]))}
    names = set(speakers.values())
    if len(names) < 2:
        return list(ids)
    named = {n for n in names if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", query, re.IGNORECASE)}
    if not named or named == names:
        return list(ids)
    first = [i for i in ids if speakers.get(i) in named]
    return first + [i for i in ids if speakers.get(i) not in named]
