"""A text read as the detail comparison reads it (``details.py``): tokens, each of a family, with the key compared.

Structured values stay whole (``10.0.0.5``, ``0.3.36``, ``02:00``, ``upkeep.near_threshold``, ``src/app.py``,
``ops@example.com``, URLs, ``50%``, ``$40``); contractions are opened (``don't`` → do not); number words are read as
digits (``thirty`` → 30, ``twenty five`` → 25); clock times are made 24-hour (``2 p.m.`` → 14:00); months, weekdays and
units are read as one key each (``Jan`` → january, ``days`` → day); shortened words as the whole (``db`` → database);
idioms that negate nothing (``don't worry``) are neutral. The words themselves are ``lexicon.py``'s.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from .lexicon import (
    ABBREVIATIONS,
    ACRONYM_WORDS,
    COMMON,
    IDIOMS,
    MONTH_WORDS,
    MONTHS,
    NEGATION,
    NEUTRAL,
    NUMBER_SCALES,
    NUMBER_WORDS,
    ORDINALS,
    PLAIN_CAPITALS,
    RELATIVE_TIME,
    SPANS,
    SYNONYMS,
    TIME_WORDS,
    UNITS,
    WEEKDAYS,
)

Family = Literal["number", "identifier", "name", "time", "negation", "word", "neutral"]
#: The families whose every token is a detail: one left over on either side makes two texts differ.
DETAIL_FAMILIES: frozenset[str] = frozenset({"number", "identifier", "name", "time", "negation"})

_TOKEN = re.compile(r"""
    (?P<url>\b[a-z][a-z0-9+.-]*://[^\s<>"'`)\]]+[^\s<>"'`)\].,;:!?])
  | (?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)
  | (?P<code>`[^`\n]{1,80}`)
  | (?P<money>[$€£¥]\s?\d[\d,]*(?:\.\d+)?[kKmMbB]?\b)
  | (?P<word>(?:[~/]|\.{1,2}/)?[\w°][\w.:/\\@#%+'’°-]*[\w%/°]|[\w%°])
""", re.VERBOSE)
#: Where a sentence ends (the next word opens one): end punctuation, a colon, a line break, a bullet.
_SENTENCE_BREAK = re.compile(r"[.!?:;]\s*$|\n\s*$|^\s*$|[-*•(\"“]\s*$")
_CONTRACTIONS = (("n't", " not"), ("n’t", " not"), ("'re", " are"), ("'ll", " will"), ("'ve", " have"),
                 ("'m", " am"), ("'d", " would"), ("'s", ""))
_SPECIAL_CONTRACTIONS = {"can't": "can not", "won't": "will not", "shan't": "shall not", "cannot": "can not",
                         "ain't": "is not", "let's": "let us"}
_CLOCK = re.compile(r"^(\d{1,2})(?::(\d{2}))?(?::\d{2})?\s*([ap])\.?m\.?$", re.IGNORECASE)
_TIME = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")
_PLAIN_NUMBER = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_GLUED_UNIT = re.compile(r"^(\d+(?:\.\d+)?)([a-z%°]+)$", re.IGNORECASE)
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]")
_STRUCTURED = re.compile(r"[_@#\\]|::|\w\.\w|\w/\w|^[~/]|^\.{1,2}/")


@dataclass(frozen=True)
class Token:
    """One token of a text: the form compared (``key``), as written (``surface``), its family, and its place."""

    key: str
    surface: str
    family: Family
    position: int



def tokens(text: str) -> list[Token]:
    """``text`` as the comparison reads it: every token with its family and normalised key, in order."""
    return list(_read_text(text))


@functools.lru_cache(maxsize=4096)
def _read_text(text: str) -> tuple[Token, ...]:
    """``tokens`` remembered for the texts read last: a write compares its text with several candidates, and
    review compares every pair it lists."""
    text = unicodedata.normalize("NFKC", text).replace("’", "'")
    raw: list[tuple[str, str, bool]] = []  # (surface, group, opens a sentence)
    last = 0
    for match in _TOKEN.finditer(text):
        opens = not raw or bool(_SENTENCE_BREAK.search(text[last:match.start()]))
        surface, group = match.group(0), str(match.lastgroup)
        last = match.end()
        if group != "word":
            raw.append((surface, group, opens))
            continue
        for i, part in enumerate(_expand(surface)):
            raw.append((part, "word", opens and i == 0))
    raw = _phrases(raw)
    titled = _mostly_capitalised([s for s, g, _ in raw if g == "word"])
    out: list[Token] = []
    i = 0
    while i < len(raw):
        token, used = _read(raw, i, titled)
        out.append(Token(token[0], token[1], token[2], len(out)))
        i += used
    return tuple(out)


def _phrases(raw: list[tuple[str, str, bool]]) -> list[tuple[str, str, bool]]:
    """``raw`` with the idioms that negate nothing (``don't worry``) made neutral and the spans written in words
    (``half an hour``) written as their number and unit."""
    lower = [s.lower() for s, _, _ in raw]
    out: list[tuple[str, str, bool]] = []
    i = 0
    while i < len(raw):
        idiom = next((p for p in IDIOMS if tuple(lower[i:i + len(p)]) == p), None)
        if idiom is not None:
            out += [(s, "idiom", o) for s, _, o in raw[i:i + len(idiom)]]
            i += len(idiom)
            continue
        span = next((p for p in SPANS if tuple(lower[i:i + len(p)]) == p), None)
        if span is not None:
            out += [(part, "word", raw[i][2] and n == 0) for n, part in enumerate(SPANS[span])]
            i += len(span)
            continue
        out.append(raw[i])
        i += 1
    return out


def _expand(surface: str) -> list[str]:
    """A word token opened up: contractions (``don't`` → do not), ``and/or`` and ``on/off`` split, a number glued to
    its unit split (``5GB`` → 5 GB)."""
    lower = surface.lower()
    if lower in _SPECIAL_CONTRACTIONS:
        return _SPECIAL_CONTRACTIONS[lower].split()
    for ending, replacement in _CONTRACTIONS:
        if lower.endswith(ending) and len(lower) > len(ending):
            return [surface[: -len(ending)], *replacement.split()]
    if "/" in surface and not _looks_like_path(surface):
        return [p for p in surface.split("/") if p]
    glued = _GLUED_UNIT.match(surface)
    if glued and not _CLOCK.match(surface) and glued.group(2).lower() in UNITS and not re.match(
            r"^\d+(st|nd|rd|th|x)$", lower):
        return [glued.group(1), glued.group(2)]
    return [surface]


def _looks_like_path(surface: str) -> bool:
    return (surface.startswith(("/", "~", "./", "../")) or surface.count("/") >= 2 or bool(re.search(r"\.\w+$", surface))
            or any(c.isdigit() for c in surface))


def _mostly_capitalised(words: list[str]) -> bool:
    """Whether a text writes most of its words capitalised or in capitals (a title, shouting): capitals tell
    nothing there."""
    alpha = [w for w in words if w[:1].isalpha() and len(w) > 1]
    return len(alpha) >= 3 and sum(w[0].isupper() or _flipped(w) for w in alpha) >= 0.6 * len(alpha)


def _flipped(surface: str) -> bool:
    """Whether a word is written with its case turned over (``tHANKS``, ``jOHN``)."""
    return len(surface) > 1 and surface[0].islower() and surface[1:].isupper()


def _shouted(surface: str) -> bool:
    """Whether a word is written in capitals or with its case turned over (``OH``, ``wOW``): an everyday word so
    written is still that word."""
    return len(surface) > 1 and surface.isalpha() and (surface.isupper() or _flipped(surface))


def _read(raw: list[tuple[str, str, bool]], i: int, titled: bool) -> tuple[tuple[str, str, Family], int]:
    """The token starting at ``raw[i]`` as (key, surface, family), and how many raw parts it took (a number and
    the ``p.m.`` after it, a run of number words)."""
    surface, group, opens = raw[i]
    lower = surface.lower()
    if group == "idiom":
        return (lower, surface, "neutral"), 1
    if group in ("url", "email", "code"):
        return (lower.strip("`"), surface, "identifier"), 1
    if group == "money":
        return (re.sub(r"[\s,]", "", lower), surface, "number"), 1
    following = raw[i + 1][0].lower() if i + 1 < len(raw) else ""
    if any(c.isdigit() for c in surface):
        clock = _CLOCK.match(surface)
        if clock:
            return (_clock(clock.group(1), clock.group(2), clock.group(3)), surface, "number"), 1
        if following in ("am", "pm", "a.m", "p.m") and re.fullmatch(r"\d{1,2}(?::\d{2})?", surface):
            hours, _, minutes = surface.partition(":")
            return (_clock(hours, minutes or None, following[0]), f"{surface} {raw[i + 1][0]}", "number"), 2
        plain = re.fullmatch(r"[+-]?\d[\d.,:]*%?", surface)
        return (_number_key(surface), surface, "number" if plain else "identifier"), 1
    if lower in NUMBER_WORDS or (lower in NUMBER_SCALES and i > 0) or _hyphenated_number(lower) is not None:
        value, used, shown = _number_run(raw, i)
        if value is not None:
            return (str(value), shown, "number"), used
    if lower in ORDINALS:
        return (ORDINALS[lower], surface, "number"), 1
    if lower in ("noon", "midday"):
        return ("12:00", surface, "number"), 1
    if lower == "midnight":
        return ("00:00", surface, "number"), 1
    capitalised = surface[:1].isupper()
    if lower in RELATIVE_TIME and _is_time(following):
        return (lower, surface, "time"), 1
    if lower in MONTHS and (lower not in MONTH_WORDS or (capitalised and not opens)):
        return (MONTHS[lower], surface, "time"), 1
    weekday = WEEKDAYS.get(lower) or (WEEKDAYS.get(lower[:-1]) if lower.endswith("s") else None)
    if weekday:
        return (weekday, surface, "time"), 1
    if lower in TIME_WORDS or (lower.endswith("s") and lower[:-1] in TIME_WORDS):
        key = lower if lower in TIME_WORDS else lower[:-1]
        return ({"a.m": "am", "p.m": "pm"}.get(key, key), surface, "time"), 1
    unit = UNITS.get(lower) or (UNITS.get(lower[:-1]) if lower.endswith("s") and len(lower) > 3 else None)
    if unit and (len(lower) > 2 or (i > 0 and any(c.isdigit() for c in raw[i - 1][0]))):
        return (unit, surface, "time"), 1
    if lower in NEGATION:
        return (_negation_key(lower), surface, "negation"), 1
    if _shouted(surface) and (lower in NEUTRAL or _common(lower)) and (titled or lower not in ACRONYM_WORDS):
        return (ABBREVIATIONS.get(lower, lower), surface, "neutral" if lower in NEUTRAL else "word"), 1
    if _STRUCTURED.search(surface) and lower.rstrip(".") not in ("e.g", "i.e", "a.m", "p.m", "etc"):
        return (lower, surface, "identifier"), 1
    if (_CAMEL.search(surface) or (surface.isupper() and len(surface) > 1)) and lower not in PLAIN_CAPITALS \
            and not titled:
        return (lower, surface, "identifier"), 1
    key = ABBREVIATIONS.get(lower, lower)
    if lower in NEUTRAL:
        return (key, surface, "neutral"), 1
    if capitalised and lower != "i" and not (titled and lower in COMMON) and not (opens and _common(lower)):
        return (key, surface, "name"), 1
    return (key, surface, "word"), 1


def _is_time(lower: str) -> bool:
    """Whether a word names a time (a weekday, a month, a part of the day, a unit of time)."""
    single = lower[:-1] if lower.endswith("s") else lower
    return (lower in WEEKDAYS or single in WEEKDAYS or lower in MONTHS or lower in TIME_WORDS or single in TIME_WORDS
            or UNITS.get(lower) in _TIME_UNITS or UNITS.get(single) in _TIME_UNITS)


_TIME_UNITS = frozenset({"second", "minute", "hour", "day", "week", "month", "year", "decade", "century"})


def _common(lower: str) -> bool:
    return lower in COMMON or _stem(lower) in _COMMON_STEMS


def _clock(hours: str, minutes: str | None, half: str | None) -> str:
    h = int(hours) % 24
    if half is not None:
        h = h % 12 + (12 if half.lower() == "p" else 0)
    return f"{h:02d}:{minutes or '00'}"


def _number_key(surface: str) -> str:
    time = _TIME.match(surface)
    if time:
        return f"{int(time.group(1)):02d}:{time.group(2)}" + (f":{time.group(3)}" if time.group(3) else "")
    if _PLAIN_NUMBER.match(surface):
        return surface.replace(",", "").lower()
    return surface.lower().rstrip(".")


def _negation_key(lower: str) -> str:
    if lower in ("off", "disabled", "disable", "disables", "disabling"):
        return "off"
    if lower in ("forbidden", "forbid", "forbids", "prohibited", "prohibit", "banned", "disallowed", "denied",
                 "deny", "denies", "refused", "reject", "rejected"):
        return "forbidden"
    if lower in ("nope", "non"):
        return "no"
    if lower in ("except", "excluding"):
        return "except"
    return lower


def _hyphenated_number(lower: str) -> int | None:
    parts = lower.split("-")
    if len(parts) == 2 and parts[0] in NUMBER_WORDS and parts[1] in NUMBER_WORDS:
        return NUMBER_WORDS[parts[0]] + NUMBER_WORDS[parts[1]]
    return None


def _number_run(raw: list[tuple[str, str, bool]], i: int) -> tuple[int | None, int, str]:
    """The value of the run of number words starting at ``raw[i]`` (``twenty five``, ``two hundred``), the parts it
    took and how it was written."""
    total = current = 0
    used = 0
    seen = False
    while i + used < len(raw) and raw[i + used][1] == "word":
        word = raw[i + used][0].lower()
        hyphenated = _hyphenated_number(word)
        if word in NUMBER_WORDS or hyphenated is not None:
            current += NUMBER_WORDS[word] if hyphenated is None else hyphenated
        elif word in NUMBER_SCALES:
            scale = NUMBER_SCALES[word]
            if scale == 100:
                current = max(current, 1) * 100
            else:
                total += max(current, 1) * scale
                current = 0
        elif word == "and" and seen and i + used + 1 < len(raw) and raw[i + used + 1][0].lower() in NUMBER_WORDS:
            pass
        else:
            break
        seen = True
        used += 1
    if not seen:
        return None, 1, raw[i][0]
    return total + current, used, " ".join(raw[j][0] for j in range(i, i + used))


def _stem(word: str) -> str:
    """A light stem, enough for ``owns``/``owned``/``owning`` or ``backups``/``backup`` to meet."""
    w = word.lower()
    for ending, repl in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""), ("ly", "")):
        if w.endswith(ending) and len(w) - len(ending) >= 3 and not (ending == "s" and w.endswith("ss")):
            w = w[: -len(ending)] + repl
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]
    return w.rstrip("e") if len(w) > 3 else w


_COMMON_STEMS = frozenset(_stem(w) for w in COMMON)


def _stems_by_stem() -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for word, group in SYNONYMS.items():
        out[_stem(word)] = out.get(_stem(word), frozenset()) | frozenset(_stem(g) for g in group)
    return out


#: A stem → the stems of every word its words stand for.
_SYNONYM_STEMS = _stems_by_stem()


def same_meaning(a: Token, b: Token) -> bool:
    """Whether two content words stand for each other: one stem, or everyday synonyms."""
    if a.key == b.key:
        return True
    sa, sb = _stem(a.key), _stem(b.key)
    return sa == sb or sb in _SYNONYM_STEMS.get(sa, frozenset()) or sa in _SYNONYM_STEMS.get(sb, frozenset())
