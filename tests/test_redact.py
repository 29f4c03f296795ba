"""Secrets never reach a model provider; ordinary text about secrets stays as it is."""

from __future__ import annotations

import pytest

from engram.core.models.redact import redact

# Real-looking but fake: every value here was made up for this test.
SECRETS = [
    ("aws-access-key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"),
    ("github-token", "token ghp_1234567890abcdefghijklmnopqrstuvwxyzAB used in CI"),
    ("github-token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRST"),
    ("openai-key", "OPENAI key: sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"),
    ("anthropic-key", "use sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
    ("slack-token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("google-api-key", "maps key AIzaSyA1234567890abcdefghijklmnopqrstuv"),
    ("stripe-key", "STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("huggingface-token", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"),
    ("jwt", "Cookie: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("bearer-token", "Authorization: Bearer 3f1c9a7b2e4d6f8a0b1c3d5e7f9a1b3c"),
    ("url-password", "DATABASE_URL=postgres://admin:s3cr3t-Pa55@db.internal:5432/app"),
    ("private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7V1\n-----END RSA PRIVATE KEY-----"),
    ("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"),
    ("assignment", "DJANGO_SECRET_KEY='x9!k2#mz8q@l4w7e'"),
    ("assignment", "export API_KEY=9f8e7d6c5b4a3f2e1d0c"),
    ("assignment", "  db_password: hunter2hunter2"),
]

NEAR_MISSES = [
    "Reset your password from the account page.",
    "The token count of the answer stays under 4,000.",
    "PASSWORD_MIN_LENGTH = 8",
    "SECRET_KEY = <your secret key here>",
    "API_KEY=${OPENAI_API_KEY}",
    "task-manager and risk-assessment are project names",
    "The AKIA prefix marks AWS access keys.",
    "See https://docs.djangoproject.com/en/5.2/topics/security/ for details.",
    "Use a Bearer token in the Authorization header.",
    "ssh user@example.com and git@github.com:org/repo.git",
    "def get_password_hash(password): return hash(password)",
]


@pytest.mark.parametrize(("kind", "text"), SECRETS)
def test_secrets_are_redacted(kind: str, text: str) -> None:
    out = redact(text)
    assert out.found.get(kind, 0) >= 1, out
    assert f"[REDACTED:{kind}]" in out.text


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_stay(text: str) -> None:
    out = redact(text)
    assert out.text == text and out.count == 0


def test_surrounding_text_is_kept() -> None:
    out = redact("Connect with postgres://app:pa55w0rd-x@db:5432/main and keep the rest.")
    assert out.text == "Connect with postgres://[REDACTED:url-password]@db:5432/main and keep the rest."
