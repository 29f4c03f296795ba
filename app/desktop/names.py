"""How the window names a workspace and a project to a person.

The workspace Engram makes on first use is "My memory", and the project a note gets when none is given is
"No project": "default" and "general" are the names the command line and the AI tools use, and the window's
tooltips give them for anyone who types them there.
"""

from __future__ import annotations

from engram.core.tools.writes import DEFAULT_PROJECT

MY_MEMORY = "My memory"
NO_PROJECT = "No project"


def workspace_label(name: str, default: str) -> str:
    """``name`` as the window shows it; ``default`` is the default workspace's name (store.default_workspace)."""
    return MY_MEMORY if name == default else name


def project_label(project: str) -> str:
    """``project`` as the window shows it."""
    return NO_PROJECT if project == DEFAULT_PROJECT else project


def cli_names(*, workspace: str = "", default: str = "", project: str = "") -> str:
    """For a tooltip: the names the command line and the AI tools use, where the window shows others (the
    default workspace ``default``, ``project``)."""
    parts = []
    if workspace and workspace == default:
        parts.append(f"workspace “{workspace}”")
    if project == DEFAULT_PROJECT:
        parts.append(f"project “{project}”")
    return f"In the command line and AI tools: {', '.join(parts)}." if parts else ""
