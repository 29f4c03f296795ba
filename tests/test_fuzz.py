"""A seeded fuzzer over every tool: whatever the arguments, a call answers or fails with an ``EngramError``,
a refused call changes nothing, and the engine stays usable.

Arguments are generated from each tool's JSON schema (``call_model(tool).model_json_schema()``): valid values
(the workspace's own ids, sources and projects among them), boundary values, wrong types, odd strings (NUL and
control characters, SQL quotes and wildcards, unicode), far-away and odd-offset datetimes, unknown keys, deep
or huge structures, paths and patterns. Most calls are refused at validation; a realistic share is valid and
runs against the real LanceDB folder. ``ENGRAM_FUZZ_SEED`` / ``ENGRAM_FUZZ_CALLS`` replay or widen a run.
"""

from __future__ import annotations

import json
import os
import random
import reprlib
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from engram.core import Engine, Paths, Settings
from engram.core.catalog import TOOLS, args_model, call_model, validate_call
from engram.core.errors import EngramError
from engram.core.recall.models import RecallResult
from engram.core.recall.plan import EVIDENCE_TOOLS
from engram.core.settings import IngestSettings, StoreSettings
from engram.core.store import inspection
from engram.core.tools.results import SearchResult

from .conftest import HashingEmbedder, write_tree

SEED = int(os.environ.get("ENGRAM_FUZZ_SEED", "20250601"))
CALLS = int(os.environ.get("ENGRAM_FUZZ_CALLS", "5000"))  # ENGRAM_FUZZ_CALLS=20000 for a wider run
#: Share of calls left valid (they run for real), and of calls given odd but possibly valid values.
VALID_SHARE = 0.03
ODD_SHARE = 0.04
UNKNOWN_TOOL_SHARE = 0.005
#: Refused calls that failed validation cannot have written anything; check a sample of them (every refusal
#: that got past validation is checked).
VALIDATION_CHECK_SHARE = 0.02
#: Words of the one memory no generated call knows the id of: a search for them must find it at the end.
SENTINEL = "zebracorn quasar lighthouse"

#: How a failing call's arguments are shown: nested and huge values abbreviated.
SHORT = reprlib.Repr()
SHORT.maxlevel, SHORT.maxstring, SHORT.maxother, SHORT.maxlist, SHORT.maxdict = 4, 80, 80, 8, 12
ODD_STRINGS = [
    "", " ", "\t\n", "\x00", "a\x00b", "\x01\x02\x1b[31m\x7f", "'", "''", '"', "%", "_", "\\", "%_\\'",
    "' OR 1=1 --", "'); DROP TABLE memories; --", "x' AND lower(subject) = 'x", "*", "?", "[", "]", "{}", "()",
    "é", "日本語のテキスト", "🙂" * 20, "\u202eevil", "\ufeff", "\ud800", "null", "None", "true", "-1",
    "1e309", "NaN", "../../etc/passwd", "/", "~", "~nosuchuser-engram/x", "C:\\Windows", "content:", "s:x", "e:x",
    "x" * 257, "x" * 4001, "word " * 5000,
]
ODD_NUMBERS: list[Any] = [0, -1, 1, 2, 3, 49, 50, 51, 199, 200, 201, 2**31 - 1, 2**31, 2**63, 10**30, -10**30,
                          1.0, 1.5, float("nan"), float("inf"), float("-inf"), True, False]
ODD_DATETIMES: list[Any] = [
    "9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59.999999Z",
    "0001-01-01T00:00:00Z", "0001-01-01T00:00:00", "2024-02-30T00:00:00", "2024-01-01T00:00:00+23:59",
    "2024-01-01T00:00:00-23:59", "2024-01-01T00:00:00+24:00", "2024-01-01", "1970-01-01T00:00:00",
    "2262-04-12T00:00:00Z", "1677-09-21T00:00:00Z", "10000-01-01T00:00:00Z", 1e20, -1e12, 0, 253402318800,
    "now", "", "2024-13-01T00:00:00", "2024-01-01T25:00:00",
]
ODD_PATTERNS = ["!", "!!", "[", "[!", "**/", "**", "/", "\\", "*.md", "sub/**", "!*.md", "a" * 200, "\x00",
                "[z-a]", "{a,b}"]


