"""Which files an ingest reads, and the reason for every file it does not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.core.errors import IngestError
from engram.core.ingest.listing import Skip, list_files, read_text

from .conftest import write_tree


def listed(root: Path, **kw: object) -> tuple[list[str], dict[str, str]]:
    opts = {"max_bytes": 10_000, "use_gitignore": True, "exclude": []}
    opts.update(kw)
    listing = list_files(root, **opts)  # type: ignore[arg-type]
    files = sorted(Path(f.source).relative_to(root.resolve()).as_posix() for f in listing.files)
    skipped = {Path(s.path).relative_to(root).as_posix(): s.reason for s in listing.skipped}
    return files, skipped


def test_gitignore_at_every_level_is_respected(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        ".gitignore": "*.log\nsecret/\n",
        "a.md": "# A", "debug.log": "x", "secret/key.txt": "k",
        "pkg/.gitignore": "generated.py\n", "pkg/mod.py": "x = 1", "pkg/generated.py": "y = 2",
        ".git/config": "[core]",
    })
    files, skipped = listed(tmp_path)
    assert files == [".gitignore", "a.md", "pkg/.gitignore", "pkg/mod.py"]
    assert skipped["debug.log"].startswith("ignored")
    assert skipped["secret"].startswith("ignored folder")
    assert skipped["pkg/generated.py"].startswith("ignored")
    assert ".git" not in skipped and ".git/config" not in skipped


def test_gitignore_can_be_switched_off_and_extra_patterns_added(tmp_path: Path) -> None:
    write_tree(tmp_path, {".gitignore": "*.log\n", "debug.log": "x", "notes.tmp": "t", "a.md": "a"})
    files, _ = listed(tmp_path, use_gitignore=False, exclude=["*.tmp"])
    assert files == [".gitignore", "a.md", "debug.log"]


def test_vendored_folders_are_skipped_as_a_whole_with_a_reason(tmp_path: Path) -> None:
    write_tree(tmp_path, {"node_modules/lib/index.js": "x", ".venv/lib/a.py": "x", "src/app.py": "x"})
    files, skipped = listed(tmp_path)
    assert files == ["src/app.py"]
    assert skipped == {"node_modules": "vendored or generated folder", ".venv": "vendored or generated folder"}


def test_oversized_and_binary_files_are_skipped_with_reasons(tmp_path: Path) -> None:
    write_tree(tmp_path, {"big.txt": "x" * 20_000, "logo.png": b"\x89PNG", "ok.txt": "fine"})
    files, skipped = listed(tmp_path)
    assert files == ["ok.txt"]
    assert skipped["big.txt"].startswith("larger than ingest.max_file_bytes")
    assert skipped["logo.png"] == "binary file type"


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_links_leading_outside_the_named_folder_are_skipped(tmp_path: Path) -> None:
    outside = write_tree(tmp_path / "outside", {"secret.txt": "s"})
    root = write_tree(tmp_path / "root", {"a.txt": "a"})
    (root / "link.txt").symlink_to(outside / "secret.txt")
    files, skipped = listed(root)
    assert files == ["a.txt"]
    assert "outside the folder you named" in skipped["link.txt"]


def test_a_single_file_can_be_named(tmp_path: Path) -> None:
    write_tree(tmp_path, {"one.md": "# One", "two.md": "# Two"})
    listing = list_files(tmp_path / "one.md", max_bytes=1000, use_gitignore=True, exclude=[])
    assert [f.path.name for f in listing.files] == ["one.md"]


def test_a_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="does not exist"):
        list_files(tmp_path / "nope", max_bytes=1000, use_gitignore=True, exclude=[])


def test_reading_skips_binary_content_and_undecodable_text(tmp_path: Path) -> None:
    write_tree(tmp_path, {"nul.txt": b"abc\x00def", "latin1.txt": "caf\xe9".encode("latin-1"),
                          "ok.txt": "line one\r\nline two\r\n"})
    listing = list_files(tmp_path, max_bytes=1000, use_gitignore=True, exclude=[])
    by_name = {f.path.name: read_text(f) for f in listing.files}
    assert isinstance(by_name["nul.txt"], Skip) and by_name["nul.txt"].reason == "binary content"
    assert isinstance(by_name["latin1.txt"], Skip) and "not UTF-8" in by_name["latin1.txt"].reason
    assert by_name["ok.txt"] == "line one\nline two\n"
