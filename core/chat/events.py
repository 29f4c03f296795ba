"""What one chat turn says as it runs (its events, in the order they happen) and what it did (``ChatTurn``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Ended = Literal["answered", "uncited", "no_progress", "timeout", "tokens", "context", "stopped", "no_tools", "model_error"]


@dataclass(frozen=True)
class ChatText:
    """A piece of the reply as it is written (``research``: may turn out to be the answer; ``answer``)."""

    text: str
    phase: Literal["research", "answer"]


@dataclass(frozen=True)
class ToolStarted:
    step: int
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolFinished:
    step: int
    name: str
    text: str
    error: bool
    new_ids: int
    repeated_of: int | None = None


@dataclass(frozen=True)
class ChatNote:
    text: str


@dataclass(frozen=True)
class ChatProgress(ChatNote):
    """How far a long step is (a long question read in sections): shown, not kept among the turn's notes."""


@dataclass(frozen=True)
class ModelDownload:
    """The chat model is being downloaded (the first local chat, once): bytes done of total."""

    model: str
    done: int
    total: int


@dataclass(frozen=True)
class ChatAnswer:
    text: str
    cited: tuple[str, ...]
    fallback: bool


ChatEvent = ChatText | ToolStarted | ToolFinished | ChatNote | ChatProgress | ModelDownload | ChatAnswer


@dataclass(frozen=True)
class ToolStep:
    step: int
    name: str
    arguments: dict[str, Any]
    error: bool
    new_ids: int
    repeated_of: int | None


@dataclass
class ChatTurn:
    """What one turn did and said."""

    conversation: str
    answer: str = ""
    cited: list[str] = field(default_factory=list)  # memory ids cited that research read
    unread_citations: list[str] = field(default_factory=list)  # ids cited that no tool returned in this turn
    steps: list[ToolStep] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)  # memory ids the tools returned, in order
    rounds: int = 0
    tokens: int = 0  # prompt tokens read and tokens written by every model call of the turn
    evaluated: int = 0  # of the prompt tokens, those the model evaluated (the rest were reused from its last call)
    seconds: float = 0.0
    ended: Ended = "answered"
    fallback: bool = False
    notes: list[str] = field(default_factory=list)
    #: A long question read in sections first: how many sections, and the seconds it took.
    sections: int = 0
    analysis_seconds: float = 0.0
