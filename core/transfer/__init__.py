"""Export and import: a workspace written to a portable folder and read back losslessly, and peers' formats read in.

``engram export`` writes Engram's own folder format (``folder``: a manifest, every row of the memories, facts, edges
and sources tables as JSON lines, the vectors, and Markdown for a person); ``engram import`` recognises what a path
holds (``detect``) and reads it back: Engram's folder row for row (``engram_import``), or a peer's notes — Claude
Code's ``MEMORY.md`` / ``CLAUDE.md`` (``claude_memory``), basic-memory's Markdown notes (``basic_memory``), mem0's
export JSON (``mem0``) — each note through the ``store`` tool, as an agent's note goes (``peer_write``).
Nothing here is an MCP tool: an export writes a folder anywhere, an import reads one; the CLI and the window only.
"""
