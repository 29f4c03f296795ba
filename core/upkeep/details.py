"""Whether two texts agree on every detail that carries meaning, and which details differ, without a model.

The embedding of "rotates every 30 days" and of "every 90 days" is nearly one vector: a near duplicate found by
its vector alone may be another fact. ``compare(old, new)`` reads both texts as tokens, each of a family:

- ``number``: anything with a digit (counts, versions, clock times, dates, IPs and ports, sizes, money), number
  words read as digits (``thirty`` is 30), clock times made 24-hour (``2 p.m.`` is 14:00);
- ``identifier``: code names, paths, config keys, URLs, e-mail addresses (``_``, ``.``, ``/``, ``@``, ``::`` inside,
  CamelCase, ALL CAPS, backticks);
- ``name``: a capitalised word inside a sentence, or at its start when it is not a common word;
- ``time``: months, weekdays, today, nightly, weekly, units of time and size (plurals read as the unit);
- ``negation``: not, no, never, without, off, disabled, only, except, unless, …;
- ``word``: any other content word; ``neutral``: articles, pronouns, most prepositions, auxiliaries, fillers.

The texts agree when, their token multisets compared (order aside, so reordered clauses agree) and neutral tokens
dropped, what is left on the two sides cancels out by everyday synonyms or a shared stem, except for content
words on one side only (a clause that adds words but no detail). Any left-over token of a detail family, or
content words left on both sides (a word swapped for one that is not its synonym: staging for production), is a
difference. A line that opens with who speaks (``Nate: Bye Joanna!``) is another fact when the other text's speaker
is someone else, whatever the words. Measured on labelled pairs (benchmark/upkeep-pairs-*.json; ``python -m benchmark upkeep``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from .lexicon import UPDATE_CUES
from .tokens import DETAIL_FAMILIES, Token, same_meaning, tokens

#: A speaker's label opening a line: one to three words and a colon ("Nate:", "Dr Smith:", "nate:" in a repeat
#: typed in lower case), each word starting with a letter.
_SPEAKER = re.compile(r"^\s*([^\W\d_][\w'.-]*(?:[ ][^\W\d_][\w'.-]*){0,2})\s*:\s")

#: Of two families in one change, the one a person is told (the first that applies).
_SHOWN_ORDER: tuple[str, ...] = ("negation", "number", "identifier", "name", "time", "word")


@dataclass(frozen=True)
class Change:
    """One detail that differs: as the older text wrote it and as the newer does ('' where one has none)."""

    family: str
    old: str
    new: str

    def __str__(self) -> str:
        if self.old and self.new:
            return f"{self.old} → {self.new}"
        return f"'{self.new}' added" if self.new else f"'{self.old}' dropped"


@dataclass(frozen=True)
class Difference:
    """What ``compare`` found: the details that differ (none: the texts agree on every detail)."""

    changes: tuple[Change, ...]

    @property
    def agree(self) -> bool:
        return not self.changes

    def describe(self, most: int = 3) -> str:
        """The changes in a few words (``30 days → 90 days; 'not' added``), at most ``most`` of them."""
        shown = [str(c) for c in self.changes[:most]]
        more = len(self.changes) - len(shown)
        return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def overlap(a: str, b: str) -> float:
    """How much two texts say with the same words: the Dice coefficient of their tokens that are not neutral (1.0:
    the same words, details included; 0.0: none in common)."""
    ka = Counter(t.key for t in tokens(a) if t.family != "neutral")
    kb = Counter(t.key for t in tokens(b) if t.family != "neutral")
    total = sum(ka.values()) + sum(kb.values())
    return 2 * sum((ka & kb).values()) / total if total else 1.0


def says_it_changes(text: str) -> bool:
    """Whether ``text`` says it changes something that was true ("moved to", "now", "switched", "no longer")."""
    return any(t.surface.lower() in UPDATE_CUES or t.key in UPDATE_CUES for t in tokens(text))


def compare(old: str, new: str) -> Difference:
    """Which details of ``new`` differ from ``old`` (none: the two agree on every detail that carries meaning)."""
    found = _compare_words(old, new)
    said_by, says = speaker(old), speaker(new)
    if said_by and says and said_by.casefold() != says.casefold():
        return Difference((Change("name", said_by, says), *found.changes))
    return found


def speaker(text: str) -> str | None:
    """Who speaks in ``text`` when it opens with a speaker's label (``Nate: …`` is Nate), else None."""
    match = _SPEAKER.match(text)
    return match.group(1) if match else None


def _compare_words(old: str, new: str) -> Difference:
    """``compare`` on the words alone."""
    a = [t for t in tokens(old) if t.family != "neutral"]
    b = [t for t in tokens(new) if t.family != "neutral"]
    left_a, left_b = _unmatched(a, b), _unmatched(b, a)
    # Content words swapped for a synonym or another form of themselves cancel out.
    words_b = [t for t in left_b if t.family == "word"]
    for t in [t for t in left_a if t.family == "word"]:
        twin = next((u for u in words_b if same_meaning(t, u)), None)
        if twin is not None:
            words_b.remove(twin)
            left_a.remove(t)
            left_b.remove(twin)
    details = any(t.family in DETAIL_FAMILIES for t in (*left_a, *left_b))
    swapped = any(t.family == "word" for t in left_a) and any(t.family == "word" for t in left_b)
    if not details and not swapped:  # content words on one side alone: an added clause, not a detail
        return Difference(())
    return Difference(tuple(_changes(tokens(old), left_a, tokens(new), left_b)))


def _unmatched(these: list[Token], those: list[Token]) -> list[Token]:
    """The tokens of ``these`` that ``those`` has no copy of (counted: a word twice against once leaves one)."""
    others = Counter(t.key for t in those)
    out: list[Token] = []
    for t in these:
        if others[t.key] > 0:
            others[t.key] -= 1
        else:
            out.append(t)
    return out


def _changes(all_old: list[Token], left_old: list[Token], all_new: list[Token], left_new: list[Token]) -> list[Change]:
    """The left-over tokens as a person reads them: runs of neighbouring ones together, a number with the unit
    after it, the older text's runs paired with the newer's in order."""
    old_runs, new_runs = _runs(all_old, left_old), _runs(all_new, left_new)
    changes: list[Change] = []
    for index in range(max(len(old_runs), len(new_runs))):
        before = old_runs[index] if index < len(old_runs) else None
        after = new_runs[index] if index < len(new_runs) else None
        families = {t.family for run in (before, after) if run for t in run[1]}
        family = next((f for f in _SHOWN_ORDER if f in families), "word")
        changes.append(Change(family, before[0] if before else "", after[0] if after else ""))
    return changes


def _runs(every: list[Token], left: list[Token]) -> list[tuple[str, list[Token]]]:
    """Neighbouring left-over tokens as one run (its text as written, with a unit or time word right after a
    number), in text order."""
    positions = {t.position for t in left}
    runs: list[tuple[str, list[Token]]] = []
    current: list[Token] = []
    for token in every:
        if token.position in positions:
            current.append(token)
            continue
        if current:
            if current[-1].family == "number" and token.family == "time" and token.position == current[-1].position + 1:
                current.append(token)
            runs.append((_written(current), current))
            current = []
    if current:
        runs.append((_written(current), current))
    return runs


def _written(run: list[Token]) -> str:
    """A run of tokens as written: spaced, but a ``%`` kept to its number."""
    return " ".join(t.surface for t in run).replace(" %", "%")
