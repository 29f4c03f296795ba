"""What an agent or the chat model reads about each tool: short, and saying when to use which."""

from __future__ import annotations

INSTRUCTIONS = (
    "Engram is the user's local memory: their notes, decisions, conversations and indexed files. "
    "Start with search; expand hits with get_memory, neighbors or file_chunks. Results cite "
    "id · project · source:lines, and every id shown is accepted by the tools that expand it."
)

DESCRIPTIONS: dict[str, str] = {
    "search": "Find memories and file chunks by meaning and keywords (hybrid + graph). Start here.",
    "get_memory": "Full text of memories by id (ids from search, neighbors or file_chunks).",
    "neighbors": "Memories linked to one id: next chunk, same file, shared identifiers. Widens context around a hit.",
    "file_chunks": "An ingested file's chunks in order, optionally only a line range. Read around a hit.",
    "file_summary": "Summary and heading outline of one ingested file.",
    "list_sources": "What is indexed: ingested files and texts, paged.",
    "kg_query": "Current facts (subject, predicate, object) with their ids; filter by any part.",
    "graph_scope": "Overview of the graph: relations, most-mentioned identifiers, fact predicates.",
    "review": "Tidying memory: notes written more than once, near duplicates, possible updates (a detail "
              "changed), superseded notes.",
    "status": "Counts, projects, indexes and model state of a workspace.",
    "device_context": "This computer: OS, CPU, memory, llama.cpp build, GPU offload.",
    "wake_up": "At the start of a session: recent notes and current facts, briefly.",
    "store": "Remember a note or a conversation exchange (decision, preference, todo…); the reply says if it "
             "repeats or may update a stored one.",
    "tidy": "Answer store or review: supersede (newer replaces older), keep_both (not an update), merge, or "
            "unmerge (split a merged memory again).",
    "delete": "Delete memories by id, or forget an ingested file or text with its chunks.",
    "forget": "Forget many memories at once by query, project, source (a glob too), kind or dates; lists what "
              "would go unless confirm=true.",
    "kg_edit": "Add a fact, or end one by id (it stays in history).",
    "ingest_content": "Index a text under a title; the same title again replaces it.",
    "ingest_path": "Index or re-sync a folder or file on this computer; unchanged files are skipped.",
    "recall": "Multi-part question? One call: a plan of up to 8 reads runs at once, merged and cited under "
              "one max_chars budget.",
}
