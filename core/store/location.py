"""Where a workspace lives: a local folder (the default), or a prefix of an S3-compatible bucket (shared).

A shared workspace is registered on each machine by a ``location.json`` in its local folder
(``workspaces/NAME/``), which also holds what stays on that machine (chats, the run ledger). The file
names the bucket URI, the endpoint of an S3-compatible store (MinIO, Ceph, R2, …; none for AWS) and the
region. Credentials are never in it (see ``bucket_access``).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import InvalidArgument, WorkspaceError
from ..fileio import atomic_write_bytes
from ..urls import has_credentials, mask_credentials

logger = logging.getLogger(__name__)

LOCATION_FILE = "location.json"
#: S3 bucket naming rules: 3–63 lowercase letters, digits, dots and dashes, starting and ending with a letter or digit.
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_PREFIX_PART = re.compile(r"^[A-Za-z0-9._-]+$")
_REGION = re.compile(r"^[a-z0-9-]{1,40}$")
_URI_HELP = ("Use s3://BUCKET/PREFIX, e.g. s3://acme-team-memory/engram/backend: a bucket name of 3–63 lowercase "
             "letters, digits, dots and dashes, then folders of letters, digits, dots, dashes and underscores.")


@dataclass(frozen=True)
class BucketLocation:
    """A prefix of an S3-compatible bucket that holds one shared workspace."""

    bucket: str
    prefix: str  # "" for the bucket's root; no leading or trailing slash
    endpoint: str | None = None  # None: AWS S3 itself
    region: str | None = None

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"

    def describe(self) -> str:
        """The location in one line, as ``status`` and ``engram workspace list`` show it."""
        where = self.uri
        if self.endpoint:
            where += f" at {self.endpoint}"
        if self.region:
            where += f" ({self.region})"
        return where

    @classmethod
    def parse(cls, uri: str, *, endpoint: str | None = None, region: str | None = None) -> BucketLocation:
        """Validate a bucket URI, an endpoint URL and a region as a user typed them.

        Raises:
            InvalidArgument: one of them is not of a form Engram accepts (the message says which forms are).
        """
        text = uri.strip()
        _refuse_credentials(text, "bucket location", "s3://acme-team-memory/engram/backend")
        parts = urlsplit(text)
        if parts.scheme != "s3" or not parts.netloc or parts.query or parts.fragment:
            raise InvalidArgument(f"'{uri}' is not a bucket location. {_URI_HELP}")
        bucket = parts.netloc
        if not _BUCKET.fullmatch(bucket) or ".." in bucket:
            raise InvalidArgument(f"'{bucket}' is not a valid bucket name. {_URI_HELP}")
        folders = [p for p in parts.path.split("/") if p]
        if any(not _PREFIX_PART.fullmatch(p) or p in (".", "..") for p in folders):
            raise InvalidArgument(f"'{parts.path}' is not a usable prefix. {_URI_HELP}")
        return cls(bucket, "/".join(folders), _endpoint(endpoint), _region(region))


def _endpoint(endpoint: str | None) -> str | None:
    if endpoint is None or not endpoint.strip():
        return None
    text = endpoint.strip().rstrip("/")
    _refuse_credentials(text, "endpoint", "https://minio.example.com:9000")
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query or parts.fragment:
        raise InvalidArgument(f"'{endpoint}' is not an endpoint URL: use http(s)://HOST[:PORT] of the S3-compatible "
                              "store, e.g. https://minio.example.com:9000 (leave it out for AWS S3).")
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0 or (port is None and parts.netloc.endswith(":")):
        raise InvalidArgument(f"'{endpoint}' has an invalid port: use 1–65535.")
    # The scheme in lowercase: bucket access tells http from https by it (``HTTP://`` is http).
    return parts.scheme + text[len(parts.scheme):]


def http_caution(location: BucketLocation) -> str:
    """A sentence for a location whose endpoint is plain ``http://`` to another computer ("" otherwise): requests
    are signed, so the secret key never crosses, but every memory and the access key ID do, unencrypted."""
    if not location.endpoint or not location.endpoint.startswith("http://"):
        return ""
    host = (urlsplit(location.endpoint).hostname or "").lower()
    if host in ("localhost", "::1") or host.startswith("127."):
        return ""
    return (f"{location.endpoint} is plain http: every memory of this workspace crosses the network unencrypted. "
            "Use https:// unless the store is on a network you trust.")


def _refuse_credentials(text: str, what: str, example: str) -> None:
    """Refuse a URL with a user or key before its host, in a message that does not repeat them (an endpoint or a
    bucket location has no other use for "@")."""
    if has_credentials(text):  # any "@": a secret may hold "/" or "#", which would end the host part early
        shown = mask_credentials(text) if "://" in text else f"…@{text.rsplit('@', 1)[1]}"
        raise InvalidArgument(f"The {what} ({shown}) carries a user name or key before '@'. Engram takes no "
                              "credentials in a URL, where they would be saved and shown: give it without them "
                              f"(e.g. {example}) and the access key with `engram workspace add --access-key-id` "
                              "(the keyring) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in Engram's "
                              "environment.")


def _region(region: str | None) -> str | None:
    if region is None or not region.strip():
        return None
    text = region.strip()
    if not _REGION.fullmatch(text):
        raise InvalidArgument(f"'{region}' is not a region name: use lowercase letters, digits and dashes, "
                              "e.g. eu-west-1.")
    return text


def read_location(folder: Path) -> BucketLocation | None:
    """The bucket location registered in a workspace's local ``folder``; ``None`` for a local workspace.

    Raises:
        WorkspaceError: the file is there but unreadable or damaged.
    """
    path = folder / LOCATION_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return BucketLocation.parse(str(data["uri"]), endpoint=data.get("endpoint"), region=data.get("region"))
    except (OSError, ValueError, KeyError, TypeError, InvalidArgument) as exc:
        logger.warning("reading %s failed: %r", path, exc)
        raise WorkspaceError(f"Workspace '{folder.name}' cannot be opened: its {LOCATION_FILE} is unreadable or "
                             f"damaged. Remove it with `engram workspace remove {folder.name}` and add the workspace "
                             "again.") from exc


def write_location(folder: Path, location: BucketLocation) -> None:
    """Record ``location`` in the workspace's local ``folder`` (atomically). Raises ``OSError``."""
    data = {"uri": location.uri, "endpoint": location.endpoint, "region": location.region}
    atomic_write_bytes(folder / LOCATION_FILE, (json.dumps(data, indent=2) + "\n").encode())


def location_fields(location: BucketLocation) -> dict[str, str | None]:
    """The location's fields by name (for results and JSON output)."""
    return {**asdict(location), "uri": location.uri}
