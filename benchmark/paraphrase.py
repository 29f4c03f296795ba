"""Rule-made paraphrases and exact repeats of conversation turns, for the upkeep (duplicate) benchmark.

``paraphrase(text, rng)`` rewrites a turn by rules only, keeping its meaning: it applies one to three of these,
chosen by ``rng``:

- **reorder** two clauses of one sentence where that is safe: a leading subordinate clause moves to the end
  (``If A, B`` → ``B if A``) or a trailing ``because/if/when`` clause to the front; ``A, but B`` becomes
  ``B, although A``; two independent clauses ``A, and B`` (B opening on a subject) swap;
- **synonyms**: one to three words of a fixed table (``great`` → ``awesome``, ``really`` → ``truly``, …), matched
  case-insensitively on word boundaries, keeping the word's case;
- **punctuation**: ``!`` becomes ``.``, trailing punctuation is dropped or added;
- **interjection**: a leading ``Oh,`` / ``Well,`` is added or removed;
- **case**: the first word or the whole text changes case.

The result always differs from the input after normalisation (``normalise``: NFKC, case-folded, white space
runs made one space, stripped — what an exact duplicate is compared by); when the chosen rules change only the
case, a punctuation or interjection change is added. ``exact_repeat(text, rng)`` is the opposite: only white
space and case change, so the normalised text is the same.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Callable

#: Word → replacement (lower case). Entries are single words or short phrases whose replacement fits wherever
#: the word does in conversation; ambiguous words (``like``, ``enjoy``, ``just``, ``kind``, ``job``) are left out.
SYNONYMS: dict[str, str] = {
    "great": "awesome", "really": "truly", "happy": "glad", "think": "believe", "amazing": "incredible",
    "awesome": "fantastic", "wonderful": "lovely", "big": "large", "small": "little", "very": "really",
    "glad": "happy", "love": "adore", "hard": "tough", "difficult": "challenging", "beautiful": "gorgeous",
    "nice": "lovely", "thanks": "thank you", "interesting": "fascinating", "definitely": "certainly",
    "maybe": "perhaps", "excited": "thrilled", "sad": "unhappy", "tired": "exhausted", "friend": "pal",
    "friends": "pals", "kids": "children", "mom": "mother", "dad": "father", "cool": "neat",
    "important": "significant", "idea": "thought", "lots": "plenty", "quickly": "fast", "soon": "shortly",
    "often": "frequently", "absolutely": "totally", "totally": "completely", "super": "really",
    "incredible": "amazing", "fantastic": "terrific", "guess": "suppose", "hey": "hi", "hello": "hi",
    "yeah": "yes", "yep": "yes", "okay": "alright", "bye": "goodbye", "talk": "chat", "story": "tale",
    "photo": "picture", "photos": "pictures", "pic": "picture", "seems": "appears", "huge": "enormous",
    "stuff": "things", "trip": "journey", "lately": "recently", "recently": "lately", "finally": "at last",
    "usually": "generally", "especially": "particularly", "extremely": "incredibly", "scared": "afraid",
    "a lot": "plenty", "passionate": "enthusiastic", "bought": "purchased", "buy": "purchase",
}
#: Words after which a table word keeps its own (``thanks to``, ``happy birthday``, ``super bowl``).
_KEEP_BEFORE: dict[str, tuple[str, ...]] = {
    "thanks": ("to",), "happy": ("birthday", "hour", "new", "news", "ending", "place", "memories", "tears"), "super": ("bowl",), "hard": ("drive", "copy"),
    "cool": ("down", "off"), "talk": ("show",), "big": ("deal",),
}
_PATTERNS: dict[str, re.Pattern[str]] = {
    word: re.compile(r"\b" + re.escape(word).replace(r"\ ", r"\s+") + r"\b"
                     + "".join(rf"(?!\s+{after}\b)" for after in _KEEP_BEFORE.get(word, ())), re.IGNORECASE)
    for word in SYNONYMS
}
INTERJECTIONS = ("Oh", "Well")
_INTERJECTION = re.compile(r"^\s*(oh|well)\s*,\s*", re.IGNORECASE)
_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
_I_FORM = re.compile(r"^I(?:['’]\w+)?$")
_SUBORDINATE_LEAD = re.compile(r"^(If|When|Because|Although|Though|While|Once|After|Before) ([^,]+), ([^,]+)$")
_SUBORDINATE_TAIL = re.compile(r"^([^,]+?) (because|if|when) ([^,]+)$")
_BUT = re.compile(r"^([^,]+), but ([^,]+)$")
_AND = re.compile(r"^([^,]+), and ([^,]+)$")
#: Words a clause opens on when it is a whole clause with its own subject (``A, and B`` may then swap).
_SUBJECTS = frozenset({
    "i", "i'm", "i've", "i'll", "i'd", "we", "we're", "we've", "we'll", "you", "you're", "you've", "you'll",
    "he", "he's", "she", "she's", "they", "they're", "they've", "it", "it's", "that", "that's", "this", "my",
    "our", "your", "his", "her", "their", "there", "there's",
})

#: Words in a second clause that point back at the first (``…, and it was fun``, ``…, and she does too``) or
#: order it after the first (``then``): such ``A, and B`` clauses are not swapped.
_ANAPHORA = re.compile(
    r"\b(it|its|it's|that|this|these|those|they|them|their|he|she|him|her|his|too|also|either|so|then|does|did|do|"
    r"one|there|and|but)\b", re.IGNORECASE)
#: Past-tense marks: ``A, and B`` told in the past is often a sequence (``I did A, and then B``) and is not swapped.
_PAST = re.compile(r"\b(\w+ed|was|were|got|went|had|did|took|made|saw|came|felt|found|told|said|left)\b", re.IGNORECASE)
#: Words that bind the ``because/if/when`` clause after them (``even when``, ``only if``; verbs taking it as their
#: object: ``I love when``, ``I wonder if``): that clause cannot move.
_BOUND_TO_NEXT = frozenset({
    "even", "only", "just", "except", "like", "as", "and", "but", "or", "not", "back", "right", "especially", "since",
    "until", "love", "loved", "hate", "know", "knew", "remember", "wonder", "wondering", "see", "ask", "asked", "mean",
    "tell", "imagine", "understand", "notice", "recall", "forget", "sure", "check", "decide", "figure", "out", "about",
    "is", "was", "it's", "that's", "from", "for", "to", "of", "at", "in", "on", "moments", "times", "time", "days",
})
#: Words a main clause opens on when a trailing ``because/if/when`` clause may move before it: a subject
#: pronoun (not ``there``/``that``, which often open a clause the ``when`` belongs to) or an imperative ``let``.
_TAIL_MAIN = (_SUBJECTS - {"there", "there's", "that", "that's", "this"}) | {"let"}
_ASIDE = re.compile(r"\s[-–—]|[-–—]\s|[;:()\"“”]")

Rule = Callable[[str, random.Random], "str | None"]


def normalise(text: str) -> str:
    """``text`` as exact duplicates are compared: NFKC, case-folded, white space runs made one space, stripped."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def _match_case(original: str, replacement: str) -> str:
    """``replacement`` in the case of ``original``: upper, capitalised or lower."""
    if len(original) > 1 and original.isupper():
        return replacement.upper()
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def _capitalise(text: str) -> str:
    """``text`` with its first letter upper case."""
    return text[:1].upper() + text[1:]


