"""Downloading a model file: resumable, atomic, verified, with progress.

The bytes go to ``<file>.part`` beside the target; an interrupted download resumes from there with
an HTTP Range request. Only a file whose SHA256 matches (the pinned one, or the hub's own LFS hash
for the pinned revision) is renamed to its final name, so a half or wrong file can never be loaded.
Each failure has its own error: disk full, network drop, not found, a server that refuses the range,
a server error, a wrong hash (the download is deleted), and no hash where one is required (nothing is
kept). A failure only ever touches the ``.part`` file: a file already under the target's name (an
earlier verified download) is neither replaced nor removed. Proxies come from the environment.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

import httpx2

from ..errors import ChecksumMismatch, ModelError
from ..fileio import sha256_file

CHUNK = 1 << 20


class DownloadError(ModelError):
    title = "Download failed"


class DiskFull(DownloadError):
    title = "Disk full"


class NetworkError(DownloadError):
    title = "Network error"


class ServerError(DownloadError):
    title = "Server refused the download"


@dataclass(frozen=True)
class Progress:
    """Pushed while downloading: bytes so far, total (0 when unknown), rate, and time left."""

    name: str
    done: int
    total: int
    bytes_per_s: float
    eta_s: float | None


@dataclass(frozen=True)
class Downloaded:
    path: Path
    sha256: str
    size: int
    hub_sha256: str | None  # the hub's LFS SHA256 for the pinned revision (X-Linked-Etag), when it sent one
    resumed_from: int


ProgressFn = Callable[[Progress], None]
PartMode = Literal["ab", "wb"]  # a partial file is appended to (a resumed download) or started afresh
Sink = Callable[[Path, PartMode], BinaryIO]


def _open_part(path: Path, mode: PartMode) -> BinaryIO:
    return open(path, mode)


def _hub_sha256(headers: httpx2.Headers) -> str | None:
    etag = headers.get("x-linked-etag") or ""
    value = etag.strip().strip('"').removeprefix("W/").strip('"')
    return value.lower() if len(value) == 64 and all(c in "0123456789abcdef" for c in value.lower()) else None


def download(url: str, target: Path, *, expected_sha256: str | None, require_sha256: bool = False,
             name: str = "", progress: ProgressFn | None = None, client: httpx2.Client | None = None,
             sink: Sink = _open_part, timeout: float = 30.0) -> Downloaded:
    """Fetch ``url`` into ``target`` and return what landed there.

    ``expected_sha256``: the pinned hash; when ``None`` the hub's ``X-Linked-Etag`` (LFS SHA256 of the
    requested revision) is used, and with neither the file is kept unverified (``hub_sha256`` None),
    unless ``require_sha256``: then the download is refused before its bytes are fetched. ``target``
    is only ever replaced by a complete, verified download; no failure removes or changes it.

    Raises:
        DiskFull, NetworkError, ServerError: the download stopped (a partial ``.part`` file stays
            for resuming, except after HTTP 416; it is never loadable under ``target``'s name).
        ChecksumMismatch: the bytes are not the pinned ones, or ``require_sha256`` and there is no
            hash to check them against; the partial file is deleted.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    start = part.stat().st_size if part.exists() else 0
    own_client = client is None
    http = client or httpx2.Client(timeout=httpx2.Timeout(timeout, read=timeout), follow_redirects=True, trust_env=True)
    label = name or target.name
    try:
        headers = {"Range": f"bytes={start}-"} if start else {}
        try:
            with http.stream("GET", url, headers=headers) as reply:
                first = reply.history[0] if reply.history else reply
                hub_sha = _hub_sha256(first.headers) or _hub_sha256(reply.headers)
                if reply.status_code == 416:
                    part.unlink(missing_ok=True)
                    raise ServerError(f"{url} refused to resume at byte {start:,} (HTTP 416); the partial file was "
                                      "removed, so the next try starts over.")
                if reply.status_code == 404:
                    raise ServerError(f"{url} was not found (HTTP 404): the repository, revision or file name is "
                                      "wrong, or the file was removed.", title="Model file not found")
                if reply.status_code >= 400:
                    raise ServerError(f"{url} answered HTTP {reply.status_code}; try again later.")
                if require_sha256 and not expected_sha256 and hub_sha is None:
                    part.unlink(missing_ok=True)
                    raise ChecksumMismatch(f"The hub sent no SHA256 (X-Linked-Etag) for {label} at {url}, so the "
                                           f"download cannot be verified and was not kept; {_kept(target)}.")
                resumed = start if reply.status_code == 206 else 0
                length = int(reply.headers.get("content-length", "0") or 0)
                total = resumed + length if length else 0
                _receive(reply, part, resumed, total, label, progress, sink)
        except httpx2.ConnectError as exc:  # the host could not be reached at all (no name, no route, refused)
            host = httpx2.URL(url).host
            kept = f" The {start:,} bytes already downloaded are kept for the next try." if start else ""
            raise NetworkError(f"Could not reach {host} to download {label}: this computer seems to be offline, or "
                               f"{host} is blocked here ({exc}). Nothing else changed.{kept} Try again once "
                               "connected.", title="Offline") from exc
        except httpx2.TransportError as exc:
            raise NetworkError(f"The download of {label} broke off ({exc.__class__.__name__}: {exc}). Run it again "
                               "to resume from where it stopped.") from exc
        digest = sha256_file(part)
        wanted = (expected_sha256 or hub_sha or "").lower()
        if wanted and digest != wanted:
            part.unlink(missing_ok=True)
            raise ChecksumMismatch(f"{label} downloaded with SHA256 {digest}, not the expected {wanted}, so the "
                                   f"download was deleted; {_kept(target)}. Run the download again; if it "
                                   "repeats, the source changed.")
        os.replace(part, target)
        return Downloaded(target, digest, target.stat().st_size, hub_sha, resumed)
    finally:
        if own_client:
            http.close()


def _kept(target: Path) -> str:
    """What a refused download left in place, for its error message."""
    return f"the copy already at {target} is untouched" if target.exists() else "nothing was saved"


def _receive(reply: httpx2.Response, part: Path, resumed: int, total: int, label: str,
             progress: ProgressFn | None, sink: Sink) -> None:
    started = time.monotonic()
    done = resumed
    last = 0.0
    try:
        handle = sink(part, "ab" if resumed else "wb")
    except OSError as exc:
        raise _disk_error(exc, part) from exc
    try:
        for block in reply.iter_bytes(CHUNK):
            try:
                handle.write(block)
            except OSError as exc:
                raise _disk_error(exc, part) from exc
            done += len(block)
            now = time.monotonic()
            if progress and (now - last >= 0.2 or (total and done >= total)):
                last = now
                rate = (done - resumed) / max(now - started, 1e-6)
                eta = (total - done) / rate if total and rate > 0 else None
                progress(Progress(label, done, total, rate, eta))
        try:
            handle.flush()
            os.fsync(handle.fileno())
        except OSError as exc:
            raise _disk_error(exc, part) from exc
    finally:
        try:
            handle.close()
        except OSError:
            pass
    if total and done < total:
        raise NetworkError(f"The download of {label} stopped at {done:,} of {total:,} bytes. Run it again to resume.")


def _disk_error(exc: OSError, part: Path) -> DownloadError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return DiskFull(f"No space left for {part.name} in {part.parent} ({exc.strerror}). Free some space and run "
                        "the download again; it resumes.")
    return DownloadError(f"Cannot write {part} ({exc.strerror}).")
