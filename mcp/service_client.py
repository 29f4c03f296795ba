"""The command line's way to a running service: found and proven, never started, called directly.

``engram search`` and the other tool commands use the data folder's service when one runs (the tray
app's or a headless one), so that one process holds the model and writes the stores; with no service
they open the folder themselves. A service that holds the folder but cannot prove it holds its token
is an error (opening the folder beside it would make a second writer).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx2

from engram.core import EngramError, Paths
from engram.core.events import IngestProgress

from .direct import DIRECT_PATH
from .error_codec import decode
from .errors import ServiceStopped
from .handshake import mismatch
from .locator import Search, locate
from .service_files import ServiceInfo


@dataclass(frozen=True)
class DirectOutput:
    """A tool's answer from the service, as ``Engine.call`` gives it in process (the result as JSON)."""

    tool: str
    workspace: str
    result: dict[str, Any]
    text: str


class ServiceClient:
    """Direct calls to the proven service of a data folder. ``close`` it."""

    def __init__(self, paths: Paths, info: ServiceInfo, secret: str) -> None:
        self.paths = paths
        self.info = info
        self._http = httpx2.Client(headers={"Authorization": f"Bearer {secret}"}, trust_env=False,
                                   timeout=httpx2.Timeout(30.0, read=None))

    @classmethod
    def find(cls, paths: Paths, *, wait: float = 10.0) -> ServiceClient | None:
        """The running service of ``paths``, proven; ``None`` when none runs (nothing is started).

        A service that is starting (it holds the folder, and has not announced itself yet) is waited for
        up to ``wait`` seconds.

        Raises:
            TokenMismatch: a service holds the folder but does not answer for its token.
            ServiceStopped: a service holds the folder but did not answer within ``wait`` seconds.
        """
        found = locate(Search(paths, patience=wait, starts=False))
        return None if found is None else cls(paths, found.info, found.secret)

    def call(self, tool: str, arguments: dict[str, Any],
             progress: Callable[[IngestProgress], None] | None = None) -> DirectOutput:
        """Run ``tool`` in the service, as ``Engine.call`` would here.

        Raises:
            EngramError (the engine's own class where it has one): the service refused or failed the call.
            TokenMismatch, ServiceStopped: the service cannot be used.
        """
        line = self._post({"tool": tool, "arguments": arguments}, progress)
        out = line["output"]
        return DirectOutput(out["tool"], out["workspace"], out["result"], out["text"])

    def context_pack(self, request: dict[str, Any], workspace: str = "") -> dict[str, Any]:
        """A context pack from the service (see ``Engine.context_pack``), as JSON."""
        pack: dict[str, Any] = self._post({"pack": request, "workspace": workspace}, None)["pack"]
        return pack

    def transfer(self, action: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """An export or import run by the service (see ``Engine.transfer``): ``{"result": {...}, "text": "..."}``."""
        answer: dict[str, Any] = self._post({"transfer": action, "arguments": arguments}, None)["transfer"]
        return answer

    def _post(self, body: dict[str, Any], progress: Callable[[IngestProgress], None] | None) -> dict[str, Any]:
        try:
            with self._http.stream("POST", self.info.base_url + DIRECT_PATH, json=body) as reply:
                if reply.status_code == 401:
                    raise mismatch(self.paths.data_dir, self.info)
                for raw in reply.iter_lines():
                    if not raw.strip():
                        continue
                    line: dict[str, Any] = json.loads(raw)
                    if "progress" in line:
                        if progress is not None:
                            progress(IngestProgress(**line["progress"]))
                        continue
                    if "error" in line:
                        raise _engine_error(line["error"])
                    return line
        except httpx2.HTTPError as exc:
            raise ServiceStopped(f"The Engram service stopped while answering ({exc.__class__.__name__}); nothing "
                                 "more is known about this call. Run the command again.") from None
        except ValueError:
            raise ServiceStopped("The Engram service answered something that is not its JSON; run the command "
                                 "again.") from None
        raise ServiceStopped("The Engram service closed the answer before it was complete; run the command again.")

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _engine_error(error: dict[str, Any]) -> EngramError:
    """The service's refusal as the engine's own exception class (so the CLI reacts by type, as in process)."""
    return decode(error)