def _decapitalise(clause: str, whole: str) -> str:
    """``clause`` with its first letter lower case, unless its first word is ``I``-form, an acronym, or a name
    (written capitalised somewhere in ``whole`` other than at a sentence's start)."""
    found = _WORD.match(clause)
    if found is None:
        return clause
    word = found.group(0)
    if _I_FORM.match(word) or (len(word) > 1 and word.isupper()):
        return clause
    if re.search(rf"(?<![.!?]\s)(?<!^)\b{re.escape(word)}\b", whole):
        return clause
    return clause[:1].lower() + clause[1:]


def _first_word(clause: str) -> str:
    found = _WORD.match(clause)
    return found.group(0).lower().replace("’", "'") if found else ""


def _words(clause: str) -> int:
    return len(clause.split())


def _reorder_sentence(body: str, whole: str) -> str | None:
    """One sentence (without its end mark) with two clauses reordered, or ``None`` when no safe pattern fits."""
    if _ASIDE.search(body):  # a dash, colon or bracket: the clauses are not plain
        return None
    if found := _SUBORDINATE_LEAD.match(body):
        word, first, second = found.groups()
        if _words(first) >= 2 and _words(second) >= 2 and not re.search(r"\b(and|but|or)\b", second):
            return f"{_capitalise(second)} {word.lower()} {_decapitalise(first, whole)}"
    if found := _BUT.match(body):
        first, second = found.groups()
        if _words(first) >= 3 and _words(second) >= 3:
            return f"{_capitalise(second)}, although {_decapitalise(first, whole)}"
    if found := _AND.match(body):
        first, second = found.groups()
        if (_words(first) >= 3 and _words(second) >= 3 and _first_word(first) in _SUBJECTS
                and _first_word(second) in _SUBJECTS and not _ANAPHORA.search(second)
                and not _PAST.search(body)):
            return f"{_capitalise(second)}, and {_decapitalise(first, whole)}"
    if found := _SUBORDINATE_TAIL.match(body):
        first, word, second = found.groups()
        if (_words(first) >= 2 and _words(second) >= 2 and _first_word(first) in _TAIL_MAIN
                and first.split()[-1].lower() not in _BOUND_TO_NEXT
                and not re.search(rf"\b({word}|but)\b", second, re.IGNORECASE)):
            return f"{_capitalise(word)} {second}, {_decapitalise(first, whole)}"
    return None


def _split_end(sentence: str) -> tuple[str, str]:
    """A sentence's body and its end marks (``"Hi there!!"`` → ``("Hi there", "!!")``)."""
    body = sentence.rstrip(".!?")
    return body, sentence[len(body):]


