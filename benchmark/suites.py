"""Every suite, registered once: its name, what it measures, its typed options and whether ``all`` runs it.

``python -m benchmark <suite> --help`` is built from these dataclasses (a field's ``metadata`` holds its help
text; ``repeat`` makes a list option repeatable; ``required`` makes an option without a usable default required).
A suite's module (``benchmark.<module>``) provides ``run_suite(run, options)`` and ``summary(envelope)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .common import ROOT

DEFAULT_LOOKUPS = ROOT / "django-lookups.json"
DEFAULT_SCIFACT = ROOT.parents[1] / "shared" / "data" / "scifact.zip"
DEFAULT_LOCOMO = ROOT.parents[1] / "shared" / "data" / "locomo-public.json"
DEFAULT_PAIRS = (ROOT / "upkeep-pairs-tune.json", ROOT / "upkeep-pairs-test.json")
#: Every lookups file of the project, in the order the retrieval suite measures them.
ALL_LOOKUPS = tuple(ROOT / f"{name}-lookups.json" for name in ("django", "django-more", "pytest", "markdown", "flask",
                                                                "rich"))


def option(help: str, **extra: Any) -> dict[str, Any]:
    return {"help": help, **extra}


def _lookups() -> Any:
    return field(default=DEFAULT_LOOKUPS, metadata=option(
        "Lookups file (the format of benchmark/django-lookups.json; benchmark/pytest-lookups.json is another)."))


def _missing_file(label: str, path: Path) -> list[str]:
    return [] if path.is_file() else [f"{label}: no file at {path}"]


@dataclass(frozen=True)
class NoOptions:
    def problems(self) -> list[str]:
        return []


@dataclass(frozen=True)
class LookupsOptions:
    lookups: Path = _lookups()

    def problems(self) -> list[str]:
        return _missing_file("--lookups", self.lookups)


@dataclass(frozen=True)
class RecallOptions(LookupsOptions):
    repeat: int = field(default=3, metadata=option("Server times are the median of this many runs (1 with --quick)."))

    def problems(self) -> list[str]:
        return [*super().problems(), *(["--repeat must be at least 1"] if self.repeat < 1 else [])]


@dataclass(frozen=True)
class QualityOptions:
    data: Path = field(default=DEFAULT_SCIFACT, metadata=option("BEIR SciFact zip (CC BY-NC: never committed)."))

    def problems(self) -> list[str]:
        return _missing_file("--data (SciFact zip)", self.data)


@dataclass(frozen=True)
class ConversationOptions:
    data: Path = field(default=DEFAULT_LOCOMO, metadata=option("A LoCoMo-format JSON file (CC BY-NC)."))

    def problems(self) -> list[str]:
        return _missing_file("--data (LoCoMo JSON)", self.data)


@dataclass(frozen=True)
class UpkeepOptions(ConversationOptions):
    writes: int = field(default=6000, metadata=option("store calls in the stream of repeats (300 with --quick)."))
    repeats: float = field(default=0.9, metadata=option("The share of those writes that repeat an earlier one."))
    round_trip: int = field(default=10_000, metadata=option("Memories of the exported and imported workspace "
                                                            "(500 with --quick)."))
    pairs: list[Path] = field(default_factory=lambda: list(DEFAULT_PAIRS), metadata=option(
        "A labelled pair file (benchmark/upkeep_pairs.py; repeat for several; default: the tune and test sets).",
        repeat=True))
    only_pairs: bool = field(default=False, metadata=option("Measure the pair files only (no LoCoMo data needed)."))

    def problems(self) -> list[str]:
        out = [] if self.only_pairs else super().problems()
        out += [p for path in self.pairs for p in _missing_file("--pairs", path)]
        if self.writes < 1:
            out.append("--writes must be at least 1")
        if not 0 <= self.repeats < 1:
            out.append("--repeats must be at least 0 and below 1 (a share: 0.9 is 90%)")
        if self.round_trip < 1:
            out.append("--round-trip must be at least 1")
        return out


@dataclass(frozen=True)
class RetrievalOptions:
    lookups: list[Path] = field(default_factory=lambda: list(ALL_LOOKUPS), metadata=option(
        "A lookups file (repeat for several; default: every benchmark/*-lookups.json).", repeat=True))
    data: Path = field(default=DEFAULT_LOCOMO, metadata=option(
        "A LoCoMo-format JSON file (CC BY-NC); its conversations are left out when there is no file."))

    def problems(self) -> list[str]:
        return [p for path in self.lookups for p in _missing_file("--lookups", path)]


@dataclass(frozen=True)
class McpOptions:
    runs: int = field(default=5, metadata=option("Starts of each kind (1 with --quick)."))

    def problems(self) -> list[str]:
        return ["--runs must be at least 1"] if self.runs < 1 else []


@dataclass(frozen=True)
class ReliabilityOptions:
    kills: int = field(default=20, metadata=option("Ingests killed with SIGKILL (the test suite runs 5)."))
    files: int = field(default=96, metadata=option("Files in the corpus the killed ingests keep re-indexing."))
    editors: int = field(default=8, metadata=option("Editors calling one service at once (the test suite runs 4)."))
    calls: int = field(default=250, metadata=option("Calls per editor (the test suite makes 60)."))
    notes: int = field(default=500, metadata=option(
        "Notes each of two machines stores into one shared workspace at once (the test suite stores 100)."))

    def problems(self) -> list[str]:
        return [f"--{f.name} must be at least 1" for f in fields(self) if getattr(self, f.name) < 1]


@dataclass(frozen=True)
class RecallLlmOptions(LookupsOptions):
    model: Path = field(default=Path(), metadata=option("The helper model's GGUF file.", required=True))
    timeout: float = field(default=30.0, metadata=option("recall.llm_timeout_sec."))

    def problems(self) -> list[str]:
        return [*super().problems(), *_missing_file("--model", self.model)]


@dataclass(frozen=True)
class ChatOptions(LookupsOptions):
    model: list[Path] = field(default_factory=list, metadata=option(
        "A chat model's GGUF (repeat --model to measure several, one after another).", required=True, repeat=True))
    threads: int = field(default=2, metadata=option("helper.local.threads: the model's CPU threads."))
    first_requests: int = field(default=3, metadata=option(
        "Questions whose first request is timed with and without the instructions checkpoint (0: none)."))
    long_chars: int = field(default=30_000, metadata=option(
        "Characters of a pasted text after one question, read through section analysis (0: none)."))

    def problems(self) -> list[str]:
        out = [*super().problems()]
        out += [p for m in self.model for p in _missing_file("--model", m)]
        if self.first_requests < 0 or self.long_chars < 0:
            out.append("--first-requests and --long-chars must be 0 or more")
        if not self.model:
            out.append("chat needs --model PATH to a GGUF file (repeat it for more models)")
        if self.threads < 1:
            out.append("--threads must be at least 1")
        return out


@dataclass(frozen=True)
class Suite:
    name: str
    module: str
    about: str
    options: type[Any]
    in_all: bool = True


SUITES: dict[str, Suite] = {s.name: s for s in (
    Suite("recall", "recall", "one recall against separate searches per lookup, per mode and per channel",
          RecallOptions),
    Suite("quality", "quality", "SciFact nDCG@10 and recall per channel mix (skipped by all without the data)",
          QualityOptions),
    Suite("conversation", "conversation", "LoCoMo conversations stored turn by turn, evidence recall per mix "
          "(skipped by all without the data)", ConversationOptions),
    Suite("capture", "capture", "LoCoMo conversations captured as Claude Code sessions through the hook path, "
          "against stored turn by turn; hook wall time (skipped by all without the data)", ConversationOptions),
    Suite("upkeep", "upkeep", "labelled pairs of distinct facts, repeats and updates stored one after the other; "
          "6,000 writes of which 90% repeat (exact and paraphrased LoCoMo turns) with duplicate handling off and on; "
          "evidence recall both ways; a 10,000-memory export → import (skipped by all without the data)",
          UpkeepOptions),
    Suite("retrieval", "retrieval", "every lookups file and the LoCoMo conversations, tuning and test parts apart: "
          "hybrid against each channel alone (gold files, NDCG@10, turn and session recall)", RetrievalOptions),
    Suite("watch", "watch", "a watched folder's edits of 1, 100 and 1,000 files: time until searchable", NoOptions),
    Suite("speed", "speed", "ingest throughput; search and recall latency and memory by store size",
          LookupsOptions),
    Suite("ingest", "ingest", "where a fresh ingest's time goes; an edit re-ingested", LookupsOptions),
    Suite("mcp", "mcp_startup", "engram mcp start-up and the tool list's size", McpOptions),
    Suite("models", "models", "the generation runtime with the test model", NoOptions),
    Suite("budget", "budget", "what the run ledger adds to a search", LookupsOptions),
    Suite("writes", "writes", "thousands of single stores with and without maintenance", NoOptions),
    Suite("shared", "shared", "a workspace in an S3 bucket on loopback, with and without added latency",
          LookupsOptions),
    Suite("reliability", "reliability", "ingests killed with SIGKILL; many editors calling one service at once",
          ReliabilityOptions),
    Suite("recall-llm", "recall_llm", "recall's local-model path (needs --model)", RecallLlmOptions, in_all=False),
    Suite("chat", "chat", "chat models answering the lookups (needs --model)", ChatOptions, in_all=False),
)}
