"""``engram workspace add|list|remove``: where each workspace lives, and shared workspaces in a bucket."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engram.core import Engine
from engram.core.store.bucket_access import BucketCredentials
from engram.core.store.location import BucketLocation, http_caution
from engram.core.workspaces import WorkspacePlace

from .terminal import for_stream

COMMANDS = ("workspace",)


def add_parser(sub: Any) -> None:
    ws = sub.add_parser("workspace", help="List workspaces, or add a shared one that lives in an S3-compatible bucket",
                        description="A shared workspace lives under a prefix of an S3-compatible bucket (AWS S3, "
                                    "MinIO, Ceph, R2, …) that several machines read and write; docs/shared.md says "
                                    "how to set one up.")
    actions = ws.add_subparsers(dest="workspace_action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="Create or join a shared workspace in a bucket",
                             description="Creates the workspace under the prefix when it is empty, or joins the one "
                                         "another machine created there. Its access key comes from --access-key-id "
                                         "(the secret is then read from standard input, or asked for on a terminal, "
                                         "and kept in the OS keyring) or else from AWS_ACCESS_KEY_ID and "
                                         "AWS_SECRET_ACCESS_KEY.")
    add.add_argument("name", help="The workspace's name on this computer (lowercase letters, digits, dashes).")
    add.add_argument("--uri", required=True, help="s3://BUCKET/PREFIX")
    add.add_argument("--endpoint", help="URL of an S3-compatible store (leave out for AWS S3).")
    add.add_argument("--region", help="The bucket's region (default us-east-1).")
    add.add_argument("--access-key-id", dest="access_key_id",
                     help="Keep this key in the OS keyring (its secret is read from standard input).")
    listing = actions.add_parser("list", help="Every workspace, where it lives, and whether it can be reached")
    listing.add_argument("--json", action="store_true")
    listing.add_argument("--no-check", dest="check", action="store_false",
                         help="Do not contact shared workspaces' buckets.")
    remove = actions.add_parser("remove", help="Forget a shared workspace on this computer (the bucket keeps it)")
    remove.add_argument("name")


def _secret() -> str:
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass("Secret access key: ")
    return sys.stdin.readline()


def run(args: argparse.Namespace, engine: Engine) -> int:
    """Carry out one ``workspace`` action (errors propagate as ``EngramError``; the CLI prints them)."""
    action = args.workspace_action
    if action == "add":
        location = BucketLocation.parse(args.uri, endpoint=args.endpoint, region=args.region)
        credentials = None
        if args.access_key_id:
            secret = _secret().strip()
            if not secret:
                from engram.core.errors import InvalidArgument

                raise InvalidArgument("No secret access key was given: type it when asked, or pipe it to standard "
                                      "input (e.g. `pass show team-bucket | engram workspace add …`).")
            credentials = BucketCredentials(args.access_key_id.strip(), secret)
        place = engine.add_shared_workspace(args.name, location, credentials)
        how = "its access key is in the OS keyring" if credentials else "its access key comes from the environment"
        joined = (f"joined it ({place.memories:,} {'memory' if place.memories == 1 else 'memories'} there)"
                  if place.memories else "it is empty")
        print(for_stream(f"shared workspace {args.name}: {location.describe()}; {joined}; {how}.", sys.stdout))
        print(f"Use it with --workspace {args.name} (tools: \"workspace\": \"{args.name}\").")
        if caution := http_caution(location):
            print(for_stream(f"Note: {caution}", sys.stderr), file=sys.stderr)
        return 0
    if action == "remove":
        location = engine.remove_shared_workspace(args.name)
        print(for_stream(f"forgot shared workspace {args.name} on this computer; {location.uri} keeps every memory "
                         "(add it again to use it).", sys.stdout))
        return 0
    places = engine.workspace_places(check=args.check)
    if args.json:
        print(json.dumps([_as_json(p) for p in places]))
        return 0
    if not places:
        print("no workspaces yet: the first note or ingest creates `default`; `engram workspace add` adds a shared one")
        return 0
    width = max(len(p.name) for p in places)
    for p in places:
        print(for_stream(f"{p.name:{width}}  {_state(p):24}  {p.where}", sys.stdout))
        if p.problem:
            print(for_stream(f"{'':{width}}  {p.problem}", sys.stdout))
    return 0


def _state(p: WorkspacePlace) -> str:
    kind = "shared" if p.shared else "local "
    if p.reachable is None:
        return kind
    if not p.reachable:
        return f"{kind} · not reachable"
    return f"{kind} · {p.memories:,} {'memory' if p.memories == 1 else 'memories'}"


def _as_json(p: WorkspacePlace) -> dict[str, Any]:
    return {"name": p.name, "shared": p.shared, "where": p.where, "uri": p.location.uri if p.location else None,
            "endpoint": p.location.endpoint if p.location else None, "reachable": p.reachable, "memories": p.memories,
            "problem": p.problem}
