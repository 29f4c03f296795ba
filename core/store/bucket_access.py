"""Credentials and connection options for a shared workspace's bucket.

Credentials come from the OS keyring (service ``engram``, one entry per workspace, stored by ``engram
workspace add --access-key-id``), or else from the standard AWS variables of the environment Engram was
started in (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, optionally ``AWS_SESSION_TOKEN``). They are
never written to a file. Without either, Engram refuses to open the workspace and says how to provide them:
it never falls back to a cloud instance's metadata service.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ..errors import WorkspaceError
from .location import BucketLocation

logger = logging.getLogger(__name__)

KEYRING_SERVICE = "engram"
#: How long one request may take, and how often a failed one is retried, before a search or a write says the bucket
#: cannot be reached. LanceDB's defaults (3 retries within 3 minutes, no request timeout) held one search for 12
#: minutes against a server that accepted connections and never answered; with these, a refused connection fails
#: in about 2 s and a silent server in about 70 s (LanceDB retries some reads itself, about 7 requests' time).
CONNECT_TIMEOUT = "3s"
REQUEST_TIMEOUT = "10s"
MAX_RETRIES = 1
RETRY_TIMEOUT_SEC = 5


class KeyringRefused(WorkspaceError):
    title = "Keyring unavailable"


@dataclass(frozen=True)
class BucketCredentials:
    """An access key for a bucket, and where it came from (``keyring`` or ``environment``)."""

    access_key_id: str
    secret_access_key: str
    session_token: str | None = None
    source: Literal["keyring", "environment"] = "keyring"

    def __repr__(self) -> str:  # never print the secret (logs, tracebacks)
        return f"BucketCredentials(access_key_id={self.access_key_id!r}, source={self.source!r})"


def _keyring_user(workspace: str) -> str:
    return f"workspace:{workspace}"


def stored_credentials(workspace: str) -> BucketCredentials | None:
    """The workspace's access key from the OS keyring, or ``None`` when none is stored.

    Raises:
        KeyringRefused: the keyring cannot be read (none on this computer, or it is locked).
    """
    import keyring
    from keyring.errors import KeyringError

    try:
        raw = keyring.get_password(KEYRING_SERVICE, _keyring_user(workspace))
    except (KeyringError, RuntimeError) as exc:
        raise KeyringRefused(f"The OS keyring cannot be read ({exc}); the access key of workspace '{workspace}' is "
                             "kept there. Unlock or start the keyring, or give the key in the environment "
                             "(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY).") from exc
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        return BucketCredentials(str(data["access_key_id"]), str(data["secret_access_key"]),
                                 data.get("session_token") or None, "keyring")
    except (ValueError, KeyError, TypeError) as exc:
        raise KeyringRefused(f"The keyring entry of workspace '{workspace}' is damaged; store the key again with "
                             f"`engram workspace add {workspace} … --access-key-id ID`.") from exc


def store_credentials(workspace: str, credentials: BucketCredentials) -> None:
    """Keep the workspace's access key in the OS keyring.

    Raises:
        KeyringRefused: there is no usable keyring, or it refused the entry.
    """
    import keyring
    from keyring.errors import KeyringError

    value = json.dumps({"access_key_id": credentials.access_key_id, "secret_access_key": credentials.secret_access_key,
                        "session_token": credentials.session_token})
    try:
        keyring.set_password(KEYRING_SERVICE, _keyring_user(workspace), value)
    except (KeyringError, RuntimeError) as exc:
        raise KeyringRefused(f"The OS keyring refused the access key of workspace '{workspace}' ({exc}). Start or "
                             "unlock the keyring (Secret Service on Linux, Keychain on macOS, Credential Manager on "
                             "Windows), or leave out --access-key-id and give the key in the environment "
                             "(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY).") from exc


def forget_credentials(workspace: str) -> None:
    """Remove the workspace's access key from the keyring, if one is there (a missing keyring is not an error)."""
    import keyring
    from keyring.errors import KeyringError, PasswordDeleteError

    try:
        keyring.delete_password(KEYRING_SERVICE, _keyring_user(workspace))
    except PasswordDeleteError:
        pass
    except (KeyringError, RuntimeError) as exc:
        logger.warning("removing the access key of workspace '%s' from the keyring failed: %s", workspace, exc)


def environment_credentials(environ: Mapping[str, str]) -> BucketCredentials | None:
    """The standard AWS variables of ``environ``, when both the key id and the secret are set."""
    key_id = environ.get("AWS_ACCESS_KEY_ID", "").strip()
    secret = environ.get("AWS_SECRET_ACCESS_KEY", "").strip()
    if not key_id or not secret:
        return None
    return BucketCredentials(key_id, secret, environ.get("AWS_SESSION_TOKEN", "").strip() or None, "environment")


def credentials_for(workspace: str, environ: Mapping[str, str]) -> BucketCredentials:
    """The access key to open ``workspace``'s bucket with: the keyring's, else the environment's.

    Raises:
        WorkspaceError: neither has one (the message says how to give it). KeyringRefused: the keyring failed.
    """
    try:
        found = stored_credentials(workspace) or environment_credentials(environ)
    except KeyringRefused:
        # No keyring here (a headless server) is no reason to refuse a key the environment gives.
        found = environment_credentials(environ)
        if found is None:
            raise
    if found is None:
        raise WorkspaceError(
            f"No access key for shared workspace '{workspace}'. Store one with `engram workspace add {workspace} "
            "--uri … --access-key-id ID` (the secret goes to the OS keyring), or start Engram with "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set.", title="Bucket credentials missing")
    return found


def storage_options(location: BucketLocation, credentials: BucketCredentials, *,
                    max_retries: int = MAX_RETRIES) -> dict[str, str]:
    """LanceDB's ``storage_options`` for ``location``: the key, the endpoint and region, and short timeouts."""
    options = {
        "aws_access_key_id": credentials.access_key_id,
        "aws_secret_access_key": credentials.secret_access_key,
        "region": location.region or "us-east-1",
        "connect_timeout": CONNECT_TIMEOUT,
        "timeout": REQUEST_TIMEOUT,
        "client_max_retries": str(max_retries),
        "client_retry_timeout": str(RETRY_TIMEOUT_SEC),
    }
    if credentials.session_token:
        options["aws_session_token"] = credentials.session_token
    if location.endpoint:
        options["endpoint"] = location.endpoint
        options["allow_http"] = str(location.endpoint.lower().startswith("http://")).lower()
        # S3-compatible stores other than AWS mostly serve buckets by path (http://host/bucket/key).
        options["virtual_hosted_style_request"] = "false"
    return options
