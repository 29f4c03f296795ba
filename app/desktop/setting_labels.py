"""What the Settings page calls each key it edits, in the user's words, and the group it sits in.

The raw key (``recall.llm_timeout_sec``) stays in each row's tooltip and in Advanced's complete list;
the label is what a person reads. ``UNITS`` is the unit a number's spin box shows after its value.
"""

from __future__ import annotations

#: The everyday choices, shown first, in outcome words.
EVERYDAY_GROUPS: list[tuple[str, list[str]]] = [
    ("General", ["desktop.start_at_login", "desktop.notifications", "desktop.open_with"]),
    ("Local AI", ["recall.llm", "tagger.llm", "summarizer.enabled", "helper.local.model", "chat.local_model"]),
    ("Remembering", ["capture.claude_code", "capture.codex", "watch.enabled"]),
]
#: The rest, under the collapsed Advanced (a search box finds any of them).
ADVANCED_GROUPS: list[tuple[str, list[str]]] = [
    ("Models on this computer", ["recall.llm_timeout_sec", "helper.local.threads", "helper.local.batch",
                                 "model.gpu_device", "chat.tool_format", "chat.n_ctx", "chat.max_tokens"]),
    ("Search", ["search.limit", "search.weight_semantic", "search.weight_lexical", "search.weight_graph",
                "search.max_chars", "recall.max_chars", "recall.run_budget.enabled", "recall.run_budget.max_queries",
                "recall.run_budget.max_rounds", "recall.run_budget.deadline_sec",
                "recall.run_budget.max_tokens_per_query"]),
    ("Sessions, folders & service", ["capture.brief_chars", "capture.turns_per_day", "capture.turns_per_session",
                                     "watch.quiet_sec", "service.port"]),
    ("Chat research", ["chat.research_timeout_sec", "chat.research_token_budget", "chat.research_no_progress_rounds",
                       "chat.answer_timeout_sec"]),
    ("Models on a server", ["helper.provider", "helper.base_url", "helper.remote_model", "chat.provider",
                            "chat.base_url", "chat.remote_model"]),
]
#: The page's groups in order, each with the keys it edits in order.
PAGE_GROUPS: list[tuple[str, list[str]]] = EVERYDAY_GROUPS + ADVANCED_GROUPS

#: Key → the row's label.
LABELS: dict[str, str] = {
    "desktop.start_at_login": "Start Engram when I log in",
    "desktop.notifications": "Notify me when long jobs finish or fail",
    "desktop.open_with": "Open a result's file with",
    "capture.claude_code": "Remember my Claude Code sessions",
    "capture.codex": "Remember my Codex sessions",
    "capture.brief_chars": "Brief at the start of a session (characters)",
    "capture.turns_per_day": "Turns remembered per day, at most",
    "capture.turns_per_session": "Turns remembered per session, at most",
    "watch.enabled": "Keep remembered folders current while Engram runs",
    "watch.quiet_sec": "Read a folder's changes again after it is quiet for",
    "recall.llm": "Let local AI plan and answer recalls",
    "recall.llm_timeout_sec": "Time a recall may take",
    "tagger.llm": "Let local AI tag new memories (type, domain, topics)",
    "summarizer.enabled": "Let local AI summarise sources for digests",
    "helper.local.model": "Model for recall and tags",
    "helper.local.threads": "CPU threads for the helper model (0: all)",
    "helper.local.batch": "Prompt tokens read in one step",
    "model.gpu_device": "GPU the local models run on",
    "search.limit": "Results per search",
    "search.weight_semantic": "Weight of meaning (semantic)",
    "search.weight_lexical": "Weight of exact words (full text)",
    "search.weight_graph": "Weight of links between memories (graph)",
    "search.max_chars": "Longest search answer",
    "recall.max_chars": "Longest recall answer",
    "service.port": "Port your editors reach Engram on (0: any free one)",
    "helper.provider": "Where the helper model runs",
    "helper.base_url": "Address of the model server",
    "helper.remote_model": "Model name at that server",
    "recall.run_budget.enabled": "Limit how much a run prepares by meaning",
    "recall.run_budget.max_queries": "Queries a run may prepare",
    "recall.run_budget.max_rounds": "Preparation rounds a run may use",
    "recall.run_budget.deadline_sec": "Time a run may prepare for",
    "recall.run_budget.max_tokens_per_query": "Tokens read from each query",
    "chat.local_model": "Model for chat (Ask page, engram chat)",
    "chat.tool_format": "How the chat model writes tool calls",
    "chat.provider": "Where the chat model runs",
    "chat.base_url": "Address of the chat model's server",
    "chat.remote_model": "Chat model's name at that server",
    "chat.n_ctx": "Chat model's context",
    "chat.max_tokens": "Longest step of a chat reply",
    "chat.research_timeout_sec": "Time a chat may research",
    "chat.research_token_budget": "Tokens a chat may spend researching",
    "chat.research_no_progress_rounds": "Rounds without anything new before a chat answers",
    "chat.answer_timeout_sec": "Time a chat's answer may take",
}

#: Key → the unit its spin box shows after the value (the suffix).
UNITS: dict[str, str] = {
    "recall.llm_timeout_sec": "seconds",
    "helper.local.threads": "threads",
    "helper.local.batch": "tokens",
    "search.limit": "results",
    "search.max_chars": "characters",
    "recall.max_chars": "characters",
    "recall.run_budget.max_queries": "queries",
    "recall.run_budget.max_rounds": "rounds",
    "recall.run_budget.deadline_sec": "seconds",
    "recall.run_budget.max_tokens_per_query": "tokens",
    "chat.n_ctx": "tokens",
    "chat.max_tokens": "tokens",
    "chat.research_timeout_sec": "seconds",
    "chat.research_token_budget": "tokens",
    "chat.research_no_progress_rounds": "rounds",
    "chat.answer_timeout_sec": "seconds",
}


def group_of(key: str) -> str:
    """The page group that edits ``key``; raises ``KeyError`` for a key the page does not edit."""
    return next(title for title, keys in PAGE_GROUPS if key in keys)
