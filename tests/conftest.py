"""Shared fixtures: real model, real LanceDB folders in tmp dirs, and a fake embedder at the seam."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

from engram.core import Engine, Paths, Settings
from engram.core.embedding.bundled import ensure_bundled_model
from engram.core.embedding.llama_embedder import LlamaEmbedder
from engram.core.manifest import model_entry
from engram.mcp.service_files import read_info
from standins.embedder import HashingEmbedder

__all__ = ["HashingEmbedder"]

FIXTURES = Path(__file__).parent / "fixtures"
# The desktop tests drive a real Qt window without a screen (CI machines have none).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's home folder is its temporary folder: what it ingests lies under the user's home (the default
    of ingest.allowed_roots), as a user's files do, and nothing a test starts touches the real home."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))
    return tmp_path


@pytest.fixture(scope="session")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled embedding GGUF, built once per test session by the real converter."""
    return ensure_bundled_model(model_entry("all-minilm-l6-v2"), tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def real_embedder(model_file: Path) -> Iterator[LlamaEmbedder]:
    embedder = LlamaEmbedder(model_file, model_id="all-minilm-l6-v2", dimensions=384, threads=2)
    yield embedder
    embedder.close()


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return Paths(data_dir=tmp_path / "data", config_dir=tmp_path / "config", log_dir=tmp_path / "logs")


@pytest.fixture
def fake_embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture
def engine(paths: Paths, fake_embedder: HashingEmbedder) -> Iterator[Engine]:
    """An engine on a fresh data folder, with the fake embedder at the seam."""
    with Engine(paths, Settings(), embedder=fake_embedder) as eng:
        yield eng


@pytest.fixture
def real_engine(paths: Paths, real_embedder: LlamaEmbedder) -> Iterator[Engine]:
    """An engine on a fresh data folder with the real bundled model."""
    with Engine(paths, Settings(), embedder=real_embedder) as eng:
        yield eng


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create ``files`` (relative path → text or bytes) under ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> dict[str, object] | None:
    """Async tests of the desktop app run on a qasync loop: the Qt event loop driving asyncio, as in the app."""
    if item.path.name != "test_desktop.py":
        return None

    def qt_loop() -> object:
        import qasync
        from PySide6.QtWidgets import QApplication

        return qasync.QEventLoop(QApplication.instance() or QApplication([]))

    return {"qasync": qt_loop}


class MemoryKeyring(KeyringBackend):
    """An in-memory keyring for tests (never the user's real one)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.items.pop((service, username), None) is None:
            raise PasswordDeleteError("no such password")  # as the real backends do


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    yield ring
    keyring.set_keyring(previous)


# ------------------------------------------------------------------ the command line in this process


def cli_in_process(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``engram ARGS`` through the CLI's entry function in this process (``engram.app.cli.run``), with ``env`` as
    its environment and ``stdin`` as its standard input; the result reads as a finished process's. Most CLI tests
    use it (a process start costs seconds of imports); a few run the real ``engram`` process."""
    import contextlib
    import io

    from engram.app.cli import run

    out, err = io.StringIO(), io.StringIO()
    previous_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin or "")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = run(list(args), dict(env))
            except SystemExit as exc:  # argparse's refusals and --help
                status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.stdin = previous_stdin
    return subprocess.CompletedProcess(["engram", *args], status, out.getvalue(), err.getvalue())


# ------------------------------------------------------------------ real processes

ENGRAM = [sys.executable, "-m", "engram.app"]


def wait_for(predicate: Callable[[], object], timeout: float, what: str) -> object:
    """Poll ``predicate`` until it is truthy, failing after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def env(tmp_path: Path, model_file: Path) -> dict[str, str]:
    """The environment of an `engram` process on this test's folders (the bundled model already in place)."""
    models = tmp_path / "data" / "models"
    models.mkdir(parents=True)
    shutil.copy(model_file, models / model_file.name)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    return {**clean, "ENGRAM_DATA_DIR": str(tmp_path / "data"), "ENGRAM_CONFIG_DIR": str(tmp_path / "config"),
            "ENGRAM_LOG_DIR": str(tmp_path / "logs"), "ENGRAM_EMBED_THREADS": "2"}


@pytest.fixture
def stop_services(env: dict[str, str]) -> Iterator[None]:
    yield
    info = read_info(Path(env["ENGRAM_DATA_DIR"]))
    if info:
        try:
            os.kill(info.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


@pytest.fixture
def service(env: dict[str, str], stop_services: None) -> Iterator[subprocess.Popen[bytes]]:
    """A headless `engram service` on this test's folders, announced and answering."""
    proc = subprocess.Popen([*ENGRAM, "service"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    data = Path(env["ENGRAM_DATA_DIR"])
    wait_for(lambda: read_info(data) and read_info(data).pid == proc.pid, 60, "the service to announce itself")
    yield proc
    proc.terminate()
    proc.wait(timeout=30)


# ------------------------------------------------------------------ the desktop app


@pytest.fixture
def desktop_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memory_keyring: MemoryKeyring) -> Path:
    """A home folder of the test's own for the desktop app (editor configs and the login entry land here), and
    an in-memory keyring: a desktop test never touches the person's real ones."""
    from .desktop_support import own_home

    return own_home(tmp_path, monkeypatch)


@pytest.fixture
def environ(paths: Paths, desktop_home: Path) -> dict[str, str]:
    from .desktop_support import desktop_environ

    return desktop_environ(paths, desktop_home)


@pytest.fixture
def make_desktop(qapp: Any, paths: Paths, environ: dict[str, str], real_embedder: Any) -> Iterator[Any]:
    """Build real desktops (``make_desktop(serve=False, tray=True, env=None)``) on the real embedding model."""
    from .desktop_support import desktops

    with desktops(paths, environ, real_embedder) as build:
        yield build



# ------------------------------------------------------------------ scheduling

#: The files that take longest, started first: with `--dist loadfile --no-loadscope-reorder` (scripts/test.sh) a
#: worker takes whole files in collection order, so a long file collected last would end the run on one worker
#: while the other waits (xdist's own order, by number of tests, put the one-test bundle build last).
LONGEST_FIRST = ("test_bundle.py", "test_benchmark.py", "test_shared_workspaces.py", "test_reliability.py",
                 "test_mcp_processes.py", "test_fuzz.py", "test_terminal.py", "test_desktop.py",
                 "test_model_downloads.py", "test_inspector.py", "test_recall_model.py", "test_cli_service.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONGEST_FIRST)))  # stable: the rest keep their order