def nested(depth: int) -> list[Any]:
    outer: list[Any] = []
    inner = outer
    for _ in range(depth):
        inner.append([])
        inner = inner[0]
    return outer


ODD_STRUCTURES: list[Any] = [None, [], {}, [None], [[]], {"a": 1}, nested(50), nested(3000), ["a"] * 10_000,
                             {"k" * 10: nested(100)}, [{"tool": "search"}] * 100, list(range(200))]


@cache
def schema_of(tool: str, step: bool) -> dict[str, Any]:
    """The JSON schema of a tool's call (``step``: of its arguments as a recall plan step)."""
    return (args_model(tool) if step else call_model(tool)).model_json_schema()


@dataclass
class Known:
    """What the seeded workspace holds: values a valid call uses."""

    corpus: Path
    ids: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    projects: list[str] = field(default_factory=lambda: ["general", "ops", "corpus", "fuzz"])
    tags: list[str] = field(default_factory=lambda: ["infra", "decision"])


@dataclass
class Failure:
    index: int
    tool: str
    arguments: dict[str, Any]
    problem: str

    def __str__(self) -> str:
        shown = SHORT.repr(self.arguments)
        return f"call {self.index}: {self.tool}({shown}) -> {self.problem}"


class ArgumentGenerator:
    """Arguments for a tool from its JSON schema: valid, odd, or mutated into something refused."""

    def __init__(self, rng: random.Random, known: Known) -> None:
        self.rng = rng
        self.known = known

    # ---------------------------------------------------------------- valid

    def valid_arguments(self, tool: str, *, step: bool = False) -> dict[str, Any]:
        schema = schema_of(tool, step)
        required = set(schema.get("required", []))
        out: dict[str, Any] = {}
        for name, prop in schema["properties"].items():
            if name in required or self.rng.random() < 0.3:
                out[name] = self.valid_value(tool, name, prop, schema)
        if tool == "kg_edit":
            out.update(self._fact_edit(out))
        if tool == "delete":
            out.pop("ids" if self.rng.random() < 0.5 else "source", None)
            if "ids" not in out and "source" not in out:
                out["source"] = self.rng.choice(self.known.sources)
        return out

    def _fact_edit(self, out: dict[str, Any]) -> dict[str, Any]:
        if out.get("action") == "end":
            return {"fact_id": self.rng.choice(self.known.facts)}
        out.pop("fact_id", None)
        return {"subject": self.word(), "predicate": self.rng.choice(["runs", "uses", "owns"]), "object": self.word()}

    def valid_value(self, tool: str, name: str, prop: dict[str, Any], schema: dict[str, Any]) -> Any:
        options = [o for o in prop.get("anyOf", [prop]) if o.get("type") != "null"]
        node = self.rng.choice(options)
        if "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
        if name == "plan":
            return self.plan(valid=True)
        if name == "workspace":
            return self.rng.choice(["", "default"])
        if name == "max_chars":
            return self.rng.randint(node["minimum"], node["maximum"])
        if name == "run":
            return f"fuzz-run-{self.rng.randint(1, 3)}"
        if "enum" in node:
            return self.rng.choice(node["enum"])
        kind = node.get("type")
        if kind == "array":
            items = node.get("items", {})
            low = node.get("minItems", 0)
            size = self.rng.randint(low, max(low, min(node.get("maxItems", 3), 3)))
            if name == "channels":
                return self.rng.sample(items["enum"], max(size, 1))
            return [self.valid_value(tool, name, items, schema) for _ in range(size)]
        if kind == "integer":
            low = node.get("minimum", 0)
            return self.rng.randint(low, node.get("maximum", low + 20))
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "string" and node.get("format") == "date-time":
            return self.rng.choice(["2024-01-01T00:00:00Z", "2020-06-01T12:30:00+02:00", "2030-01-01T00:00:00",
                                    "1999-12-31T23:59:59-08:00"])
        return self.valid_string(tool, name, node)

    def valid_string(self, tool: str, name: str, node: dict[str, Any]) -> str:
        k, rng = self.known, self.rng
        by_name: dict[str, list[str]] = {
            "id": k.ids, "ids": k.ids, "source": k.sources, "fact_id": k.facts, "project": k.projects,
            "tags": k.tags, "prefix": ["sub/", "content:", str(k.corpus), "a"],
            "source_prefix": ["sub/", "content:", str(k.corpus)], "include": ["*.md", "sub/**", "**/*.py"],
            "type": ["note", "markdown", "decision"],
            "path": [str(k.corpus), str(k.corpus / "a.md"), str(k.corpus / "sub"),
                     str(k.corpus / "sub" / ".." / "sub")],
        }
        if tool == "kg_edit" and name == "source":
            return "fuzz"
        if name in by_name and by_name[name]:
            return rng.choice(by_name[name])
        words = " ".join(self.word() for _ in range(rng.randint(1, 6)))
        return words[: node.get("maxLength", 200)] or "x"

    def word(self) -> str:
        return self.rng.choice(["deploy", "systemd", "rollback", "server", "release", "alpha", "beta", "gamma",
                                "python", "docs", "café", "日本", "O'Brien", "50%_off"])

    def plan(self, *, valid: bool) -> list[dict[str, Any]]:
        steps = []
        for _ in range(self.rng.randint(1, 3)):
            tool = self.rng.choice(EVIDENCE_TOOLS)
            args = self.valid_arguments(tool, step=True)
            if not valid:
                args = self.mutate(tool, args, step=True)
                if self.rng.random() < 0.2:
                    tool = self.rng.choice(ODD_STRINGS + ["status", "store", "kg_edit", "recall", "Search"])
            steps.append({"tool": tool, "args": args})
        return steps

    # ----------------------------------------------------------------- odd

    def odd_value(self, name: str, prop: dict[str, Any]) -> Any:
        """A value that may still validate: odd strings, boundary numbers, far datetimes, odd patterns."""
        options = [o for o in prop.get("anyOf", [prop]) if o.get("type") != "null"]
        node = self.rng.choice(options) if options else prop
        kind = node.get("type")
        if node.get("format") == "date-time":
            return self.rng.choice(ODD_DATETIMES)
        if name == "include":
            return self.rng.sample(ODD_PATTERNS, self.rng.randint(1, 3))
        if name == "path":
            return self.odd_path()
        if kind == "integer":
            bounds = [node.get("minimum"), node.get("maximum")]
            edges = [b + d for b in bounds if b is not None for d in (-1, 0, 1)]
            return self.rng.choice(edges + ODD_NUMBERS)
        if kind == "array":
            return [self.rng.choice(ODD_STRINGS) for _ in range(self.rng.randint(0, 4))]
        if kind == "string":
            limit = node.get("maxLength")
            pool = ODD_STRINGS + ([("y" * limit), ("y" * (limit + 1))] if limit else [])
            return self.rng.choice(pool)
        return self.rng.choice(ODD_STRINGS + ODD_NUMBERS)

    def odd_path(self) -> str:
        corpus = self.known.corpus
        return self.rng.choice([
            str(corpus / "missing"), str(corpus) + "/\x00x", str(corpus / ("n" * 300)), str(corpus / ("n" * 300) / "x"),
            str(corpus / "sub" / ".." / ".." / "corpus"), "relative/docs", ".", "..", "./a.md", "~", "~/x",
            "~nosuchuser-engram/x", str(corpus / "a.md" / "x"), str(corpus / "*"), str(corpus) + "//sub//",
            str(corpus / "loop"), str(corpus / "sub" / "escape.md"), "\x00", " ", str(corpus / "é🙂"),
        ])

    # -------------------------------------------------------------- mutate

    def mutate(self, tool: str, arguments: dict[str, Any], *, step: bool = False) -> dict[str, Any]:
        """``arguments`` with one to three changes that a tool should refuse."""
        schema = schema_of(tool, step)
        props = schema["properties"]
        out = dict(arguments)
        for _ in range(self.rng.randint(1, 3)):
            op = self.rng.random()
            name = self.rng.choice(list(props)) if props else None
            if op < 0.35 and name:
                out[name] = self.wrong_value(name, props[name])
            elif op < 0.55 and name:
                out[name] = self.odd_value(name, props[name])
            elif op < 0.7:
                out[self.rng.choice(["colour", "", "\x00", "\ud800", "Query", "workspace_", "max_chars", "run", "args",
                                     "x" * 300])] = self.rng.choice(ODD_STRINGS + ODD_NUMBERS)
            elif op < 0.8 and schema.get("required"):
                out.pop(self.rng.choice(schema["required"]), None)
            elif op < 0.9 and not step:
                out["workspace"] = self.rng.choice(["Bad Name", "x" * 41, "-x", "ü", "\x00", 5, None, "nosuch"])
            elif name:
                out[name] = self.rng.choice(ODD_STRUCTURES)
        return out

    def wrong_value(self, name: str, prop: dict[str, Any]) -> Any:
        """A value of the wrong type or outside the bounds."""
        options = [o for o in prop.get("anyOf", [prop]) if o.get("type") != "null"]
        node = self.rng.choice(options) if options else prop
        kind = node.get("type")
        rng = self.rng
        if kind == "integer":
            low, high = node.get("minimum"), node.get("maximum")
            return rng.choice([v for v in (low - 1 if low is not None else None, high + 1 if high is not None else None,
                                           "many", 1.5, float("nan"), [1], {"n": 1}, 10**30) if v is not None])
        if kind == "string":
            low, high = node.get("minLength"), node.get("maxLength")
            return rng.choice([v for v in ("" if low else None, "z" * (high + 1) if high else None, 5, 1.5, True,
                                           ["x"], {"x": 1}) if v is not None])
        if kind == "array":
            high = node.get("maxItems")
            return rng.choice([v for v in ("text", 5, {"a": 1}, [5, None], ["ok"] * (high + 1) if high else None,
                                           [nested(20)]) if v is not None])
        if kind == "boolean":
            return rng.choice(["yes", 2, [], None])
        return rng.choice(ODD_STRUCTURES + ODD_NUMBERS)


