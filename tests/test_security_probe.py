"""What a probe of the newest surfaces found (issue 31), each a test that failed before its fix.

Credentials in a URL, an endpoint's scheme and port, JSON nested past Python's stack, chat's tools that take no
``max_chars``, the opener's placeholders and shells, names with a trailing newline, a negative offset, and the
health check's challenges. Stored text that spells control tokens is tested with the real model in
``test_model_runtime.py``; the HTTP endpoints and chat's toolbox are fuzzed in ``test_fuzz.py``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from pydantic import ValidationError

from engram.core import Engine
from engram.core.chat.toolbox import CHAT_READS, HISTORY, ChatToolbox
from engram.core.chat.toolcalls import ToolCall
from engram.core.errors import InvalidArgument
from engram.core.settings import Settings, is_workspace_name
from engram.core.store.location import BucketLocation, http_caution
from engram.mcp.direct import DirectCalls
from engram.mcp.handshake import Proof, challenge, challenge_async
from engram.mcp.service import Guard
from engram.mcp.service_files import CHALLENGE_PATTERN, ServiceInfo
from standins.s3 import LoopbackS3

from .conftest import cli_in_process

SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzEXAMPLEKEY"  # shaped like an AWS secret: "/" and "+" in it


# ------------------------------------------------------------------ 1, 2: bucket locations


@pytest.mark.parametrize(("uri", "endpoint"), [
    ("s3://team-mem/e", f"http://KEYID:{SECRET}@127.0.0.1:9000"),
    ("s3://team-mem/e", f"https://{SECRET}@minio.example.com"),
    ("s3://team-mem/e", f"ftp://KEYID:{SECRET}@minio.example.com"),  # refused for its key before its scheme
    (f"s3://AKID:{SECRET}@team-mem/e", None),
    (f"AKID:{SECRET}@team-mem", None),
])
def test_credentials_in_a_url_are_refused_without_repeating_them(uri: str, endpoint: str | None) -> None:
    with pytest.raises(InvalidArgument) as refused:
        BucketLocation.parse(uri, endpoint=endpoint)
    message = refused.value.message
    assert "carries a user name or key" in message and "--access-key-id" in message
    assert SECRET not in message and "KEYID" not in message and "AKID" not in message
    assert SECRET.split("/")[0] not in message and SECRET.split("/")[1] not in message


def test_an_endpoints_scheme_is_read_in_any_case_and_port_0_is_refused() -> None:
    upper = BucketLocation.parse("s3://team-mem/e", endpoint="HTTP://127.0.0.1:9000")
    assert upper.endpoint == "http://127.0.0.1:9000", "bucket access tells http from https by the scheme"
    assert BucketLocation.parse("s3://team-mem/e", endpoint="HTTPS://Minio.Example.com").endpoint == \
        "https://Minio.Example.com"
    for port in ("0", "", "65536", "x"):
        with pytest.raises(InvalidArgument, match="invalid port: use 1–65535"):
            BucketLocation.parse("s3://team-mem/e", endpoint=f"http://127.0.0.1:{port}")


def test_plain_http_to_another_computer_comes_with_a_caution() -> None:
    def caution(endpoint: str) -> str:
        return http_caution(BucketLocation.parse("s3://team-mem/e", endpoint=endpoint))

    assert "crosses the network unencrypted" in caution("http://minio.lan:9000")
    assert caution("HTTP://10.0.0.5") != ""
    assert caution("http://127.0.0.1:9000") == caution("http://localhost") == caution("http://[::1]:1") == ""
    assert caution("https://minio.lan:9000") == ""


@pytest.mark.slow
def test_a_shared_workspace_session_never_shows_writes_or_logs_its_secret(
        tmp_path: Path, model_file: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Every output, file and log record of a session — adds refused and accepted, a store, a search, the lists,
    ``status``, the bucket down and back — scanned for the secret key and for the key given in a URL."""
    import keyring
    from keyring.backends.fail import Keyring as NoKeyring

    monkeypatch.setattr(keyring.core, "_keyring_backend", NoKeyring())
    caplog.set_level(logging.DEBUG)
    s3 = LoopbackS3()
    s3.create_bucket("team-mem")
    try:
        models = tmp_path / "data" / "models"
        models.mkdir(parents=True)
        shutil.copy(model_file, models / model_file.name)
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAM_", "AWS_"))}
        env = {**clean, "ENGRAM_DATA_DIR": str(tmp_path / "data"), "ENGRAM_CONFIG_DIR": str(tmp_path / "config"),
               "ENGRAM_LOG_DIR": str(tmp_path / "logs"), "ENGRAM_EMBED_THREADS": "2",
               "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
               "AWS_ACCESS_KEY_ID": "AKIDSESSION", "AWS_SECRET_ACCESS_KEY": SECRET}
        runs: list[subprocess.CompletedProcess[str]] = []

        def engram(*args: str) -> subprocess.CompletedProcess[str]:
            runs.append(cli_in_process(env, *args))
            return runs[-1]

        port = urlsplit(s3.endpoint).port
        in_endpoint = engram("workspace", "add", "e1", "--uri", "s3://team-mem/e",
                             "--endpoint", f"http://KEYID:{SECRET}@127.0.0.1:{port}")
        assert in_endpoint.returncode == 2 and "carries a user name or key" in in_endpoint.stderr
        in_uri = engram("workspace", "add", "e2", "--uri", f"s3://AKID:{SECRET}@team-mem/e")
        assert in_uri.returncode == 2 and "carries a user name or key" in in_uri.stderr
        added = engram("workspace", "add", "team", "--uri", "s3://team-mem/e",
                       "--endpoint", f"HTTP://127.0.0.1:{port}")
        assert added.returncode == 0, added.stderr  # before: "failed while opening it"
        assert engram("remember", "The staging database is rebuilt every night", "-w", "team").returncode == 0
        assert "rebuilt every night" in engram("search", "staging rebuilt", "-w", "team").stdout
        assert engram("workspace", "list").returncode == 0
        assert engram("workspace", "list", "--json").returncode == 0
        assert engram("status", "-w", "team").returncode == 0
        assert (tmp_path / "data" / "workspaces" / "team" / "location.json").is_file()
        written = files_holding_a_secret(tmp_path)
        s3.stop()
        assert engram("search", "staging", "-w", "team").returncode == 1
        assert "not reachable" in engram("workspace", "list").stdout
        s3.start()
        assert engram("workspace", "remove", "team").returncode == 0
    finally:
        s3.close()
    shown = [text for run in runs for text in (run.stdout, run.stderr)] + [caplog.text]
    assert not [text for text in shown if SECRET in text or "KEYID" in text or "AKID:" in text]
    assert written == files_holding_a_secret(tmp_path) == []


