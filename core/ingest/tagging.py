"""Tags: deterministic ones on every memory, and (``tagger.llm``) a model's classification of notes.

Deterministic tags are namespaced so they never mix with a user's own: ``kind:chunk``,
``lang:python``, ``layer:docs|code|tests|config|other``. Answers do not print namespaced tags (they
cost tokens and say nothing new); the ``tags`` filter of search accepts them.

The model classification (type, domain, topics) is one request per memory: the memory's project and file, its
text, then the instructions (with the instructions first, a model classifies differently, so they are not kept
evaluated between memories), asking for the JSON on one line (under half the tokens of indented JSON). The reply
is not held to a grammar: it is read and validated like a remote provider's (on a GPU the grammar cost more than
the inference). Remote servers are asked not to think. With ``tagger.llm_concurrency`` above 1, a remote
provider gets that many requests at once; the local model takes them one after another (llama-cpp-python's
``Llama`` decodes one sequence; the design's batch of sequences in a second context is not built). Text is
redacted of secrets first. Any failure leaves the memory with its deterministic tags.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import PurePosixPath

from pydantic import BaseModel, Field, ValidationError

from ..errors import ModelError
from ..models.providers import Provider
from ..models.redact import redact

_TEST = re.compile(r"(^|/)(tests?|spec)(/|$)|(^|/)test_[^/]*$|_test\.\w+$|\.spec\.\w+$")
_CONFIG = {".toml", ".yaml", ".yml", ".json", ".ini", ".cfg", ".conf", ".env"}
_DOCS = {".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc"}


def layer(source: str) -> str:
    """Where a file sits in a project: docs, code, tests, config or other."""
    path = PurePosixPath(source)
    if _TEST.search(source):
        return "tests"
    if path.suffix.lower() in _CONFIG:
        return "config"
    if path.suffix.lower() in _DOCS or "/docs/" in f"/{source}":
        return "docs"
    if path.suffix.lower() in {".py", ".pyi", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".go", ".rs", ".java", ".c", ".h",
                               ".cpp", ".rb", ".php", ".cs", ".kt", ".swift", ".sh"}:
        return "code"
    return "other"


def deterministic_tags(kind: str, fmt: str = "", source: str = "") -> list[str]:
    tags = [f"kind:{kind}"]
    if fmt:
        tags.append(f"lang:{fmt}")
    if source and not source.startswith("content:"):
        tags.append(f"layer:{layer(source)}")
    return tags


class Classification(BaseModel):
    type: str = Field(min_length=1, max_length=30)
    domain: str = Field(min_length=1, max_length=40)
    topics: list[str] = Field(default_factory=list, max_length=5)


#: Text of a memory the model reads (the start of a long one).
MEMORY_CHARS = 1500
#: Tokens the one-line JSON reply may take.
REPLY_TOKENS = 80
INSTRUCTIONS = ("Classify the memory above. type: what it is (decision, preference, fact, todo, question, howto, "
                "note…); domain: its field in one or two words; topics: up to five short keywords. Reply with one "
                'line of JSON and nothing else: {"type": "…", "domain": "…", "topics": ["…"]}')


@dataclass(frozen=True)
class ToClassify:
    """A memory to classify: its text, and where it belongs (said to the model before the text)."""

    text: str
    project: str
    source: str = ""  # the file or text it comes from ("": a note)


def request(memory: ToClassify) -> str:
    """The one message a classification sends: project, file, the memory (redacted), then the instructions."""
    where = memory.source.removeprefix("content:") if memory.source else "a note"
    return (f"Project: {memory.project}\nFrom: {where}\n\nMemory:\n{redact(memory.text).text[:MEMORY_CHARS]}"
            f"\n\n{INSTRUCTIONS}")


def read_reply(text: str) -> Classification | None:
    """The classification in a model's reply: its first JSON object, validated (``None`` when there is none)."""
    start = text.find("{")
    while start != -1:
        try:
            value, _ = json.JSONDecoder().raw_decode(text[start:])
            return Classification.model_validate(value)
        except (ValueError, ValidationError):
            start = text.find("{", start + 1)
    return None


def classify(provider: Provider, memories: Sequence[ToClassify], *, deadline: float,
             concurrency: int = 1) -> list[Classification | None]:
    """One classification per memory (``None`` where the model gave nothing valid), one request each. Never raises
    for model trouble: a timeout or a bad reply gives ``None`` for that memory."""
    def one(memory: ToClassify) -> Classification | None:
        try:
            out = provider.complete([{"role": "user", "content": request(memory)}], deadline=deadline,
                                    max_tokens=REPLY_TOKENS, thinking=False)
        except ModelError:
            return None
        return read_reply(out.text)

    if concurrency <= 1 or provider.name == "local" or len(memories) < 2:
        return [one(m) for m in memories]
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="engram-tagging") as pool:
        return list(pool.map(one, memories))


def model_tags(c: Classification) -> list[str]:
    def slug(s: str) -> str:
        return re.sub(r"[^a-z0-9-]+", "-", s.strip().lower()).strip("-")[:30]

    return [t for t in [f"domain:{slug(c.domain)}", *(f"topic:{slug(t)}" for t in c.topics)] if not t.endswith(":")]


def deadline_in(seconds: float) -> float:
    return time.monotonic() + seconds
