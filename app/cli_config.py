"""``engram config list|get|set|reset``: reading and writing settings from the command line."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Any

from engram.core import Paths
from engram.core.settings import GROUPS, accepted_values, describe_key, setting_keys
from engram.core.settings_file import env_name, load_settings, reset_value, set_value


def add_parser(sub: Any) -> None:
    config = sub.add_parser("config", help="Read and change settings",
                            description="Settings live in a TOML file; ENGRAM_<GROUP>_<KEY> variables override it.")
    actions = config.add_subparsers(dest="config_action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="Every setting with its value and where it comes from")
    listing.add_argument("--json", action="store_true")
    get = actions.add_parser("get", help="One setting's value")
    get.add_argument("key", help="group.key, e.g. search.limit")
    setter = actions.add_parser("set", help="Change a setting in the settings file")
    setter.add_argument("key", help="group.key, e.g. search.limit")
    setter.add_argument("value", help="The new value (lists: JSON or comma-separated)")
    reset = actions.add_parser("reset", help="Return a setting (or --all) to its default")
    reset.add_argument("key", nargs="?", help="group.key")
    reset.add_argument("--all", action="store_true", help="Reset every setting")


def _show(value: Any) -> str:
    return json.dumps(value) if isinstance(value, (list, bool)) else str(value)


def run(args: argparse.Namespace, paths: Paths, env: Mapping[str, str]) -> int:
    """Carry out one ``config`` action.

    Raises:
        SettingsError: unknown key, refused value, or an unreadable settings file.
    """
    action = args.config_action
    if action == "set":
        stored = set_value(paths.settings_file, args.key, args.value)
        print(f"{args.key} = {_show(stored)}  (written to {paths.settings_file})")
        if env_name(args.key) in env:
            print(f"note: {env_name(args.key)} is set in the environment and overrides this value")
        return 0
    if action == "reset":
        if bool(args.key) == bool(args.all):
            print("engram: Invalid setting: give one key (e.g. search.limit) or --all", flush=True)
            return 2
        reset_value(paths.settings_file, None if args.all else args.key)
        print(f"{'every setting' if args.all else args.key} reset to the default")
        return 0
    loaded = load_settings(paths.settings_file, env)
    if action == "get":
        print(_show(loaded.value(args.key)))
        return 0
    rows = [{"key": k, "value": loaded.value(k), "origin": loaded.origins[k], "accepts": accepted_values(k),
             "description": describe_key(k)["description"]} for k in setting_keys()]
    if args.json:
        print(json.dumps({"file": str(paths.settings_file), "settings": rows}, default=str))
        return 0
    print(f"# settings file: {paths.settings_file}")
    group = None
    for row in rows:
        g = row["key"].rpartition(".")[0]
        if g != group:
            group = g
            print(f"\n[{g}] {GROUPS[g].about}")
        origin = "" if row["origin"] == "default" else f"  ({row['origin']})"
        print(f"  {row['key']} = {_show(row['value'])}{origin}\n      {row['description']}")
    return 0
