"""Direct calls: how the ``engram`` command line uses a running service instead of opening the folder itself.

A second engine on the same data folder would load a second copy of the model and be a second writer
of the same stores; so while a service runs, the CLI sends its tool calls to it. MCP carries only a
tool's text, and the CLI also prints the result as JSON (``--json``) and shows ingest progress, so the
service answers the CLI at its own endpoint, behind the same guard (loopback Host, bearer token):

    POST /engram/v1/call   {"tool": NAME, "arguments": {...}}
                           {"pack": {...context pack request...}, "workspace": NAME}
                           {"transfer": "export" | "import", "arguments": {...}}   (``engram export`` / ``import``)

The answer is a stream of JSON lines: ``{"progress": {...}}`` while an ingest runs (every ingest of
the service, as the tray shows them), then one ``{"output": {"tool", "workspace", "result", "text"}}``,
``{"pack": {...}}``, ``{"transfer": {"result", "text"}}`` or ``{"error": {"type", "title", "message", "refused"}}``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import MutableMapping
from dataclasses import asdict
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectSendStream

from engram.core import Engine, EngramError
from engram.core.errors import InvalidArgument
from engram.core.events import EngineEvent, IngestProgressed

from .error_codec import encode

logger = logging.getLogger(__name__)

DIRECT_PATH = "/engram/v1/call"
_MAX_BODY = 4_000_000  # ingest_content accepts 2,000,000 characters (up to 4 bytes each would be more: JSON escapes)
#: No tool's arguments nest deeper than a few levels; validating a deeper value would recurse once per level.
_MAX_DEPTH = 32


def error_document(exc: EngramError) -> dict[str, Any]:
    """How a refusal or failure travels to the CLI (``refused``: bad input, exit status 2; see ``error_codec``)."""
    return encode(exc)


class DirectCalls:
    """The ASGI endpoint at ``DIRECT_PATH``: runs one engine call per request, off the event loop."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope.get("method") != "POST":
            await _send_json(send, 405, {"error": {"type": "InvalidArgument", "title": "Method not allowed",
                                                   "message": "POST a JSON call here.", "refused": True}})
            return
        body = await _read_body(receive)
        try:
            request = json.loads(body) if body is not None else None
        except (ValueError, RecursionError):  # RecursionError: nested past Python's stack, long before 4 MB
            request = None
        if not isinstance(request, dict) or not (isinstance(request.get("tool"), str) or "pack" in request
                                                 or isinstance(request.get("transfer"), str)) \
                or _depth(request) > _MAX_DEPTH:
            exc = InvalidArgument('Send {"tool": NAME, "arguments": {...}}, {"pack": {...}, "workspace": NAME} or '
                                  '{"transfer": "export" or "import", "arguments": {...}} as JSON (at most 4 MB, '
                                  f"nested at most {_MAX_DEPTH} levels).")
            await _send_json(send, 400, error_document(exc))
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/x-ndjson"), (b"cache-control", b"no-store")]})
        events, pending = anyio.create_memory_object_stream[dict[str, Any]](max_buffer_size=256)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._run, request, events)
            async with pending:
                async for line in pending:
                    await send({"type": "http.response.body", "body": json.dumps(line).encode() + b"\n",
                                "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _run(self, request: dict[str, Any], events: MemoryObjectSendStream[dict[str, Any]]) -> None:
        async with events:
            token = anyio.lowlevel.current_token()
            worker: list[int] = []  # the thread that answers this request: its ingests are this call's

            def progress(event: EngineEvent) -> None:
                if not isinstance(event, IngestProgressed) or threading.get_ident() not in worker:
                    return
                try:
                    anyio.from_thread.run_sync(_offer, events, {"progress": asdict(event.progress)}, token=token)
                except RuntimeError:  # the event loop is shutting down: nobody is listening any more
                    pass

            def answer_here() -> dict[str, Any]:
                worker.append(threading.get_ident())
                return self._answer(request)

            unsubscribe = self.engine.subscribe(progress)
            try:
                answer = await anyio.to_thread.run_sync(answer_here)
            finally:
                unsubscribe()
            await events.send(answer)

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        logger.info("direct call of %s", _called(request))
        try:
            if "pack" in request:
                pack = self.engine.context_pack(request["pack"], workspace=str(request.get("workspace") or ""))
                return {"pack": pack.model_dump(mode="json")}
            arguments = request.get("arguments") or {}
            if not isinstance(arguments, dict):
                raise InvalidArgument("'arguments' must be a JSON object.")
            if isinstance(request.get("transfer"), str):
                moved = self.engine.transfer(request["transfer"], arguments)
                return {"transfer": {"result": moved.model_dump(mode="json"), "text": moved.summary()}}
            out = self.engine.call(request["tool"], arguments)
            return {"output": {"tool": out.tool, "workspace": out.workspace,
                               "result": out.result.model_dump(mode="json"), "text": out.text}}
        except EngramError as exc:
            return error_document(exc)
        except Exception:  # top level of a request: a bug, not bad input; the details stay in the log
            logger.exception("direct call of %s failed unexpectedly", _called(request))
            return error_document(EngramError("The call failed unexpectedly; the details are in Engram's log.",
                                              title="Internal error"))


def _called(request: dict[str, Any]) -> str:
    """What a direct call asks for, in the service's log."""
    if isinstance(request.get("tool"), str):
        return str(request["tool"])
    return str(request["transfer"]) if isinstance(request.get("transfer"), str) else "a context pack"


def _offer(events: MemoryObjectSendStream[dict[str, Any]], line: dict[str, Any]) -> None:
    """Queue a progress line; when the client reads slowly, drop it rather than hold the ingest up."""
    try:
        events.send_nowait(line)
    except (anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass


def _depth(value: Any) -> int:
    """How deep lists and objects nest in ``value`` (1 for a flat object), counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if deepest > _MAX_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


async def _read_body(receive: Any) -> bytes | None:
    body = b""
    while True:
        message = await receive()
        body += bytes(message.get("body", b""))
        if len(body) > _MAX_BODY:
            return None
        if not message.get("more_body"):
            return body


async def _send_json(send: Any, status: int, document: dict[str, Any]) -> None:
    payload = json.dumps(document).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})
