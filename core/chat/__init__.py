"""Chat with a local model that researches through Engram's read tools: reading its tool calls.

``toolcalls`` reads the calls in a reply in the model family's native format, ``arguments`` types them
by the tool's JSON schema, and ``template_probe`` picks the format from the model's own chat template.
"""

from .arguments import type_arguments
from .template_probe import FormatChoice, detect_tool_format
from .toolcalls import TOOL_FORMATS, ParsedReply, ToolCall, parse_reply

__all__ = ["TOOL_FORMATS", "FormatChoice", "ParsedReply", "ToolCall", "detect_tool_format", "parse_reply",
           "type_arguments"]
