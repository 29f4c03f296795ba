#!/usr/bin/env python3
"""Smoke test of the local helper model, end to end, on a small temporary workspace.

    .venv/bin/python scripts/smoke-local-helper.py [--model-path PATH.gguf] [--timeout 60] [--threads N]

Without ``--model-path`` it uses the test model (SmolLM2-135M-Instruct from its pinned package). It checks
the file against the manifest's pins, loads it once and shows that two roles share that one copy, renders
the chat template with thinking off, asks for a plan under its schema and a cited answer from a real
recall, and prints the timings. Exit status 0 when every step worked (an answer the citation check drops
is reported, not a failure: small models often cite nothing).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from engram.core import Engine, EngramError, Paths, Settings
from engram.core.catalog import PLAN_TOOLS
from engram.core.fileio import sha256_file
from engram.core.manifest import load_manifest, model_entry
from engram.core.recall.assist import HELPER_SYSTEM, ModelPath, plan, plan_schema

DOCS = {
    "deploy.md": "# Deploy\n\nWe deploy with systemd units on the home server.\n\n## Rollback\n\n"
                 "Roll back with git revert, then restart the unit.",
    "backup.md": "# Backups\n\nBackups run nightly at 02:00 with restic to the NAS.",
    "restore.md": "# Restore drills\n\nEvery month we restore a backup to check that the deploy still starts.",
}
QUESTION = "How do we roll back a deploy, and when do backups run?"


def step(title: str, started: float) -> None:
    print(f"  {title} ({time.monotonic() - started:.2f} s)", flush=True)


def pin_of(path: Path) -> str:
    """Which manifest pin the file matches, by SHA256 (hashes the file once)."""
    sha = sha256_file(path)
    for entry in load_manifest().values():
        if entry.sha256 and entry.sha256 == sha:
            return f"matches the pinned SHA256 of {entry.id} ({sha[:12]}…)"
    return f"SHA256 {sha[:12]}… matches no pinned model (a custom model: used as it is)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-path", type=Path, help="A .gguf file (default: the test model).")
    parser.add_argument("--timeout", type=float, default=60.0, help="recall.llm_timeout_sec for the recall.")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (default: the setting's default).")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="engram-smoke-") as tmp:
        root = Path(tmp)
        paths = Paths(root / "data", root / "config", root / "logs")
        settings = Settings()
        settings.recall.llm = True
        settings.recall.llm_timeout_sec = args.timeout
        settings.ingest.allowed_roots = [str(root)]
        if args.threads:
            settings.helper.local.threads = args.threads
        started = time.monotonic()
        if args.model_path is not None:
            if not args.model_path.is_file():
                print(f"smoke: {args.model_path} is not a file.", file=sys.stderr)
                return 2
            settings.helper.local.model = str(args.model_path.resolve())
            print(f"model: {args.model_path}\n  {pin_of(args.model_path)}")
        else:
            settings.helper.local.model = "smollm2-135m-instruct"
            entry = model_entry("smollm2-135m-instruct")
            print(f"model: {entry.name} (the test model)")
        try:
            with Engine(paths, settings) as engine:
                if args.model_path is None:
                    engine.model_files().verify(model_entry("smollm2-135m-instruct"))
                    step(f"verified against its pin {model_entry('smollm2-135m-instruct').sha256[:12]}…", started)
                started = time.monotonic()
                helper = engine.provider("helper")
                step("loaded", started)
                tagger = engine.provider("tagger")
                shared = getattr(helper, "model", None) is getattr(tagger, "model", object())
                print(f"  helper and tagger share one loaded copy: {shared}")
                model = getattr(helper, "model", None)
                if model is not None:
                    rendered = model.prompt([{"role": "system", "content": HELPER_SYSTEM},
                                             {"role": "user", "content": "Task: PLAN\nQuestion: ping"}])
                    print("  template, thinking off — the prompt ends with:\n    "
                          + rendered[-160:].replace("\n", "\n    "))

                folder = root / "ops"
                folder.mkdir()
                for name, text in DOCS.items():
                    (folder / name).write_text(text, encoding="utf-8")
                engine.call("ingest_path", {"path": str(folder), "project": "ops"})

                started = time.monotonic()
                path = ModelPath(provider=helper)
                steps = plan(helper, QUESTION, ["ops"], time.monotonic() + args.timeout, path, PLAN_TOOLS)
                if path.failed is not None:
                    print(f"  plan: {path.failed}")
                    return 1
                step(f"plan under its schema {sorted(plan_schema(QUESTION)['properties'])}: {steps}", started)

                started = time.monotonic()
                out = engine.call("recall", {"question": QUESTION, "max_chars": 3000})
                result = out.result
                step(f"recall: plan {result.model.get('plan_s')} s, answer {result.model.get('answer_s')} s, "
                     f"read {result.model.get('read_blocks')} of {result.model.get('shown_blocks')} blocks", started)
                if result.answer is not None:
                    print(f"  answer: {result.answer}\n  cites: {result.cited}")
                else:
                    print(f"  no answer: {' '.join(result.notes)}")
                rates = helper.rates()
                if rates is not None:
                    print(f"  speeds: reads {rates.prompt_tps:.0f} tokens/s, writes {rates.gen_tps:.1f} tokens/s "
                          f"(from its {rates.source})")
        except EngramError as exc:
            print(f"smoke: {exc.title}: {exc.message}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
