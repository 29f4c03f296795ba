"""What a failure of a shared workspace's bucket means, in the user's words.

LanceDB reports object-store failures as ``OSError``, ``ValueError`` or ``RuntimeError`` whose text carries
the S3 error code (``NoSuchBucket``, ``AccessDenied``, …) or the HTTP client's failure (``error sending
request``, a timeout). This module is the one place that reads those texts; everything above it sees the
typed errors below, each naming what to fix.
"""

from __future__ import annotations

import re

from ..errors import StoreError, WorkspaceError
from .location import BucketLocation


class BucketUnreachable(StoreError):
    title = "Shared workspace unreachable"


class BucketCredentialsRefused(WorkspaceError):
    title = "Bucket credentials refused"


class BucketMissing(WorkspaceError):
    title = "Bucket not found"


class BucketForbidden(WorkspaceError):
    title = "Bucket access denied"


class CommitConflict(StoreError):
    title = "Shared workspace busy"


#: Failures of a shared workspace's storage as a whole: no channel of a search can answer, so a search says this
#: one thing instead of a warning per channel.
WHOLE_WORKSPACE = (BucketUnreachable, BucketCredentialsRefused, BucketMissing, BucketForbidden)

_CREDENTIALS = re.compile(r"InvalidAccessKeyId|SignatureDoesNotMatch|InvalidToken|ExpiredToken|"
                          r"TokenRefreshRequired|AuthorizationHeaderMalformed|InvalidClientTokenId")
_MISSING = re.compile(r"NoSuchBucket")
_FORBIDDEN = re.compile(r"AccessDenied|lacked the necessary privileges|403 Forbidden|AllAccessDisabled")
_UNREACHABLE = re.compile(r"error sending request|TimedOut|kind: Timeout|timed out|[Cc]onnection refused|"
                          r"dns error|failed to lookup address|[Cc]onnection reset|broken pipe|tcp connect|"
                          r"[Cc]onnect(ion)? error|SlowDown|ServiceUnavailable|InternalError|50[234] ")
_CONFLICT = re.compile(r"[Cc]ommit conflict|[Tt]oo many concurrent writers|[Rr]etryable commit conflict|"
                       r"conflicting transaction|[Cc]oncurrent")


def is_commit_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` says a commit lost a race with another writer (nothing was committed; safe to retry)."""
    return bool(_CONFLICT.search(str(exc)))


def bucket_failure(exc: BaseException, workspace: str, location: BucketLocation, doing: str, *,
                   write: bool) -> StoreError | WorkspaceError | None:
    """The typed error for a bucket failure while ``doing`` (e.g. "reading", "writing notes to"), or ``None``
    when ``exc`` is not about reaching the bucket (the caller reports it as a store error)."""
    text = str(exc)
    where = location.describe()
    unwritten = " Nothing was written." if write else ""
    if _CREDENTIALS.search(text):
        return BucketCredentialsRefused(
            f"The bucket of shared workspace '{workspace}' ({where}) refused the access key while {doing} it: the key "
            "id is unknown or the secret does not match. Store the right key with `engram workspace add "
            f"{workspace} --uri {location.uri} --access-key-id ID`, or correct AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY." + unwritten)
    if _MISSING.search(text):
        return BucketMissing(
            f"The bucket '{location.bucket}' of shared workspace '{workspace}' does not exist"
            f"{' at ' + location.endpoint if location.endpoint else ''}. Check the name (and the endpoint), or ask "
            "whoever administers the storage to create it." + unwritten)
    if _FORBIDDEN.search(text):
        return BucketForbidden(
            f"The access key of shared workspace '{workspace}' is not allowed to {'write to' if write else 'read'} "
            f"{location.uri}. Give it s3:ListBucket on the bucket and s3:GetObject, s3:PutObject and s3:DeleteObject "
            "under the prefix (docs/shared.md has the policy)." + unwritten)
    if is_commit_conflict(exc):
        return CommitConflict(
            f"Shared workspace '{workspace}' is being written by other machines so fast that this write lost the race "
            "several times; it was not written. Try again in a moment.")
    if _UNREACHABLE.search(text):
        return BucketUnreachable(
            f"Shared workspace '{workspace}' cannot be reached ({where}): {_reason(text)}. Other workspaces keep "
            "working; this one answers again once its storage is back." + unwritten)
    return None


def _reason(text: str) -> str:
    # Every message of the object store names its retry settings ("retry_timeout: 10s"): a timeout is told by the
    # HTTP client's own words only.
    if re.search(r"[Cc]onnection refused", text):
        return "the connection was refused"
    if re.search(r"dns error|failed to lookup address", text):
        return "its host name does not resolve"
    if re.search(r"TimedOut|timed out|kind: Timeout", text):
        return "it did not answer in time"
    if re.search(r"SlowDown|ServiceUnavailable|InternalError|50[234] ", text):
        return "the storage service reported an error of its own"
    return "no connection to its storage could be made"


def unknown_failure(workspace: str, location: BucketLocation, doing: str) -> WorkspaceError:
    """A failure of the bucket that none of the known texts explains."""
    return WorkspaceError(
        f"Shared workspace '{workspace}' ({location.describe()}) failed while {doing} it (the details are in Engram's "
        "log). Check that the bucket and its endpoint are right and reachable.")
