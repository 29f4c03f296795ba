"""Secret redaction: what is removed from text before any model provider sees it.

Covered: cloud and service API keys (AWS, GitHub, OpenAI, Anthropic, Slack, Google, Stripe,
Hugging Face), JSON Web Tokens, bearer tokens, PEM private keys, passwords inside URLs, and
``.env``-style assignments whose name says secret, token, password or key. Each match becomes
``[REDACTED:<kind>]``. Patterns are anchored on the secret's own shape, so ordinary words about
secrets ("reset your password", "token count", ``PASSWORD_MIN_LENGTH = 8``) stay.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("private-key", re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z]+ )*PRIVATE KEY-----")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b")),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}\b")),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("bearer-token", re.compile(r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/-]{20,}=*")),
    ("url-password", re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
]
# NAME = value / NAME: value, where NAME says it holds a secret and the value looks like one (8+ characters,
# not only digits, not a placeholder in angle brackets or ${...}).
_ASSIGNMENT = re.compile(
    r"(?im)^(?P<lead>\s*(?:export\s+)?[\"']?(?P<name>[A-Z0-9_.-]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PWD|API_?KEY|"
    r"ACCESS_?KEY|PRIVATE_?KEY|CLIENT_?SECRET|AUTH)[A-Z0-9_.-]*)[\"']?\s*[:=]\s*)"
    r"(?:(?P<quote>[\"'])(?P<quoted>(?!\d+(?P=quote))(?!<)(?!\$\{)[^\"'\n]{8,})(?P=quote)"
    r"|(?P<bare>(?!\d+\b)(?!<)(?!\$\{)[^\s\"'#]{8,}))")


@dataclass(frozen=True)
class Redacted:
    text: str
    found: dict[str, int]  # kind -> how many were removed

    @property
    def count(self) -> int:
        return sum(self.found.values())


def redact(text: str) -> Redacted:
    """``text`` with every recognised secret replaced by ``[REDACTED:<kind>]``."""
    found: dict[str, int] = {}

    def sub(kind: str) -> Callable[[re.Match[str]], str]:
        def replace(_: re.Match[str]) -> str:
            found[kind] = found.get(kind, 0) + 1
            return f"[REDACTED:{kind}]"

        return replace

    for kind, pattern in _PATTERNS:
        text = pattern.sub(sub(kind), text)

    def assignment(m: re.Match[str]) -> str:
        value = m.group("quoted") or m.group("bare") or ""
        if value.startswith("[REDACTED:"):
            return m.group(0)
        found["assignment"] = found.get("assignment", 0) + 1
        quote = m.group("quote") or ""
        return f"{m.group('lead')}{quote}[REDACTED:assignment]{quote}"

    text = _ASSIGNMENT.sub(assignment, text)
    return Redacted(text, found)
