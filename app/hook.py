"""``engram hook claude-code``: what Claude Code runs at its hooks (the plugin ``engram setup`` writes).

Claude Code hands a hook one JSON object on stdin (``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name`` …). The hook is thin and never fails the editor:

- every event leaves a capture job in the inbox (``core/capture/inbox.py``) and returns; the service takes it
  within a second and stores the session's new turns. No service running: one is started, detached, and the
  job waits for it;
- ``SessionStart`` also prints the brief: the project's recent memories and facts from ``wake_up``, at most
  ``capture.brief_chars`` characters, as the hook's ``additionalContext``. It waits at most
  ``capture.brief_wait_sec`` for the service, and prints nothing when the service does not answer in time.

Whatever goes wrong (bad input, an unwritable folder, a service that does not answer) is written to
``hooks.log`` in Engram's log folder, and the hook exits 0. Only the standard library and Engram's small
modules are imported before the job is written, so a hook returns in tens of milliseconds.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

from engram.core.capture.inbox import Job, post
from engram.core.paths import Paths
from engram.core.privacy import private_from_now_on

EDITORS = ("claude-code",)
#: The events the plugin's hooks run for: each captures; ``SessionStart`` also gives the brief.
EVENTS = ("SessionStart", "Stop", "SubagentStop", "PreCompact", "SessionEnd")
_MAX_INPUT = 1_000_000


class _HookLog:
    """Lines appended to ``hooks.log``: the standard ``logging`` module costs a hook ~10 ms to import (it brings
    ``traceback``, ``tokenize`` …), more than all the rest of its work. A log that cannot be written is skipped;
    one past ``MAX_BYTES`` is moved to ``hooks.log.1`` (replacing the one before), so it never grows without end."""

    MAX_BYTES = 1_000_000

    def __init__(self, paths: Paths) -> None:
        self.path = paths.log_dir / "hooks.log"

    def write(self, level: str, message: str) -> None:
        line = f"{time.strftime('%Y-%m-%d %H:%M:%S')} {level} {message}\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists() and self.path.stat().st_size > self.MAX_BYTES:
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line)
        except OSError:
            pass


def _read_input(stdin: IO[str]) -> dict[str, Any]:
    """The hook's input object.

    Raises:
        ValueError: the input is not a JSON object with ``session_id`` and ``transcript_path`` strings.
    """
    data = json.loads(stdin.read(_MAX_INPUT) or "null")
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) and data[k]
                                             for k in ("session_id", "transcript_path")):
        raise ValueError("expected a JSON object with session_id and transcript_path (Claude Code's hook input)")
    return data


def _service_running(paths: Paths) -> bool:
    from engram.mcp.service_files import lock_held

    return lock_held(paths.data_dir)


def _start_service(paths: Paths) -> None:
    from engram.mcp.service_spawn import start_detached

    start_detached(paths)


def run_hook(argv: Sequence[str], *, stdin: IO[str], stdout: IO[str], environ: Mapping[str, str]) -> int:
    """Carry out one hook; always 0 (what went wrong is in ``hooks.log``)."""
    started = time.monotonic()
    try:
        paths = Paths.from_environ(environ)
        private_from_now_on(paths)
    except Exception:  # no folder to log to (a HOME that cannot be read): still never fail the editor
        return 0
    log = _HookLog(paths)
    try:
        if len(argv) != 1 or argv[0] not in EDITORS:
            raise ValueError(f"usage: engram hook {{{','.join(EDITORS)}}} (the editor's hook input on stdin)")
        data = _read_input(stdin)
        event = str(data.get("hook_event_name") or "")
        job = Job(editor=argv[0], event=event, session_id=data["session_id"], transcript=data["transcript_path"],
                  cwd=str(data.get("cwd") or ""), at=time.time())
        post(paths.data_dir, job)
        running = _service_running(paths)
        if not running:
            _start_service(paths)
        if event == "SessionStart":
            brief = _brief(paths, environ, job.cwd, log)
            if brief:
                json.dump({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": brief}},
                          stdout)
                stdout.write("\n")
        log.write("INFO", f"{argv[0]} {event or '?'}: job left for the service"
                          f"{'' if running else ', which was started'} ({1000 * (time.monotonic() - started):.0f} ms)")
    except Exception as exc:  # a hook never fails the editor
        log.write("WARNING", f"hook {' '.join(argv)}: {type(exc).__name__}: {exc}")
    return 0


def _brief(paths: Paths, environ: Mapping[str, str], cwd: str, log: _HookLog) -> str:
    """The session's brief from the service (``""`` when it is off, empty, or the service is not ready in time)."""
    from engram.core.capture.turns import project_of
    from engram.core.settings_file import load_settings
    from engram.mcp.locator import Search, locate
    from engram.mcp.service_client import ServiceClient

    capture = load_settings(paths.settings_file, environ).settings.capture
    if capture.brief_chars == 0:
        return ""
    found = locate(Search(paths, patience=capture.brief_wait_sec, starts=False))
    deadline = time.monotonic() + capture.brief_wait_sec
    while found is None and time.monotonic() < deadline:  # started a moment ago: it takes the folder soon
        time.sleep(0.1)
        found = locate(Search(paths, patience=max(0.1, deadline - time.monotonic()), starts=False))
    if found is None:
        log.write("INFO", f"no brief: the service did not answer within {capture.brief_wait_sec:.1f} s")
        return ""
    project = project_of(cwd)
    with ServiceClient(paths, found.info, found.secret) as client:
        overview = client.call("wake_up", {"project": project, "limit": 8, "max_chars": capture.brief_chars})
        if not overview.result.get("memories"):
            return ""
    header = (f"Engram remembers this project ({project}); `recall` or `search` finds more. "
              f"Brief, at most {capture.brief_chars:,} characters:\n")
    return header + overview.text


def main() -> None:
    """The ``engram hook`` entry: ``run_hook`` on this process's streams and environment."""
    sys.exit(run_hook(sys.argv[2:], stdin=sys.stdin, stdout=sys.stdout, environ=os.environ))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run_hook(sys.argv[1:], stdin=sys.stdin, stdout=sys.stdout, environ=os.environ))
