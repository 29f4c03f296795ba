"""``engram models list|download|verify|remove`` and ``engram bootstrap``."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import asdict
from typing import Any

from engram.core import Engine, EngramError
from engram.core.embedding.bundled import ensure_bundled_model
from engram.core.manifest import load_manifest, resolve_model
from engram.core.models.backend import backend_devices, bootstrap_plan

from .keys import REMOTE_PROVIDERS
from .progress import DownloadPrinter

COMMANDS = ("models", "bootstrap", "keys")


def add_parsers(sub: Any) -> None:
    models = sub.add_parser("models", help="List, download, verify or remove models",
                            description="Models come from the pinned manifest (resources/models.toml) or, as custom "
                                        "models, from a .gguf path, owner/repo/file.gguf or an https link.")
    actions = models.add_subparsers(dest="models_action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="Every known model, how it is pinned, and whether it is here")
    listing.add_argument("--json", action="store_true")
    for name, text in (("download", "Download (or resume) and verify a model"),
                       ("verify", "Read a model file in full and check it against its SHA256"),
                       ("remove", "Delete a downloaded model")):
        p = actions.add_parser(name, help=text)
        p.add_argument("model", help="A manifest id (see `engram models list`) or a custom model.")
    keys = sub.add_parser("keys", help="Store or remove a remote provider's API key in the OS keyring")
    key_actions = keys.add_subparsers(dest="keys_action", metavar="ACTION", required=True)
    for name, text in (("set", "Store a key (read from standard input, or asked for on a terminal)"),
                       ("remove", "Remove a stored key")):
        p = key_actions.add_parser(name, help=text)
        p.add_argument("provider", choices=REMOTE_PROVIDERS)
    boot = sub.add_parser("bootstrap", help="Install the llama.cpp build that fits this computer's GPU",
                          description="Detects GPUs, chooses the build (Vulkan on Windows/Linux x86-64 with a GPU, "
                                      "Metal on macOS, CPU otherwise) and reinstalls llama-cpp-python with it.")
    boot.add_argument("--dry-run", action="store_true", help="Print what would be installed, change nothing.")


LIST_HEADER = f"{'model':24} {'roles':11} {'state':15} {'size':>9}  pinning"


def _status_lines(s: Any) -> list[str]:
    """One model's row of ``models list`` (its pinning last, in full), and its note indented below."""
    state = "present" if s.present else "not downloaded"
    if not s.available:
        state = "unavailable"
    size = f"{s.size / 2**30:.2f} GB" if s.size >= 2**30 else f"{s.size / 2**20:.0f} MB"
    row = f"{s.id:24} {','.join(s.roles):11} {state:15} {size:>9}  {s.pinning}"
    return [row] + ([f"{'':24} {s.note}"] if s.note else [])


def run(args: argparse.Namespace, engine: Engine) -> int:
    if args.command == "bootstrap":
        return _bootstrap(args, engine)
    if args.command == "keys":
        return _keys(args)
    files = engine.model_files()
    if args.models_action == "list":
        statuses = [files.status(e) for e in load_manifest().values()]
        if args.json:
            print(json.dumps([asdict(s) for s in statuses]))
        else:
            print(LIST_HEADER)
            for s in statuses:
                print("\n".join(_status_lines(s)))
        return 0
    entry = resolve_model(args.model)
    if args.models_action == "download":
        if entry.converted_from is not None:
            path = ensure_bundled_model(entry, engine.paths.models_dir)
            print(f"{entry.id}: built and verified at {path}")
            return 0
        printer = DownloadPrinter()
        got = files.download(entry, progress=printer)
        printer.finish()
        how = {"hash": "matches its pinned SHA256",
               "revision": f"matches the hub's SHA256 for revision {entry.revision[:12]}, now recorded",
               "none": "is UNVERIFIED (custom model)"}[entry.pinning]
        resumed = f", resumed at {got.resumed_from:,} bytes" if got.resumed_from else ""
        print(f"{entry.id}: {got.size:,} bytes at {got.path}{resumed}; SHA256 {got.sha256} {how}.")
        return 0
    if args.models_action == "verify":
        path = (ensure_bundled_model(entry, engine.paths.models_dir, full=True) if entry.converted_from is not None
                else files.verify(entry, full=True))
        label = ("exists (custom models are not verified)" if entry.pinning == "none"
                 else "matches its SHA256 (read in full now)")
        print(f"{entry.id}: {path} {label}.")
        return 0
    removed = files.remove(entry)
    print(f"{entry.id}: {'removed' if removed else 'nothing to remove'}.")
    return 0


def _bootstrap(args: argparse.Namespace, engine: Engine) -> int:
    gpus = engine.gpus()
    gpu, build, _, note = engine.device_plan()
    print("GPUs: " + (", ".join(f"[{g.index}] {g.name} ({g.memory_mb or '?'} MB, {g.source})" for g in gpus) or "none"))
    print(f"chosen: {gpu.name if gpu else 'CPU'} (model.gpu_device = {engine.settings.model.gpu_device})")
    devices = backend_devices()
    print("installed llama.cpp devices: " + (", ".join(f"{d.name} ({d.kind})" for d in devices) or "unknown"))
    installed = {d.kind for d in devices}
    if not devices:
        print("the installed llama.cpp binding cannot be loaded: it is installed again.")
    elif build.backend == "cpu" and installed <= {"cpu"}:
        print("nothing to install: the CPU build fits this computer and is installed.")
        return 0
    plan = bootstrap_plan(build)
    print("plan: " + plan.describe())
    if note:
        print(f"note: {note}")
    if args.dry_run:
        return 0
    env = {**__import__("os").environ, **plan.env}
    done = subprocess.run(plan.command, env=env, check=False)
    if done.returncode != 0:
        print(f"engram: Bootstrap failed: pip exited with {done.returncode}; the previous build stays installed.",
              file=sys.stderr)
        return 1
    print(f"installed the {build.backend} build; restart Engram (and `engram service`) to use it.")
    return 0


def _keys(args: argparse.Namespace) -> int:
    import getpass

    from . import keys

    try:
        if args.keys_action == "remove":
            removed = keys.remove_key(args.provider)
            print(f"removed the {args.provider} key from the keyring" if removed else f"no key stored for {args.provider}")
            return 0
        secret = getpass.getpass(f"{args.provider} API key: ") if sys.stdin.isatty() else sys.stdin.read()
        keys.store_key(args.provider, secret)
        print(f"stored the {args.provider} key in the keyring ({keys.backend_name()})")
        return 0
    except keys.KeyringUnavailable as exc:
        print(f"engram: {exc.title}: {exc.message}", file=sys.stderr)
        return 1
    except EngramError as exc:
        print(f"engram: {exc.title}: {exc.message}", file=sys.stderr)
        return 2
