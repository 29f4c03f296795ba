"""How errors cross between the service and its clients.

A tool that fails answers with an MCP error result whose text is what an agent reads, and whose
``_meta`` carries the Engram error's title and message (``ERROR_META``), so that the stdio
launcher passes the service's error on without reading its text.
"""

from __future__ import annotations

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, ValidationError

from engram.core import EngramError

ERROR_META = "engram/error"


class ServiceUnavailable(EngramError):
    """The service cannot start (``Service.open``: titled ``service.NOT_STARTED``) or does not answer a client."""

    title = "Engram service unavailable"


class ServiceStopped(EngramError):
    """The data folder's service holds the folder but did not answer the command line, or stopped mid-answer."""

    title = "Engram service stopped"


class RemoteToolError(EngramError):
    """A tool error reported by the service, with the title and message it was raised with there."""

    title = ""


class ToolFailure(BaseModel):
    """An Engram error as a tool result carries it in ``_meta[ERROR_META]``; no title for an internal error."""

    title: str
    message: str


def tool_error_result(tool: str, failure: ToolFailure) -> CallToolResult:
    """The result of a failed call of ``tool``: its text as the SDK writes a ``ToolError``'s, and ``failure``."""
    text = f"{failure.title}: {failure.message}" if failure.title else failure.message
    return CallToolResult(content=[TextContent(type="text", text=f"Error executing tool {tool}: {text}")],
                          is_error=True, _meta={ERROR_META: failure.model_dump()})


def remote_tool_error(result: CallToolResult) -> RemoteToolError:
    """The error that the failed ``result`` reports: Engram's own, or else (the SDK refused the call) its text."""
    try:
        failure = ToolFailure.model_validate((result.meta or {}).get(ERROR_META))
    except ValidationError:
        return RemoteToolError("\n".join(c.text for c in result.content if c.type == "text"))
    return RemoteToolError(failure.message, title=failure.title)
