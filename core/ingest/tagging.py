"""Tags: deterministic ones on every memory, and (``tagger.llm``) a model's classification of notes.

Deterministic tags are namespaced so they never mix with a user's own: ``kind:chunk``,
``lang:python``, ``layer:docs|code|tests|config|other``. Answers do not print namespaced tags (they
cost tokens and say nothing new); the ``tags`` filter of search accepts them.

The model classification (type, domain, topics) is asked for as one line of JSON under a schema,
then validated like any provider's reply; ``tagger.llm_concurrency`` memories share one request.
Text is redacted of secrets first. Any failure leaves the memory with its deterministic tags.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import PurePosixPath
from typing import Any

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


SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["items"],
    "properties": {"items": {"type": "array", "items": {
        "type": "object", "additionalProperties": False, "required": ["type", "domain", "topics"],
        "properties": {"type": {"type": "string", "maxLength": 30}, "domain": {"type": "string", "maxLength": 40},
                       "topics": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 30}}}}}},
}


def classify(provider: Provider, texts: list[str], *, deadline: float) -> list[Classification | None]:
    """One classification per text (``None`` where the model gave nothing valid). Never raises for model
    trouble: a timeout or a bad reply gives ``None`` for the texts concerned."""
    numbered = "\n".join(f"{i + 1}. {redact(t).text[:1500]}" for i, t in enumerate(texts))
    system = ("Classify each numbered memory. type: what it is (decision, preference, fact, todo, question, howto, "
              "note…); domain: its field in one or two words; topics: up to five short keywords. Reply with JSON: "
              '{"items": [one object per memory, in order]}.')
    try:
        out = provider.complete([{"role": "system", "content": system}, {"role": "user", "content": numbered}],
                                deadline=deadline, max_tokens=60 * len(texts) + 20, json_schema=SCHEMA)
        items = json.loads(out.text).get("items", [])
    except (ModelError, ValueError, AttributeError):
        return [None] * len(texts)
    results: list[Classification | None] = []
    for i in range(len(texts)):
        try:
            results.append(Classification.model_validate(items[i]))
        except (IndexError, ValidationError, TypeError):
            results.append(None)
    return results


def model_tags(c: Classification) -> list[str]:
    def slug(s: str) -> str:
        return re.sub(r"[^a-z0-9-]+", "-", s.strip().lower()).strip("-")[:30]

    return [t for t in [f"domain:{slug(c.domain)}", *(f"topic:{slug(t)}" for t in c.topics)] if not t.endswith(":")]


def deadline_in(seconds: float) -> float:
    return time.monotonic() + seconds