def files_holding_a_secret(root: Path) -> list[Path]:
    """The files under ``root`` (its models left out) that hold the secret or the URL's key id."""
    files = [p for p in root.rglob("*") if p.is_file() and "models" not in p.parts]
    return [p for p in files if SECRET.encode() in p.read_bytes() or b"KEYID" in p.read_bytes()]


# ------------------------------------------------------------------ 3: JSON nested past the stack


async def direct_call(engine: Engine, body: bytes) -> tuple[int, list[dict[str, Any]]]:
    """One POST to ``/engram/v1/call`` through the guard; (status, the JSON documents of the answer)."""
    guard = Guard(lambda *_: None, "tok", on_shutdown=lambda: None, direct=DirectCalls(engine))  # type: ignore[arg-type]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await guard({"type": "http", "method": "POST", "path": "/engram/v1/call",
                 "headers": [(b"host", b"127.0.0.1:1"), (b"authorization", b"Bearer tok")]}, receive, send)
    text = b"".join(m.get("body", b"") for m in sent[1:]).decode()
    return sent[0]["status"], [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.anyio
@pytest.mark.parametrize("depth", [33, 990, 100_000])
async def test_a_call_nested_too_deep_is_refused_clearly(engine: Engine, depth: int) -> None:
    nested = '{"tool": "search", "arguments": {"query": "x", "tags": ' + "[" * depth + "]" * depth + "}}"
    status, answer = await direct_call(engine, nested.encode())
    assert status == 400, "before: HTTP 500 from a RecursionError past 985 levels"
    assert answer[0]["error"]["refused"] and "nested at most 32 levels" in answer[0]["error"]["message"]
    status, answer = await direct_call(engine, b'{"tool": "status", "arguments": {}}')
    assert status == 200 and "output" in answer[-1], "the service answers on"


# ------------------------------------------------------------------ 4, 8: chat's tools


def test_chat_status_and_graph_scope_succeed_and_history_refuses_a_negative_offset(engine: Engine) -> None:
    engine.call("store", {"content": "We deploy on Tuesdays.", "title": "Deploy day", "project": "ops"})
    conversation = engine.conversations().new("probe")
    conversation.add("user", "When do we deploy?", turn=1)
    toolbox = ChatToolbox(lambda t, a: (lambda o: (o.text, o.result))(engine.call(t, a)), conversation,
                          max_chars=300)
    for name in ("status", "graph_scope"):
        outcome = toolbox.run(ToolCall(name, {}, ""))
        assert not outcome.error, outcome.text  # before: "unknown argument 'max_chars'"
        assert len(outcome.text) <= 300 + 40, "sized by the loop even without a max_chars of its own"
    assert set(toolbox.sized) == set(CHAT_READS) - {"status", "graph_scope"}
    negative = toolbox.run(ToolCall(HISTORY, {"number": 1, "offset": -1_000_000_000}, ""))
    assert negative.error and "accepts an integer of at least 0" in negative.text
    assert "When do we deploy?" in toolbox.run(ToolCall(HISTORY, {"number": 1, "offset": 0}, "")).text


# ------------------------------------------------------------------ 7: names with a trailing newline


def test_names_with_a_trailing_newline_are_refused(engine: Engine) -> None:
    assert is_workspace_name("nlws") and not is_workspace_name("nlws\n")
    with pytest.raises(InvalidArgument):
        engine.call("store", {"content": "x", "workspace": "nlws\n"})
    with pytest.raises(ValidationError):
        Settings.model_validate({"store": {"default_workspace": "nlws\n"}})
    with pytest.raises(InvalidArgument, match="not a conversation name"):
        engine.conversations().new("x", "chat-1\n")
    assert not (engine.paths.data_dir / "workspaces" / "nlws\n").exists()


# ------------------------------------------------------------------ 6: the opener


def test_the_opener_fills_file_and_line_once_and_keeps_a_dash_file_an_argument() -> None:
    from engram.app.desktop.opener import command_for

    def which(program: str) -> str:
        return f"/usr/bin/{program}"

    assert command_for("/notes/a{line}b.md", 3, "code --goto {file}:{line}", which=which) == (
        "/usr/bin/code", ["--goto", "/notes/a{line}b.md:3"], "code")
    assert command_for("-rf.md", 1, "emacsclient -n +{line} {file}", which=which) == (
        "/usr/bin/emacsclient", ["-n", "+1", "./-rf.md"], "emacsclient")
    assert command_for("/n/{file}.md", 2, "subl {file}:{line}", which=which)[1] == ["/n/{file}.md:2"]


@pytest.mark.parametrize("command", ["sh -c 'code --goto {file}'", "/bin/bash -c 'vim {file}'",
                                     "env EDITOR=x zsh -c 'x {file}'", "python3 -c 'import os' {file}",
                                     "cmd.exe /c start {file}", "pwsh -Command {file}"])
def test_a_shell_or_an_interpreter_as_the_opener_is_refused(command: str) -> None:
    with pytest.raises(ValidationError, match="name the editor itself"):
        Settings.model_validate({"desktop": {"open_with": command}})


def test_editors_that_take_a_line_are_still_accepted() -> None:
    for command in ("code --goto {file}:{line}", "emacsclient -n +{line} {file}", "/opt/zed/zed {file}:{line}",
                    "nvim +{line} {file}"):
        assert Settings.model_validate({"desktop": {"open_with": command}}).desktop.open_with == command


# ------------------------------------------------------------------ 9: the health check's challenges


@pytest.fixture
def recorder() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that records each challenge it is sent and answers without a proof."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.extend(parse_qs(urlsplit(self.path).query).get("challenge", []))
            body = b'{"status": "ok", "pid": 1, "proof": "0"}'
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_every_health_probe_sends_a_fresh_unguessable_challenge(recorder: tuple[str, list[str]]) -> None:
    """A proof answers one challenge; a squatter that collected proofs could replay one only to a client that
    asked the same challenge again. So clients never do: 200 probes, 200 different challenges of 32 URL-safe
    characters (24 random bytes)."""
    import re

    url, seen = recorder
    info = ServiceInfo(port=int(url.rsplit(":", 1)[1]), pid=1, version="x")
    with httpx2.Client(trust_env=False) as http:
        verdicts = {challenge(http, info, "the-token").value for _ in range(200)}
    assert verdicts == {"wrong"}, "a reply without the proof is never trusted"
    assert len(seen) == 200 and len(set(seen)) == 200
    assert all(re.fullmatch(CHALLENGE_PATTERN, c) and len(c) == 32 for c in seen)


def test_the_launchers_async_probe_also_sends_a_fresh_challenge_each_time(recorder: tuple[str, list[str]]) -> None:
    """The launcher probes with ``challenge_async``: it keeps the same property, and never repeats a challenge the
    sync probe sent either (one random source for both)."""
    import asyncio
    import re

    url, seen = recorder
    info = ServiceInfo(port=int(url.rsplit(":", 1)[1]), pid=1, version="x")

    async def probe() -> set[Proof]:
        async with httpx2.AsyncClient(trust_env=False) as http:
            return {(await challenge_async(http, info, "the-token")) for _ in range(100)}

    verdicts = asyncio.run(probe())
    with httpx2.Client(trust_env=False) as http:
        verdicts |= {challenge(http, info, "the-token") for _ in range(100)}
    assert {v.value for v in verdicts} == {"wrong"}
    assert len(seen) == 200 and len(set(seen)) == 200
    assert all(re.fullmatch(CHALLENGE_PATTERN, c) and len(c) == 32 for c in seen)


# ------------------------------------------------------------------ credentials in any URL


@pytest.mark.parametrize("key", ["model.hub_url", "helper.base_url", "chat.base_url", "helper.local.model",
                                 "chat.local_model", "model.chat_large"])
def test_a_settings_url_with_credentials_is_refused_without_repeating_them(tmp_path: Path, key: str) -> None:
    from engram.core.errors import SettingsError
    from engram.core.settings_file import set_value

    settings_file = tmp_path / "settings.toml"
    with pytest.raises(SettingsError) as refused:
        set_value(settings_file, key, f"https://KEYID:{SECRET}@models.example.com")
    assert "carries a user name or key" in refused.value.message
    assert SECRET not in refused.value.message and "KEYID" not in refused.value.message
    assert not settings_file.exists() or SECRET not in settings_file.read_text()
    set_value(settings_file, key, "https://models.example.com")  # without them it is taken


def test_a_model_link_with_credentials_is_refused_without_repeating_them() -> None:
    from engram.core.errors import ModelError
    from engram.core.manifest import resolve_model

    with pytest.raises(ModelError) as refused:
        resolve_model(f"https://hf_user:{SECRET}@huggingface.co/o/r/resolve/main/m.gguf")
    assert "carries a user name or key" in refused.value.message and SECRET not in refused.value.message
    assert resolve_model("https://huggingface.co/o/r/resolve/main/m.gguf").url is not None
    for link in (f"HTTPS://hf_user:{SECRET}@huggingface.co/o/r/m.gguf", f"Http://u:{SECRET}@h/m.gguf"):
        with pytest.raises(ModelError) as refused:  # the scheme in any case is a link
            resolve_model(link)
        assert "carries a user name or key" in refused.value.message and SECRET not in refused.value.message
    with pytest.raises(ModelError) as refused:  # not a model at all: the refusal still hides what may be a key
        resolve_model(f"ftp://u:{SECRET}@host/m.bin")
    assert SECRET not in refused.value.message


def test_a_model_path_with_an_at_sign_is_still_a_model_setting(tmp_path: Path) -> None:
    """Only a link is checked for credentials: a folder such as ``models@2026`` is a path, not a user name."""
    from engram.core.settings_file import set_value

    set_value(tmp_path / "settings.toml", "helper.local.model", "/srv/models@2026/m.gguf")
    assert "models@2026" in (tmp_path / "settings.toml").read_text()