def reorder(text: str, rng: random.Random) -> str | None:
    """Reorder two clauses in one sentence of ``text`` (chosen by ``rng`` among those where it is safe)."""
    sentences = _SENTENCE_END.split(text.strip())
    candidates: list[tuple[int, str]] = []
    for i, sentence in enumerate(sentences):
        body, end = _split_end(sentence)
        if (out := _reorder_sentence(body, text)) is not None:
            candidates.append((i, out + end))
    if not candidates:
        return None
    i, out = rng.choice(candidates)
    sentences[i] = out
    return " ".join(sentences)


def synonyms(text: str, rng: random.Random) -> str | None:
    """Replace every occurrence of one to three table words found in ``text`` by their synonyms."""
    present = [word for word, pattern in _PATTERNS.items() if pattern.search(text)]
    if not present:
        return None
    chosen = rng.sample(present, rng.randint(1, min(3, len(present))))
    pattern = re.compile("|".join(_PATTERNS[word].pattern for word in chosen), re.IGNORECASE)

    def swap(found: re.Match[str]) -> str:
        key = _SPACE.sub(" ", found.group(0).lower())
        return _match_case(found.group(0), SYNONYMS[key])

    out = pattern.sub(swap, text)
    for replacement in {SYNONYMS[word] for word in chosen}:
        out = _fix_articles(out, replacement)
    return out


def _fix_articles(text: str, word: str) -> str:
    """``a``/``an`` before ``word`` made to fit its first sound (by its first letter: ``an awesome``)."""
    article = "an" if word[:1] in "aeiou" else "a"
    return re.sub(rf"\b(an?)(\s+)(?={re.escape(word)}\b)",
                  lambda m: _match_case(m.group(1), article) + m.group(2), text, flags=re.IGNORECASE)


def punctuation(text: str, rng: random.Random) -> str | None:
    """``!`` made ``.``, or the trailing end mark dropped (not a ``?``) or added."""
    stripped = text.rstrip()
    options: list[str] = []
    if "!" in stripped:
        options.append(re.sub(r"!+", ".", stripped))
    if stripped.endswith((".", "!")) and not stripped.endswith("?"):
        options.append(stripped.rstrip(".!"))
    elif stripped and stripped[-1].isalnum():
        options.append(stripped + ".")
    return rng.choice(options) if options else None


def interjection(text: str, rng: random.Random) -> str | None:
    """Remove a leading ``Oh,`` / ``Well,``, or add one."""
    if found := _INTERJECTION.match(text):
        rest = text[found.end():]
        return _capitalise(rest) if rest else None
    if not text.strip():
        return None
    return f"{rng.choice(INTERJECTIONS)}, {_decapitalise(text.lstrip(), text)}"


def case(text: str, rng: random.Random) -> str | None:
    """The first word lower or upper case, or the whole text lower or upper case."""
    found = _WORD.search(text)
    if found is None:
        return None
    word = found.group(0)
    options = {
        text.lower(), text.upper(),
        text[:found.start()] + word.lower() + text[found.end():],
        text[:found.start()] + word.upper() + text[found.end():],
    }
    options.discard(text)
    return rng.choice(sorted(options)) if options else None


RULES: tuple[Rule, ...] = (reorder, synonyms, punctuation, interjection, case)


def _differ_after_normalising(original: str, text: str, rng: random.Random) -> str:
    """``text``, changed by punctuation or an interjection until its normalised form differs from ``original``'s."""
    for rule in (punctuation, interjection):
        if normalise(text) != normalise(original):
            return text
        text = rule(text, rng) or text
    return text if normalise(text) != normalise(original) else text + "."


def paraphrase(text: str, rng: random.Random) -> str:
    """``text`` rewritten by one to three rules chosen by ``rng`` (see the module), meaning kept.

    The result differs from ``text`` even after normalisation; when no chosen rule changes more than case, a
    punctuation or interjection change is made as well.
    """
    wanted = rng.randint(1, 3)
    out = text
    applied = 0
    for rule in rng.sample(RULES, len(RULES)):
        changed = rule(out, rng)
        if changed is not None and changed != out:
            out = changed
            applied += 1
            if applied == wanted:
                break
    return _differ_after_normalising(text, out, rng)


def exact_repeat(text: str, rng: random.Random) -> str:
    """``text`` with only white space and case changed: a repeat that is exact after ``normalise``."""
    spaced = _SPACE.sub(lambda m: rng.choice((" ", "  ", "\t", " \n")), text)
    cased = rng.choice((spaced, spaced.lower(), spaced.upper(), spaced.swapcase()))
    out = rng.choice(("", " ", "\n")) + cased + rng.choice(("", " ", "  \n"))
    if normalise(out) != normalise(text):  # a case mapping that does not fold back (rare scripts)
        out = rng.choice((" ", "\n")) + spaced
    return out if out != text else " " + text
