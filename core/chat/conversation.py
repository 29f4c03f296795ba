"""Conversations kept in the workspace: every message of a chat, numbered, one JSON file per conversation.

A conversation lives in ``<workspace folder>/chats/<id>.json`` and is replaced atomically after each turn,
so a crash leaves the previous turn's file whole. Messages are numbered from 1 in the order they were
said; tool calls and their results are messages too (the model reads them again on the next turn while
they fit), and ``conversation_history`` reads any of them back by number or by words.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from ..errors import InvalidArgument, NotFound, StoreError
from ..fileio import atomic_write_bytes

Role = Literal["user", "assistant", "tool"]
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
TITLE_CHARS = 80


@dataclass
class Message:
    """One message: a question, a reply (with the tool calls it made), or one tool's result."""

    number: int
    role: Role
    content: str
    at: str  # ISO 8601, UTC
    turn: int  # the user turn this message belongs to (1 for the first question and what followed it)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # [{"id", "name", "arguments"}]
    tool_call_id: str = ""  # a tool result: the call it answers
    tool_name: str = ""
    research: bool = False  # a step of research (a reply with calls, a result, a note on an unreadable call)
    #: What the model reads in place of ``content`` (a question too long for it: the readers' notes on it).
    shown: str = ""

    def as_template(self) -> dict[str, Any]:
        """The message as chat templates read it (OpenAI's shape: ``tool_calls`` with ``function``). A question
        says when it was asked, after its text, so that "last week" can become a date; the instructions stay
        the same from one turn to the next (an unchanged prompt prefix the model need not read again)."""
        content = self.shown or self.content
        if self.role == "user" and not self.research and self.at:
            content += f"\n\n(Asked {asked_when(self.at)}.)"
        out: dict[str, Any] = {"role": self.role, "content": content}
        if self.tool_calls:
            out["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c["arguments"]}}
                                 for c in self.tool_calls]
        if self.role == "tool":
            out["tool_call_id"] = self.tool_call_id
            out["name"] = self.tool_name
        return out


@dataclass
class Conversation:
    id: str
    title: str
    created: str
    messages: list[Message] = field(default_factory=list)
    #: A running summary of the earlier exchanges that no longer fit, covering messages 1 to ``summary_upto``.
    summary: str = ""
    summary_upto: int = 0
    #: After a failed summary: the message count at which to try again (six messages later).
    summary_retry_at: int = 0

    @property
    def turns(self) -> int:
        return max((m.turn for m in self.messages), default=0)

    def add(self, role: Role, content: str, *, turn: int, **extra: Any) -> Message:
        """Append a message numbered after the last one."""
        message = Message(len(self.messages) + 1, role, content, _now(), turn, **extra)
        self.messages.append(message)
        return message


def asked_when(at: str) -> str:
    """An ISO time in words, in this computer's time zone: ``on Sunday 6 December 2026 at 15:04 (UTC+01:00)``."""
    try:
        moment = datetime.fromisoformat(at).astimezone()
    except ValueError:
        return "at an unknown time"
    offset = moment.strftime("%z")
    zone = f"UTC{offset[:3]}:{offset[3:]}" if offset else "UTC"
    return f"on {moment:%A} {moment.day} {moment:%B %Y} at {moment:%H:%M} ({zone})"


def new_id() -> str:
    """A conversation id: the date and a random suffix (``2026-12-01-3f9a1c``)."""
    return f"{datetime.now(UTC):%Y-%m-%d}-{secrets.token_hex(3)}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class ConversationStore:
    """The conversations of one workspace, in its ``chats`` folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, conversation_id: str) -> Path:
        if not _ID.fullmatch(conversation_id):
            raise InvalidArgument(f"'{conversation_id}' is not a conversation name: use lowercase letters, digits "
                                  "and dashes, 1–40 long, starting with a letter or digit.")
        return self.folder / f"{conversation_id}.json"

    def new(self, title: str = "", conversation_id: str | None = None) -> Conversation:
        """A new, empty conversation (saved once it has a message). Raises ``InvalidArgument`` for a bad name."""
        cid = conversation_id or new_id()
        self._path(cid)
        return Conversation(cid, title[:TITLE_CHARS], _now())

    def exists(self, conversation_id: str) -> bool:
        return self._path(conversation_id).is_file()

    def load(self, conversation_id: str) -> Conversation:
        """The conversation called ``conversation_id``.

        Raises:
            InvalidArgument: not a conversation name.
            NotFound: no such conversation in this workspace.
            StoreError: its file cannot be read (the message names it).
        """
        path = self._path(conversation_id)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise NotFound(f"No conversation '{conversation_id}' in this workspace; `engram chat --list` lists "
                           "them.") from None
        except (OSError, ValueError) as exc:
            raise StoreError(f"The conversation file {path} cannot be read ({exc}).") from exc
        try:
            messages = [Message(**m) for m in data["messages"]]
            return Conversation(data["id"], data["title"], data["created"], messages, data.get("summary", ""),
                                data.get("summary_upto", 0), data.get("summary_retry_at", 0))
        except (KeyError, TypeError) as exc:
            raise StoreError(f"The conversation file {path} is not one Engram wrote ({exc}).") from exc

    def save(self, conversation: Conversation) -> None:
        """Write ``conversation`` whole (readers see the old file or the new one). Raises ``StoreError``."""
        path = self._path(conversation.id)
        data = {"id": conversation.id, "title": conversation.title, "created": conversation.created,
                "summary": conversation.summary, "summary_upto": conversation.summary_upto,
                "summary_retry_at": conversation.summary_retry_at,
                "messages": [asdict(m) for m in conversation.messages]}
        try:
            atomic_write_bytes(path, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"), mode=0o600)
        except OSError as exc:
            raise StoreError(f"The conversation cannot be saved to {path} ({exc}).") from exc

    def list(self) -> list[Conversation]:
        """Every conversation, the latest first (files that cannot be read are left out)."""
        found: list[tuple[int, Conversation]] = []
        for path in self.folder.glob("*.json") if self.folder.is_dir() else []:
            try:
                found.append((path.stat().st_mtime_ns, self.load(path.stem)))
            except (OSError, StoreError, InvalidArgument, NotFound):
                continue
        found.sort(key=lambda f: (f[1].messages[-1].at if f[1].messages else f[1].created, f[0]), reverse=True)
        return [conversation for _, conversation in found]

    def rename(self, conversation_id: str, title: str) -> Conversation:
        """Give a conversation a new title. Raises ``NotFound``, ``InvalidArgument`` (empty title), ``StoreError``."""
        if not title.strip():
            raise InvalidArgument("A conversation's title cannot be empty.")
        conversation = self.load(conversation_id)
        conversation.title = title.strip()[:TITLE_CHARS]
        self.save(conversation)
        return conversation

    def delete(self, conversation_id: str) -> bool:
        """Delete a conversation; False when there was none. Raises ``InvalidArgument``, ``StoreError``."""
        path = self._path(conversation_id)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise StoreError(f"The conversation file {path} cannot be deleted ({exc}).") from exc
        return True