State = dict[str, tuple[int, ...]]
TABLES = ("memories", "sources", "facts", "edges", "digests")


def _state(engine: Engine) -> State:
    """Each workspace's table versions: what a refused call must leave as it was (every commit adds a version)."""
    return {name: tuple(inspection.table(engine.store(name), table).version for table in TABLES)
            for name in engine.workspace_names()}


def _changed(engine: Engine, tool: str, before: State, after: State) -> bool:
    """Whether a refused call changed the stores. A write tool opens (creates) its workspace before its row
    function can refuse (``Engine.call``), so a new, empty workspace is the one trace a refused write may leave."""
    new = [name for name in after if name not in before]
    empty = all(inspection.table(engine.store(name), table).count_rows() == 0 for name in new for table in TABLES)
    if tool in TOOLS and TOOLS[tool].write and empty:
        after = {name: versions for name, versions in after.items() if name not in new}
    return after != before


def _inside(path: str, root: Path) -> bool:
    """Whether ingesting ``path`` (expanded and resolved as the tool does) stays under ``root``; paths the file
    system cannot resolve are fine (the call fails before reading anything)."""
    try:
        return Path(path).expanduser().resolve().is_relative_to(root)
    except (OSError, ValueError, RuntimeError):
        return True


def _seed_workspace(engine: Engine, corpus: Path) -> tuple[Known, str]:
    known = Known(corpus=corpus)
    for content, tags in (("We deploy with systemd units on the home server", ["infra"]),
                          ("Decision: rollbacks keep the previous release for a day", ["decision"]),
                          ("O'Brien prefers 50%_off café notes in 日本", [])):
        known.ids.append(engine.call("store", {"content": content, "project": "ops", "tags": tags}).result.id)
    sentinel = engine.call("store", {"content": SENTINEL, "project": "fuzz"}).result.id
    engine.call("ingest_path", {"path": str(corpus), "project": "corpus"})
    engine.call("ingest_content", {"content": "# Notes\n\nalpha beta gamma\n", "title": "fuzz notes"})
    known.facts.append(engine.call("kg_edit", {"action": "add", "subject": "server", "predicate": "runs",
                                               "object": "systemd"}).result.fact.id)
    sources = engine.call("list_sources", {}).result.items
    known.sources = [s.source for s in sources] + [s.path for s in sources]
    known.ids += [h.id for h in engine.call("search", {"query": "alpha deploy", "limit": 20}).result.hits
                  if h.id != sentinel]
    return known, sentinel


