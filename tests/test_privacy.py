"""Private by default: Engram's folders are 0700 and its files 0600 from the first write on (POSIX)."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from engram.mcp.service_files import read_info

from .conftest import ENGRAM, wait_for

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions (Windows folders are per-user)")


def open_to_others(*folders: Path) -> list[str]:
    """Every folder or file under ``folders`` that anyone but its owner may read, write or enter."""
    found = []
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            mode = stat.S_IMODE(path.lstat().st_mode)
            if not path.is_symlink() and mode & 0o077:
                found.append(f"{path.relative_to(folder.parent)} {oct(mode)}")
    return found


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """Like conftest's, but Engram builds its own model file here: every file in its folders is its own."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    return {**clean, "ENGRAM_DATA_DIR": str(tmp_path / "data"), "ENGRAM_CONFIG_DIR": str(tmp_path / "config"),
            "ENGRAM_LOG_DIR": str(tmp_path / "logs"), "ENGRAM_EMBED_THREADS": "2"}


@pytest.mark.slow
def test_everything_engram_writes_is_private_from_the_first_write(env: dict[str, str], tmp_path: Path) -> None:
    # A typical umask: without Engram's own care, new folders would be 0755 and LanceDB's files 0644.
    run = lambda *args: subprocess.run([*ENGRAM, *args], env=env, capture_output=True, text=True, timeout=300,  # noqa: E731
                                       preexec_fn=lambda: os.umask(0o022))
    remembered = run("remember", "the staging password hint is in the blue binder")
    assert remembered.returncode == 0, remembered.stderr
    assert run("config", "set", "search.limit", "7").returncode == 0
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nsome notes")
    assert run("ingest", str(notes)).returncode == 0
    service = subprocess.Popen([*ENGRAM, "service"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               preexec_fn=lambda: os.umask(0o022))
    data = tmp_path / "data"
    wait_for(lambda: read_info(data), 60, "the service to start")
    service.terminate()
    service.wait(timeout=30)
    assert (data / "workspaces" / "default" / "lance").is_dir() and any((tmp_path / "logs").iterdir())
    assert open_to_others(data, tmp_path / "config", tmp_path / "logs") == []


@pytest.mark.slow
def test_folders_an_older_version_left_open_are_closed_at_the_next_start(env: dict[str, str],
                                                                         tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "workspaces").mkdir(parents=True)
    data.chmod(0o755)
    (tmp_path / "config").mkdir(mode=0o755)
    status = subprocess.run([*ENGRAM, "config", "list"], env=env, capture_output=True, text=True, timeout=120)
    assert status.returncode == 0, status.stderr
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "config").stat().st_mode) == 0o700


def test_a_folder_of_another_owner_or_a_missing_one_is_left_alone(tmp_path: Path) -> None:
    from engram.core.privacy import close_folder

    close_folder(tmp_path / "missing")  # no error
    if os.getuid() != 0:
        pytest.skip("giving a folder to another owner needs root")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    os.chown(shared, 65534, 65534)  # nobody
    close_folder(shared)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755
