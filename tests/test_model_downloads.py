"""Model downloads against a real local HTTP server: verified, resumable, atomic, and clear when they fail."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engram.core import Engine, Paths, Settings
from engram.core.errors import ChecksumMismatch, ModelError
from engram.core.events import ModelDownloaded, ModelDownloadFailed, ModelDownloadProgress
from engram.core.manifest import ModelEntry, model_entry, resolve_model
from engram.core.models.download import DiskFull, NetworkError, ServerError, download
from engram.core.models.files import ModelFiles

from .conftest import HashingEmbedder
from .model_server import ModelServer

SMOL = model_entry("smollm2-135m-instruct")


@pytest.fixture(scope="module")
def gguf() -> bytes:
    """A small real GGUF (SmolLM2-135M-Instruct, from its pinned PyPI package)."""
    path = ModelFiles(Path("/nonexistent")).path_for(SMOL)
    return path.read_bytes()


@pytest.fixture
def server(gguf: bytes) -> ModelServer:
    with ModelServer({SMOL.file: gguf, "broken.gguf": gguf[: len(gguf) // 3] + b"\0" * 64}) as srv:
        yield srv


def by_revision(server: ModelServer, file: str = SMOL.file) -> ModelEntry:
    """The test model as a pinned-by-revision manifest entry on the local 'hub'."""
    return dataclasses.replace(SMOL, id="local-test", sha256="", packaged_in=None, repository="acme/smol",
                               revision="0123456789abcdef0123456789abcdef01234567", file=file)


@pytest.mark.slow
def test_a_pinned_download_is_verified_and_lands_atomically(tmp_path: Path, server: ModelServer, gguf: bytes) -> None:
    events = []
    got = download(f"{server.url}/files/{SMOL.file}", tmp_path / SMOL.file, expected_sha256=SMOL.sha256,
                   progress=events.append)
    assert got.sha256 == SMOL.sha256 == hashlib.sha256(gguf).hexdigest() and got.resumed_from == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [SMOL.file]
    assert events and events[-1].done == events[-1].total == len(gguf)
    assert all(a.done <= b.done for a, b in zip(events, events[1:]))
    assert events[-1].bytes_per_s > 0


@pytest.mark.slow
def test_pinned_by_revision_is_verified_against_the_hubs_hash_and_recorded(tmp_path: Path,
                                                                          server: ModelServer) -> None:
    files = ModelFiles(tmp_path, hub_url=server.url)
    entry = by_revision(server)
    assert entry.pinning == "revision" and files.status(entry).pinning == (
        "pinned by revision only (hash recorded at first download)")
    got = files.download(entry)
    assert got.hub_sha256 == SMOL.sha256
    pins = json.loads((tmp_path / "pins.json").read_text())
    assert pins["local-test"]["sha256"] == SMOL.sha256 and pins["local-test"]["revision"] == entry.revision
    assert files.verify(entry) == tmp_path / SMOL.file
    assert [r[0] for r in server.requests] == [f"/acme/smol/resolve/{entry.revision}/{SMOL.file}", f"/cdn/{SMOL.file}"]


def test_a_hub_file_with_another_hash_is_refused_and_deleted(tmp_path: Path, server: ModelServer) -> None:
    files = ModelFiles(tmp_path, hub_url=server.url)
    entry = dataclasses.replace(by_revision(server), sha256="0" * 64)
    with pytest.raises(ChecksumMismatch, match="so the download was deleted; nothing was saved"):
        files.download(entry)
    assert list(tmp_path.iterdir()) == []


def test_a_re_download_the_hub_cannot_verify_keeps_the_verified_model(tmp_path: Path, server: ModelServer,
                                                                       gguf: bytes) -> None:
    files = ModelFiles(tmp_path, hub_url=server.url)
    entry = by_revision(server)
    files.download(entry)
    pins = (tmp_path / "pins.json").read_bytes()
    record = (tmp_path / "verified.json").read_bytes()
    server.linked_etag = False  # the hub stops vouching for the file
    with pytest.raises(ChecksumMismatch) as refused:
        files.download(entry)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["pins.json", "verified.json", SMOL.file])
    assert (tmp_path / SMOL.file).read_bytes() == gguf and (tmp_path / "pins.json").read_bytes() == pins
    assert (tmp_path / "verified.json").read_bytes() == record
    assert files.verify(entry) == tmp_path / SMOL.file
    assert refused.value.message == (
        f"The hub sent no SHA256 (X-Linked-Etag) for {SMOL.name} at {server.url}/acme/smol/resolve/{entry.revision}/"
        f"{SMOL.file}, so the download cannot be verified and was not kept; the copy already at "
        f"{tmp_path / SMOL.file} is untouched.")


def test_an_unverifiable_first_download_keeps_nothing(tmp_path: Path, server: ModelServer) -> None:
    files = ModelFiles(tmp_path, hub_url=server.url)
    server.linked_etag = False
    with pytest.raises(ChecksumMismatch, match=r"cannot be verified and was not kept; nothing was saved\.$"):
        files.download(by_revision(server))
    assert list(tmp_path.iterdir()) == []


def test_a_file_gone_from_the_hub_keeps_the_verified_model_and_its_record(tmp_path: Path, server: ModelServer,
                                                                         gguf: bytes) -> None:
    files = ModelFiles(tmp_path, hub_url=server.url)
    entry = by_revision(server)
    files.download(entry)
    pins = (tmp_path / "pins.json").read_bytes()
    record = (tmp_path / "verified.json").read_bytes()
    del server.files[SMOL.file]
    with pytest.raises(ServerError, match=re.escape("was not found (HTTP 404)")):
        files.download(entry)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["pins.json", "verified.json", SMOL.file])
    assert (tmp_path / SMOL.file).read_bytes() == gguf and (tmp_path / "pins.json").read_bytes() == pins
    assert (tmp_path / "verified.json").read_bytes() == record


@pytest.mark.parametrize(("path", "part_past_the_end", "error", "message", "part_kept"), [
    ("/files/broken.gguf", False, ChecksumMismatch, "so the download was deleted; the copy already at", False),
    ("/files/missing.gguf", False, ServerError, "was not found (HTTP 404)", False),
    ("/error/503", False, ServerError, "answered HTTP 503", False),
    (f"/drop/{SMOL.file}", False, NetworkError, "Run it again to resume", True),
    (f"/files/{SMOL.file}", True, ServerError, "HTTP 416", False),
])
def test_a_failed_download_never_replaces_or_removes_a_good_file(tmp_path: Path, server: ModelServer, gguf: bytes,
                                                                path: str, part_past_the_end: bool, error: type,
                                                                message: str, part_kept: bool) -> None:
    target = tmp_path / SMOL.file
    target.write_bytes(gguf)
    if part_past_the_end:
        target.with_name(target.name + ".part").write_bytes(gguf + b"extra")
    with pytest.raises(error, match=re.escape(message)):
        download(server.url + path, target, expected_sha256=SMOL.sha256)
    assert target.read_bytes() == gguf
    assert target.with_name(target.name + ".part").exists() is part_kept


def test_a_download_that_must_be_verified_and_cannot_be_keeps_only_the_old_file(tmp_path: Path, server: ModelServer,
                                                                               gguf: bytes) -> None:
    target = tmp_path / SMOL.file
    target.write_bytes(gguf)
    with pytest.raises(ChecksumMismatch, match="the copy already at .* is untouched"):
        download(f"{server.url}/files/broken.gguf", target, expected_sha256=None, require_sha256=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [SMOL.file] and target.read_bytes() == gguf


def test_an_interrupted_download_resumes_with_a_range_request(tmp_path: Path, server: ModelServer,
                                                              gguf: bytes) -> None:
    target = tmp_path / SMOL.file
    with pytest.raises(NetworkError, match="Run it again to resume"):
        download(f"{server.url}/drop/{SMOL.file}", target, expected_sha256=SMOL.sha256)
    part = target.with_name(target.name + ".part")
    kept = part.stat().st_size
    assert not target.exists() and 0 < kept < len(gguf)
    got = download(f"{server.url}/files/{SMOL.file}", target, expected_sha256=SMOL.sha256)
    assert got.resumed_from == kept
    assert server.requests[-1] == (f"/files/{SMOL.file}", f"bytes={kept}-")
    assert got.sha256 == SMOL.sha256 and not part.exists()


def test_a_range_past_the_end_is_refused_and_the_partial_file_removed(tmp_path: Path, server: ModelServer,
                                                                    gguf: bytes) -> None:
    target = tmp_path / SMOL.file
    target.with_name(target.name + ".part").write_bytes(gguf + b"extra")
    with pytest.raises(ServerError, match="HTTP 416"):
        download(f"{server.url}/files/{SMOL.file}", target, expected_sha256=SMOL.sha256)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("path", "error", "message"), [
    ("/files/missing.gguf", ServerError, "was not found (HTTP 404)"),
    ("/error/503", ServerError, "answered HTTP 503"),
    ("/error/500", ServerError, "answered HTTP 500"),
])
def test_server_failures_have_their_own_message_and_leave_nothing(tmp_path: Path, server: ModelServer, path: str,
                                                                  error: type, message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        download(server.url + path, tmp_path / "m.gguf", expected_sha256=SMOL.sha256)
    assert not (tmp_path / "m.gguf").exists()


def test_a_wrong_file_is_deleted_not_kept(tmp_path: Path, server: ModelServer) -> None:
    with pytest.raises(ChecksumMismatch, match="not the expected"):
        download(f"{server.url}/files/broken.gguf", tmp_path / "m.gguf", expected_sha256=SMOL.sha256)
    assert list(tmp_path.iterdir()) == []


def test_an_unreachable_host_says_the_computer_seems_offline_and_keeps_a_partial_file(tmp_path: Path) -> None:
    part = tmp_path / "m.gguf.part"
    part.write_bytes(b"x" * 1000)
    with pytest.raises(NetworkError) as refused:
        download("http://127.0.0.1:9/m.gguf", tmp_path / "m.gguf", expected_sha256=None, timeout=2)
    assert refused.value.title == "Offline"
    assert refused.value.message.startswith("Could not reach 127.0.0.1 to download m.gguf: this computer seems to "
                                            "be offline")
    assert "The 1,000 bytes already downloaded are kept" in refused.value.message and part.stat().st_size == 1000


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux) to run out of space for real")
def test_a_full_disk_says_so(tmp_path: Path, server: ModelServer) -> None:
    def full(path: Path, mode: str):  # the OS's own always-full device at the file seam
        return open("/dev/full", "wb", buffering=0)

    with pytest.raises(DiskFull, match="No space left"):
        download(f"{server.url}/files/{SMOL.file}", tmp_path / SMOL.file, expected_sha256=SMOL.sha256, sink=full)
    assert not (tmp_path / SMOL.file).exists()


def test_a_proxy_from_the_environment_is_used(tmp_path: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", server.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    got = download(f"http://models.example.invalid/files/{SMOL.file}", tmp_path / SMOL.file,
                   expected_sha256=SMOL.sha256)
    assert got.sha256 == SMOL.sha256
    assert server.proxied == [f"http://models.example.invalid/files/{SMOL.file}"]


def test_custom_models_download_unverified_and_say_so(tmp_path: Path, server: ModelServer) -> None:
    entry = resolve_model(f"{server.url}/files/{SMOL.file}")
    files = ModelFiles(tmp_path)
    assert entry.pinning == "none" and entry.custom
    got = files.download(entry)
    assert got.path.exists()
    assert files.status(entry).pinning == "unverified" and "without verification" in files.status(entry).note
    assert files.verify(entry) == got.path
    assert files.remove(entry) and not got.path.exists()


def test_custom_models_of_one_file_name_from_two_places_never_overwrite_each_other(tmp_path: Path,
                                                                                     server: ModelServer) -> None:
    files = ModelFiles(tmp_path, hub_url=server.url)
    one, other = resolve_model("alice/models/model.gguf"), resolve_model("bob/models/model.gguf")
    link = resolve_model(f"{server.url}/files/model.gguf")
    paths = {files.path_for(e) for e in (one, other, link)}
    assert len(paths) == 3 and files.path_for(one) == tmp_path / "alice--models" / "model.gguf"
    assert files.path_for(link).parent.parent == tmp_path / "links"
    got = files.download(resolve_model(f"{server.url}/files/{SMOL.file}"))
    assert got.path.parent.parent == tmp_path / "links" and got.path.name == SMOL.file
    (tmp_path / "model.gguf").write_bytes(b"GGUF from an earlier version")  # kept flat before: still used
    assert files.path_for(one) == files.path_for(other) == tmp_path / "model.gguf"
    (tmp_path / "alice--models").mkdir()
    (tmp_path / "alice--models" / "model.gguf").write_bytes(b"GGUF")
    assert files.path_for(one) == tmp_path / "alice--models" / "model.gguf"


def test_model_specs_are_resolved_or_refused(tmp_path: Path) -> None:
    assert resolve_model("qwen3.5-4b").pinning == "hash"
    assert resolve_model("qwen3.5-35b-a3b").pinning == "revision"
    hub = resolve_model("owner/repo/sub/model.Q4.gguf")
    assert (hub.repository, hub.file, hub.name, hub.revision) == ("owner/repo", "sub/model.Q4.gguf", "model.Q4.gguf",
                                                                  "main")
    assert hub.download_url("https://hub.example") == "https://hub.example/owner/repo/resolve/main/sub/model.Q4.gguf"
    local = tmp_path / "mine.gguf"
    local.write_bytes(b"GGUF")
    assert resolve_model(str(local)).local_path == str(local.resolve())
    with pytest.raises(ModelError, match="names no model"):
        resolve_model("not a model")


def test_a_missing_or_unverified_model_is_never_loaded(tmp_path: Path, server: ModelServer, gguf: bytes) -> None:
    files = ModelFiles(tmp_path, hub_url=server.url)
    entry = by_revision(server)
    with pytest.raises(ModelError, match="engram models download local-test"):
        files.verify(entry)
    (tmp_path / SMOL.file).write_bytes(gguf)  # copied by hand: never verified against the hub
    with pytest.raises(ModelError, match="never verified"):
        files.verify(entry)


@pytest.mark.slow
def test_cli_downloads_with_progress_and_lists_the_pinning(tmp_path: Path, server: ModelServer) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_DATA_DIR=str(tmp_path / "data"), ENGRAM_CONFIG_DIR=str(tmp_path / "cfg"))
    url = f"{server.url}/files/{SMOL.file}"
    out = subprocess.run([sys.executable, "-m", "engram.app", "models", "download", url], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "is UNVERIFIED (custom model)" in out.stdout
    assert " MB/s" in out.stderr and "MB" in out.stderr.splitlines()[-1]
    listing = subprocess.run([sys.executable, "-m", "engram.app", "models", "list"], env=env, capture_output=True,
                             text=True, timeout=60)
    lines = {line.split()[0]: line for line in listing.stdout.splitlines()[1:]}
    assert "pinned by revision only" in lines["qwen3.5-35b-a3b"] and "pinned by hash" in lines["qwen3.5-4b"]
    missing = subprocess.run([sys.executable, "-m", "engram.app", "models", "verify", "qwen3.5-4b"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1 and "engram models download qwen3.5-4b" in missing.stderr


@pytest.mark.slow
def test_a_download_through_the_engine_tells_its_progress_and_outcome(paths: Paths, server: ModelServer,
                                                                      gguf: bytes) -> None:
    settings = Settings.model_validate({"model": {"hub_url": server.url}})
    with Engine(paths, settings, embedder=HashingEmbedder()) as engine:
        seen: list[object] = []
        engine.subscribe(seen.append)
        engine.download_model(by_revision(server))
        with pytest.raises(ChecksumMismatch):
            engine.download_model(dataclasses.replace(by_revision(server), id="other", sha256="0" * 64))
    progress = [e for e in seen if isinstance(e, ModelDownloadProgress)]
    assert progress and progress[0].model == "local-test" and progress[-1].done == len(gguf)
    ends = [e for e in seen if isinstance(e, (ModelDownloaded, ModelDownloadFailed))]
    assert ends[0] == ModelDownloaded("local-test", len(gguf))
    assert isinstance(ends[1], ModelDownloadFailed) and ends[1].model == "other"
    assert ends[1].title == "Model file damaged" and "is untouched" in ends[1].message


@pytest.mark.slow
def test_the_first_chat_downloads_its_missing_model_with_the_progress_in_the_chat(paths: Paths, server: ModelServer,
                                                                                   gguf: bytes) -> None:
    from engram.core.chat.events import ChatNote, ModelDownload

    settings = Settings.model_validate({"model": {"hub_url": server.url},
                                        "chat": {"local_model": f"acme/smol/{SMOL.file}", "max_tokens": 64,
                                                 "n_ctx": 2048}})
    with Engine(paths, settings, embedder=HashingEmbedder()) as engine:
        engine.call("store", {"content": "We deploy on Tuesdays."})
        seen: list[object] = []
        turn = engine.chat("When do we deploy?", on_event=seen.append)
        downloads = [e for e in seen if isinstance(e, ModelDownload)]
        assert downloads and downloads[-1].done == len(gguf) == downloads[-1].total
        notes = [e.text for e in seen if isinstance(e, ChatNote)]
        assert notes[0].startswith("Downloading ") and "for chat, once; it stays on this computer" in notes[0]
        # SmolLM2's template writes no tool calls: it chats without tools and says which setting to change.
        assert turn.ended == "no_tools" and "chat.tool_format" in notes[1] and turn.answer
        seen.clear()
        engine.chat("And on holidays?", conversation=turn.conversation, on_event=seen.append)
        assert not [e for e in seen if isinstance(e, ModelDownload)], "downloaded once"
