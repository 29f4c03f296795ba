"""How a shared workspace's database is reached: its bucket location and the storage options for LanceDB."""

from __future__ import annotations

from dataclasses import dataclass

from .location import BucketLocation


@dataclass(frozen=True)
class BucketConnection:
    """Where a shared workspace's database is, and LanceDB's ``storage_options`` to reach it."""

    location: BucketLocation
    options: dict[str, str]

    def __repr__(self) -> str:  # the options hold the secret key
        return f"BucketConnection({self.location.uri!r})"
