"""What recall returns: the steps it ran, the merged evidence, or (without a plan) the plain search."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ..tools.results import Fact, Memory, SearchResult, SourceInfo

#: Where a recall's plan came from: the caller, the local model, the question alone (the model proposed
#: nothing), or no plan at all.
PlanSource = Literal["caller", "model", "question", "none"]


class StepReport(BaseModel):
    """One plan step as it ran: how many results it gave, or its error."""

    number: int
    tool: str
    args: dict[str, Any]
    results: int = 0
    error: str | None = None
    duplicate_of: int | None = None
    seconds: float = 0.0
    #: A search step's superseded memories that matched and were left out.
    superseded_matched: int = 0


class Evidence(BaseModel):
    """One merged result, keyed by memory id, ``fact:<id>`` or ``file:<source>``."""

    key: str
    kind: Literal["memory", "fact", "file"]
    steps: list[int]
    memory: Memory | None = None
    fact: Fact | None = None
    file: SourceInfo | None = None

    @property
    def size(self) -> int:
        if self.memory is not None:
            return len(self.memory.content)
        if self.file is not None:
            return len(self.file.summary) + sum(len(t) for t in self.file.outline)
        return 0


class RecallResult(BaseModel):
    question: str
    planned: bool = Field(description="Whether a plan ran; without one, `search` holds the plain search.")
    plan_source: PlanSource = "none"
    steps: list[StepReport] = Field(default_factory=list)
    items: list[Evidence] = Field(default_factory=list)
    search: SearchResult | None = None
    answer: str | None = Field(None, description="The local model's cited answer, when one passed the citation check.")
    cited: list[int] = Field(default_factory=list, description="Evidence numbers the answer cites.")
    notes: list[str] = Field(default_factory=list)
    model: dict[str, Any] = Field(default_factory=dict, description=(
        "What the local model did: plan_s, answer_s, dropped_steps, read_blocks of shown_blocks, fell_back."))
    seconds: float = 0.0
