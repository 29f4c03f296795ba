"""One machine of a team, as a process of its own: joins a shared workspace and stores notes into it.

    python -m benchmark.shared_worker DATA_DIR ENDPOINT URI TAG COUNT

Prints one JSON line: how many notes were stored and the errors met (title: message). The embedding model is
the hashing stand-in (the seam): what is tried is the store under concurrent writers, not the model
(benchmark/reliability.py runs two; tests/test_shared_workspaces.py runs them smaller).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from engram.core import Engine, EngramError, Paths, Settings
from engram.core.store.location import BucketLocation
from standins.embedder import HashingEmbedder
from standins.s3 import OPEN_KEY


def main(data_dir: str, endpoint: str, uri: str, tag: str, count: int) -> None:
    base = Path(data_dir)
    environ = {"AWS_ACCESS_KEY_ID": OPEN_KEY[0], "AWS_SECRET_ACCESS_KEY": OPEN_KEY[1]}
    stored, errors = 0, []
    # The notes differ by their numbers alone: only exact duplicates are looked for (each must arrive once).
    unique = Settings.model_validate({"upkeep": {"duplicates": "exact"}})
    with Engine(Paths(base / "data", base / "config", base / "logs"), unique, embedder=HashingEmbedder(),
                environ=environ) as engine:
        engine.add_shared_workspace("team", BucketLocation.parse(uri, endpoint=endpoint))
        for i in range(count):
            try:
                engine.call("store", {"content": f"note {i} of {tag}: the {tag} machine remembers item {i}",
                                      "workspace": "team", "tags": [tag]})
                stored += 1
            except EngramError as exc:
                errors.append(f"{exc.title}: {exc.message}")
    print(json.dumps({"tag": tag, "stored": stored, "errors": errors}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