#: Signs of a library's or the data folder's text in an answer meant for the caller.
LEAKS = ("lance error", "LanceError", ".rs:", "Traceback", "/workspaces/")


def _leak(text: str, data_dir: str) -> bool:
    return data_dir in text or any(sign in text for sign in LEAKS)


def _sendable(text: str) -> bool:
    """Whether ``text`` can go out as JSON in UTF-8 (a lone surrogate from the caller's input cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _problems(result: Any, data_dir: str) -> list[str]:
    """What is wrong with a successful answer: library failures hidden in a recall step or a search warning."""
    found = []
    searches = [result] if isinstance(result, SearchResult) else []
    if isinstance(result, RecallResult):
        searches += [result.search] if result.search else []
        for step in result.steps:
            if step.error and ("unexpectedly" in step.error or _leak(step.error, data_dir)):
                found.append(f"recall step {step.number} ({step.tool}) failed unexpectedly: {step.error}")
    for search in searches:
        for warning in search.warnings:
            if "failed" in warning or _leak(warning, data_dir):
                found.append(f"search warning on valid arguments: {warning}")
    return found


class FuzzRun:
    """Calls tools on one engine and keeps what went wrong."""

    def __init__(self, engine: Engine, rng: random.Random) -> None:
        self.engine = engine
        self.rng = rng
        self.data_dir = str(engine.paths.data_dir)
        self.failures: list[Failure] = []
        self.spent: dict[str, float] = {}
        self.counts = {"calls": 0, "valid": 0, "refused_at_validation": 0, "refused_later": 0, "state_checks": 0}

    def call(self, index: int, tool: str, arguments: dict[str, Any]) -> None:
        """One call: it answers, or it fails with an EngramError that names no internal path; a refusal after
        validation (and a sample of those at validation) leaves every table as it was."""
        try:
            validate_call(tool, arguments)
            at_validation = False
        except Exception:  # an error other than InvalidArgument is caught (and reported) from the call below
            at_validation = True
        check = not at_validation or self.rng.random() < VALIDATION_CHECK_SHARE
        before = _state(self.engine) if check else {}
        self.counts["calls"] += 1
        started = time.perf_counter()
        try:
            out = self.engine.call(tool, arguments)
        except EngramError as exc:
            self.counts["refused_at_validation" if at_validation else "refused_later"] += 1
            if not exc.message or _leak(exc.message, self.data_dir):
                self.fail(index, tool, arguments, f"{type(exc).__name__} empty or leaking: {exc.message!r}")
            if not _sendable(exc.message):
                self.fail(index, tool, arguments, f"{type(exc).__name__} not UTF-8: {exc.message!r}")
            if check:
                self.counts["state_checks"] += 1
                if _changed(self.engine, tool, before, _state(self.engine)):
                    self.fail(index, tool, arguments, f"refused ({exc.message}) but the store changed")
        except Exception as exc:  # the finding this test exists for
            self.fail(index, tool, arguments, f"{type(exc).__name__}: {str(exc)[:300]}")
        else:
            self.counts["valid"] += 1
            if at_validation:
                self.fail(index, tool, arguments, "validate_call refused it but the tool ran")
            for problem in _problems(out.result, self.data_dir):
                self.fail(index, tool, arguments, problem)
            if not _sendable(out.text):
                self.fail(index, tool, arguments, f"answer not UTF-8: {out.text[:200]!r}")
        finally:
            self.spent[tool] = self.spent.get(tool, 0.0) + time.perf_counter() - started

    def fail(self, index: int, tool: str, arguments: dict[str, Any], problem: str) -> None:
        self.failures.append(Failure(index, tool, arguments, problem))

    def report(self) -> str:
        """The failures grouped by tool and kind, the first of each shown."""
        kinds: dict[tuple[str, str], list[Failure]] = {}
        for f in self.failures:
            kinds.setdefault((f.tool, f.problem.split(":")[0][:60]), []).append(f)
        return "\n".join(f"{len(group)} x {group[0]}" for group in kinds.values())


def _corpus(tmp_path: Path) -> Path:
    """A tiny folder to ingest: markdown, python, an ignored log, a link that leads outside and one that loops."""
    write_tree(tmp_path / "outside", {"secret.md": "# Secret\n\nnot to be ingested\n"})
    corpus = write_tree(tmp_path / "corpus", {
        "a.md": "# Deploy\n\nWe deploy with systemd.\n\n## Rollback\n\nKeep the previous release.\n",
        "b.py": "def restart_unit(name):\n    return name\n", "sub/c.txt": "alpha beta gamma\n",
        ".gitignore": "*.log\n!\n", "skip.log": "ignored\n"}).resolve()
    (corpus / "sub" / "escape.md").symlink_to(tmp_path / "outside" / "secret.md")
    (corpus / "loop").symlink_to(corpus / "loop")
    (corpus / "cwd").mkdir()
    return corpus


@pytest.mark.slow
def test_every_tool_answers_any_arguments_with_a_result_or_an_engram_error(
        paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = _corpus(tmp_path)
    # Relative paths and ~ resolve inside the corpus too: the fuzzer never ingests anything outside tmp_path.
    monkeypatch.chdir(corpus / "cwd")
    monkeypatch.setenv("HOME", str(corpus / "cwd"))
    ingest = {"allowed_roots": [str(corpus)]} if "allowed_roots" in IngestSettings.model_fields else {}
    # Background maintenance would change table versions between the checks of a refused call.
    store = {"maintenance_writes": 0} if "maintenance_writes" in StoreSettings.model_fields else {}
    settings = Settings(ingest=IngestSettings.model_validate(ingest), store=StoreSettings.model_validate(store))
    rng = random.Random(SEED)
    with Engine(paths, settings, embedder=HashingEmbedder()) as engine:
        known, sentinel = _seed_workspace(engine, corpus)
        gen = ArgumentGenerator(rng, known)
        run = FuzzRun(engine, rng)
        tools = sorted(TOOLS)
        started = time.perf_counter()
        for index in range(CALLS):
            tool = rng.choice(tools)
            arguments = gen.valid_arguments(tool)
            mode = rng.random()
            if mode >= VALID_SHARE + ODD_SHARE:
                arguments = gen.mutate(tool, arguments)
            elif mode >= VALID_SHARE:
                props = schema_of(tool, False)["properties"]
                name = rng.choice([n for n in props if n != "workspace"] or list(props))
                arguments[name] = gen.plan(valid=False) if name == "plan" else gen.odd_value(name, props[name])
            if tool == "ingest_path" and isinstance(arguments.get("path"), str) and not _inside(arguments["path"],
                                                                                                  corpus):
                arguments["path"] = str(corpus / "missing")
            if rng.random() < UNKNOWN_TOOL_SHARE:
                tool = rng.choice(["", "nope", "Search", "search ", "recall\x00", "kg_edit" * 50])
            run.call(index, tool, arguments)
        seconds = time.perf_counter() - started

        hits = engine.call("search", {"query": SENTINEL}).result.hits
        assert sentinel in [h.id for h in hits], f"seed {SEED}: the engine lost a known memory"
        sources = [s.source for s in engine.call("list_sources", {"limit": 200}).result.items]
        assert all(s.startswith((f"{corpus}/", "content:")) for s in sources), f"seed {SEED}: {sources}"

    slowest = ", ".join(f"{t} {s:.1f} s" for t, s in sorted(run.spent.items(), key=lambda x: -x[1])[:5])
    print(f"fuzz seed {SEED}: {run.counts} in {seconds:.1f} s, {sum(run.spent.values()):.1f} s of them in calls "
          f"(slowest: {slowest})")
    if run.failures:
        pytest.fail(f"seed {SEED} (ENGRAM_FUZZ_SEED={SEED} replays it): {len(run.failures)} failures; the first "
                    f"of each kind:\n{run.report()}", pytrace=False)
    assert run.counts["valid"] >= CALLS * 0.02, f"seed {SEED}: too few calls ran for real: {run.counts}"


# ------------------------------------------------------------------ the service's HTTP endpoints

HTTP_REQUESTS = int(os.environ.get("ENGRAM_FUZZ_HTTP", "400"))


def _nested(rng: random.Random) -> bytes:
    depth = rng.choice([2, 31, 33, 200, 985, 990, 5000, 200_000])
    opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
    inner = opener * depth + "1" + closer * depth
    return ('{"tool": "search", "arguments": {"query": "x", "tags": ' + inner + "}}").encode()


def _http_request(rng: random.Random, gen: ArgumentGenerator, token: str) -> tuple[str, str, dict[str, str], bytes]:
    """(method, path, headers, body) of one request a careless or hostile local program might send."""
    path = rng.choice(["/engram/v1/call"] * 5 + ["/mcp"] * 2 + ["/health", "/health?challenge=" + "A" * 40,
                       "/health?challenge=x&challenge=y", "/nope", "/engram/v1/call/../call", "/%00"])
    method = rng.choice(["POST"] * 6 + ["GET", "PUT", "DELETE", "OPTIONS"])
    headers = {"host": "127.0.0.1", "authorization": f"Bearer {token}", "content-type": "application/json",
               "accept": "application/json, text/event-stream"}
    twist = rng.random()
    if twist < 0.05:
        headers["authorization"] = rng.choice(["", "Bearer", f"bearer {token}", "Bearer " + "x" * 9000])
    elif twist < 0.10:
        headers["host"] = rng.choice(["evil.example", "127.0.0.1:1@evil", "[::1", "x" * 5000])
    elif twist < 0.15:
        headers["origin"] = rng.choice(["http://evil.example", "null", "http://127.0.0.1.evil"])
    elif twist < 0.20:
        headers["x-filler"] = "y" * rng.choice([100, 8000, 60_000])
    elif twist < 0.25:
        headers["content-type"] = rng.choice(["text/plain", "application/x-www-form-urlencoded", ""])
    kind = rng.random()
    if kind < 0.15:
        body = _nested(rng)
    elif kind < 0.22:
        body = b'{"tool": "store", "arguments": {"content": "' + b"x" * rng.choice([3_999_000, 4_100_000]) + b'"}}'
    elif kind < 0.30:
        body = rng.choice([b"", b"{", b"null", b"[]", b'"tool"', b"\xff\xfe{}", b'{"tool": 1}', b'{"pack": 3}',
                           b'{"tool": "status", "arguments": []}', b'{"pack": {"plan": "x"}, "workspace": "\\n"}'])
    elif kind < 0.40:
        body = json.dumps({"jsonrpc": "2.0", "id": rng.randint(0, 9), "method": rng.choice(
            ["initialize", "tools/list", "tools/call", "nope"]), "params": {"name": rng.choice(sorted(TOOLS)),
                                                                           "arguments": {"query": "x"}}}).encode()
    else:
        tool = rng.choice(sorted(TOOLS))
        arguments = gen.mutate(tool, gen.valid_arguments(tool)) if rng.random() < 0.5 else gen.valid_arguments(tool)
        if tool in ("ingest_path", "forget", "kg_delete"):  # the engine fuzzer covers what these change
            tool, arguments = "search", {"query": "deploy"}
        try:
            body = json.dumps({"tool": tool, "arguments": arguments}, default=str).encode()
        except RecursionError:  # nested past what json.dumps encodes (nested(3000)): sent as raw nesting instead
            body = _nested(rng)
    return method, path, headers, body


@pytest.mark.slow
def test_the_http_endpoints_answer_any_request_without_a_server_error(paths: Paths, tmp_path: Path) -> None:
    """``/engram/v1/call``, ``/mcp`` and ``/health`` of a real service on loopback, sent nesting past Python's
    stack, bodies around the 4 MB limit, broken JSON and UTF-8, odd and huge headers and fuzzed tool calls: every
    answer is a refusal or a result (never a 5xx, never "Internal error"), and the service answers on."""
    import threading

    import httpx2

    from engram.mcp.service import Service
    from engram.mcp.service_files import read_token

    corpus = _corpus(tmp_path)
    settings = Settings.model_validate({"service": {"port": 0}, "store": {"maintenance_writes": 0}})
    rng = random.Random(SEED)
    with Engine(paths, settings, embedder=HashingEmbedder()) as engine:
        known, _ = _seed_workspace(engine, corpus)
        gen = ArgumentGenerator(rng, known)
        service = Service(paths, settings, engine=engine, handle_signals=False)
        info = service.open()
        serving = threading.Thread(target=service.run, daemon=True)
        serving.start()
        token = read_token(paths.data_dir) or ""
        problems: list[str] = []
        statuses: dict[int, int] = {}
        try:
            with httpx2.Client(base_url=info.base_url, trust_env=False, timeout=60.0) as http:
                for index in range(HTTP_REQUESTS):
                    method, path, headers, body = _http_request(rng, gen, token)
                    try:
                        reply = http.request(method, path, headers=headers, content=body)
                    except httpx2.HTTPError as exc:  # a refused header may end the connection: never the service
                        problems.append(f"#{index} {method} {path}: {type(exc).__name__} {exc}")
                        continue
                    statuses[reply.status_code] = statuses.get(reply.status_code, 0) + 1
                    text = reply.text
                    if reply.status_code >= 500 or "Internal error" in text or "Traceback" in text:
                        problems.append(f"#{index} {method} {path} {body[:120]!r}: {reply.status_code} {text[:300]}")
                health = http.get("/health", params={"challenge": "B" * 30})
                assert health.status_code == 200, "the service answers on"
                status = http.post("/engram/v1/call", headers={"authorization": f"Bearer {token}"},
                                   json={"tool": "status", "arguments": {}})
                assert status.status_code == 200 and '"output"' in status.text.splitlines()[-1]
        finally:
            service.stop()
            serving.join(30)
    print(f"http fuzz seed {SEED}: {HTTP_REQUESTS} requests, statuses {dict(sorted(statuses.items()))}")
    assert not problems, f"seed {SEED}: {len(problems)} problems; the first:\n" + "\n".join(problems[:10])
    assert statuses.get(200, 0) >= HTTP_REQUESTS * 0.2 and statuses.get(400, 0) > 0, statuses


# ------------------------------------------------------------------ chat's toolbox


def test_every_tool_chat_can_reach_succeeds_on_valid_arguments_and_refuses_the_rest_as_text(
        paths: Paths, tmp_path: Path) -> None:
    """Each of chat's tools, called with the arguments its own schema (the one the model sees) allows, answers
    without an error; fuzzed arguments come back as an error outcome, never as an exception."""
    from engram.core.chat.toolbox import ChatToolbox, tool_schemas
    from engram.core.chat.toolcalls import ToolCall

    corpus = _corpus(tmp_path)
    rng = random.Random(SEED)
    with Engine(paths, Settings(), embedder=HashingEmbedder()) as engine:
        known, _ = _seed_workspace(engine, corpus)
        gen = ArgumentGenerator(rng, known)
        conversation = engine.conversations().new("fuzz")
        conversation.add("user", "How do we deploy?", turn=1)
        toolbox = ChatToolbox(lambda t, a: (lambda o: (o.text, o.result))(engine.call(t, a)), conversation,
                              max_chars=2000)
        schemas = tool_schemas()
        failed: list[str] = []
        for name, schema in schemas.items():
            required = schema.get("required", [])
            if name == "conversation_history":
                valid = [{"number": 1}, {"query": "deploy"}, {"number": 1, "offset": 3}]
            else:
                hidden = ("workspace", "max_chars")
                valid = [{k: v for k, v in gen.valid_arguments(name).items() if k not in hidden}
                         for _ in range(12)]
                valid = [v for v in valid if all(r in v for r in required)] + ([{}] if not required else [])
            for arguments in valid:
                outcome = toolbox.run(ToolCall(name, arguments, ""))
                if outcome.error and "No memory" not in outcome.text and "not found" not in outcome.text.lower():
                    failed.append(f"{name} {arguments}: {outcome.text[:200]}")
        for _ in range(300):
            name = rng.choice(sorted(schemas))
            base = {"number": 1} if name == "conversation_history" else gen.valid_arguments(name)
            arguments = gen.mutate(name, base) if name in TOOLS else {**base, rng.choice(["number", "offset",
                                                                                          "query"]): gen.odd_value(
                "offset", {"type": "integer"})}
            try:
                toolbox.run(ToolCall(name, arguments, ""))
            except Exception as exc:  # the finding this test exists for
                failed.append(f"{name} {reprlib.repr(arguments)} raised {type(exc).__name__}: {exc}")
    assert not failed, f"seed {SEED}: " + "\n".join(failed[:10])
