"""A model file is hashed when it arrives or when its identity changes, and checked by identity otherwise."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from engram.core.embedding.bundled import ensure_bundled_model
from engram.core.errors import ChecksumMismatch
from engram.core.manifest import ModelEntry, model_entry
from engram.core.models import verified
from engram.core.models.files import ModelFiles

from .model_server import ModelServer

SMOL = model_entry("smollm2-135m-instruct")
CONTENT = b"GGUF" + bytes(range(256)) * 64


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every file the verification record hashes, in order (the real hash still runs)."""
    seen: list[Path] = []
    real = verified.sha256_file

    def counting(path: Path) -> str:
        seen.append(path)
        return real(path)

    monkeypatch.setattr(verified, "sha256_file", counting)
    return seen


def fake_model(folder: Path, content: bytes = CONTENT, model_id: str = "fake") -> ModelEntry:
    """A small file under ``folder`` and a manifest entry pinned by hash to ``content``."""
    (folder / f"{model_id}.gguf").write_bytes(content)
    return dataclasses.replace(SMOL, id=model_id, file=f"{model_id}.gguf", packaged_in=None,
                               sha256=hashlib.sha256(content).hexdigest(), size=len(content))


def records(folder: Path) -> dict:
    return json.loads((folder / "verified.json").read_text(encoding="utf-8"))


def test_qwen3_5_4b_is_pinned_by_hash_with_its_exact_size_and_revision() -> None:
    entry = model_entry("qwen3.5-4b")
    assert (entry.repository, entry.revision, entry.file) == (
        "unsloth/Qwen3.5-4B-GGUF", "e87f176479d0855a907a41277aca2f8ee7a09523", "Qwen3.5-4B-Q4_K_M.gguf")
    assert entry.sha256 == "00fe7986ff5f6b463e62455821146049db6f9313603938a70800d1fb69ef11a4"
    assert entry.size == 2_740_937_888 and entry.size_exact and entry.pinning == "hash"


def test_the_35b_stays_pinned_by_revision_only() -> None:
    entry = model_entry("qwen3.5-35b-a3b")
    assert entry.pinning == "revision" and not entry.sha256
    assert entry.revision == "bc014a17be43adabd7066b7a86075ff935c6a4e2"


def test_a_second_verify_checks_the_identity_not_the_bytes(tmp_path: Path, hashes: list[Path]) -> None:
    entry = fake_model(tmp_path)
    files = ModelFiles(tmp_path)
    path = tmp_path / entry.file
    assert files.verify(entry) == path and hashes == [path]
    for _ in range(20):
        assert files.verify(entry) == path
    assert hashes == [path]
    st = path.stat()
    record = records(tmp_path)["fake"]
    assert {k: v for k, v in record.items() if k != "verified_at"} == {
        "path": str(path), "sha256": entry.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino,
        "device": st.st_dev, "ctime_ns": st.st_ctime_ns if os.name != "nt" else 0}


@pytest.mark.skipif(os.name == "nt", reason="file modes are POSIX")
def test_the_record_is_private(tmp_path: Path) -> None:
    entry = fake_model(tmp_path)
    ModelFiles(tmp_path).verify(entry)
    assert (tmp_path / "verified.json").stat().st_mode & 0o777 == 0o600


def test_a_same_size_change_with_a_new_mtime_is_refused_and_its_record_dropped(tmp_path: Path,
                                                                              hashes: list[Path]) -> None:
    entry = fake_model(tmp_path)
    files = ModelFiles(tmp_path)
    path = files.verify(entry)
    before = path.stat()
    changed = bytearray(CONTENT)
    changed[100] ^= 0xFF
    with open(path, "r+b") as handle:  # in place: same inode, same size
        handle.write(bytes(changed))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    actual = hashlib.sha256(bytes(changed)).hexdigest()
    with pytest.raises(ChecksumMismatch) as refused:
        files.verify(entry)
    assert refused.value.message == (
        f"{path} has SHA256 {actual}, not {entry.sha256}: it changed since it was verified. Remove it "
        f"(`engram models remove fake`) and download it again.")
    assert len(hashes) == 2 and "fake" not in records(tmp_path)
    with pytest.raises(ChecksumMismatch):
        files.verify(entry)  # still refused: a refusal records nothing
    assert len(hashes) == 3


@pytest.mark.parametrize("size_exact", [True, False])
def test_a_truncated_file_is_refused(tmp_path: Path, hashes: list[Path], size_exact: bool) -> None:
    entry = dataclasses.replace(fake_model(tmp_path), size_exact=size_exact)
    files = ModelFiles(tmp_path)
    path = files.verify(entry)
    with open(path, "r+b") as handle:
        handle.truncate(1000)
    # An exact size in the manifest refuses it without reading it; otherwise its new identity has it hashed.
    refusal = (rf"has 1,000 bytes, not the pinned {len(CONTENT):,}: it is incomplete" if size_exact
               else r"has SHA256 \w+, not \w+: it changed since it was verified")
    with pytest.raises(ChecksumMismatch, match=refusal):
        files.verify(entry)
    assert len(hashes) == (1 if size_exact else 2) and "fake" not in records(tmp_path)


def test_a_file_replaced_with_its_size_and_mtime_restored_is_re_hashed(tmp_path: Path, hashes: list[Path]) -> None:
    entry = fake_model(tmp_path)
    files = ModelFiles(tmp_path)
    path = files.verify(entry)
    before = path.stat()
    other = tmp_path / "other.tmp"
    other.write_bytes(CONTENT[::-1])  # same size, other bytes, another inode
    os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(other, path)
    assert path.stat().st_mtime_ns == before.st_mtime_ns and path.stat().st_size == before.st_size
    assert path.stat().st_ino != before.st_ino
    with pytest.raises(ChecksumMismatch, match="it changed since it was verified"):
        files.verify(entry)
    assert len(hashes) == 2


@pytest.mark.skipif(os.name == "nt", reason="the change time (st_ctime) is the creation time on Windows")
def test_an_in_place_rewrite_with_its_mtime_restored_is_re_hashed(tmp_path: Path, hashes: list[Path]) -> None:
    entry = fake_model(tmp_path)
    files = ModelFiles(tmp_path)
    path = files.verify(entry)
    before = path.stat()
    with open(path, "r+b") as handle:  # same inode, same size; the mtime is put back, the ctime cannot be
        handle.write(b"XXXX")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(ChecksumMismatch):
        files.verify(entry)
    assert len(hashes) == 2


def test_a_copy_that_still_matches_is_re_hashed_once_and_recorded_anew(tmp_path: Path, hashes: list[Path]) -> None:
    entry = fake_model(tmp_path)
    files = ModelFiles(tmp_path)
    path = files.verify(entry)
    copy = tmp_path / "copy.tmp"
    shutil.copyfile(path, copy)
    os.replace(copy, path)  # the same bytes under a new identity
    files.verify(entry)
    files.verify(entry)
    assert hashes == [path, path]
    assert records(tmp_path)["fake"]["inode"] == path.stat().st_ino


def test_a_full_verify_reads_the_bytes_even_when_the_record_vouches_for_them(tmp_path: Path,
                                                                           hashes: list[Path]) -> None:
    entry = fake_model(tmp_path)
    files = ModelFiles(tmp_path)
    path = files.verify(entry)
    assert files.verify(entry, full=True) == path and files.verify(entry) == path
    assert hashes == [path, path]


def test_a_record_for_another_sha256_is_ignored(tmp_path: Path, hashes: list[Path]) -> None:
    entry = fake_model(tmp_path)
    files = ModelFiles(tmp_path)
    path = files.verify(entry)
    repinned = dataclasses.replace(entry, sha256="f" * 64)
    with pytest.raises(ChecksumMismatch, match=f"not {'f' * 64}"):
        files.verify(repinned)
    assert len(hashes) == 2
    assert files.verify(entry) == path and len(hashes) == 3


def test_a_record_for_another_path_is_ignored(tmp_path: Path, hashes: list[Path]) -> None:
    entry = fake_model(tmp_path)
    ModelFiles(tmp_path).verify(entry)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(tmp_path / entry.file, elsewhere / entry.file)
    shutil.copy(tmp_path / "verified.json", elsewhere / "verified.json")
    ModelFiles(elsewhere).verify(entry)
    assert hashes == [tmp_path / entry.file, elsewhere / entry.file]
    assert records(elsewhere)["fake"]["path"] == str(elsewhere / entry.file)


def test_a_damaged_record_file_costs_one_hash_and_is_rewritten(tmp_path: Path, hashes: list[Path]) -> None:
    entry = fake_model(tmp_path)
    (tmp_path / "verified.json").write_text("{not json")
    files = ModelFiles(tmp_path)
    files.verify(entry)
    files.verify(entry)
    assert len(hashes) == 1 and entry.sha256 == records(tmp_path)["fake"]["sha256"]


def test_a_packaged_model_is_hashed_once(tmp_path: Path, hashes: list[Path]) -> None:
    files = ModelFiles(tmp_path)
    path = files.path_for(SMOL)
    assert path.is_file() and not path.is_relative_to(tmp_path)
    assert files.verify(SMOL) == path and files.verify(SMOL) == path
    assert hashes == [path] and records(tmp_path)["smollm2-135m-instruct"]["path"] == str(path)


def test_a_verified_download_is_recorded_and_not_hashed_again(tmp_path: Path, hashes: list[Path]) -> None:
    gguf = ModelFiles(Path("/nonexistent")).path_for(SMOL).read_bytes()
    with ModelServer({SMOL.file: gguf}) as server:
        files = ModelFiles(tmp_path, hub_url=server.url)
        entry = dataclasses.replace(SMOL, id="local-test", packaged_in=None, repository="acme/smol",
                                    revision="0123456789abcdef0123456789abcdef01234567")
        got = files.download(entry)
    assert entry.pinning == "hash" and got.sha256 == SMOL.sha256
    assert files.verify(entry) == got.path and hashes == []
    assert (records(tmp_path)["local-test"]["path"], records(tmp_path)["local-test"]["sha256"]) == (
        str(got.path), SMOL.sha256)
    assert not (tmp_path / "pins.json").exists()  # a hash pin needs no recorded hub hash


def test_a_download_pinned_by_hash_drops_a_hub_hash_recorded_earlier(tmp_path: Path) -> None:
    gguf = ModelFiles(Path("/nonexistent")).path_for(SMOL).read_bytes()
    (tmp_path / "pins.json").write_text(json.dumps({"local-test": {"sha256": "0" * 64, "revision": "old"},
                                                    "other": {"sha256": "1" * 64, "revision": "x"}}))
    with ModelServer({SMOL.file: gguf}) as server:
        files = ModelFiles(tmp_path, hub_url=server.url)
        entry = dataclasses.replace(SMOL, id="local-test", packaged_in=None, repository="acme/smol",
                                    revision="0123456789abcdef0123456789abcdef01234567")
        files.download(entry)
    assert json.loads((tmp_path / "pins.json").read_text()) == {"other": {"sha256": "1" * 64, "revision": "x"}}


def test_removing_a_model_drops_its_record(tmp_path: Path) -> None:
    entry = dataclasses.replace(fake_model(tmp_path), repository="acme/fake", revision="0" * 40)
    files = ModelFiles(tmp_path)
    files.verify(entry)
    assert files.remove(entry)
    assert "fake" not in records(tmp_path)


def test_threads_verifying_at_once_leave_a_whole_record(tmp_path: Path) -> None:
    entries = [fake_model(tmp_path, CONTENT + bytes([i]), f"m{i}") for i in range(8)]
    files = ModelFiles(tmp_path)
    errors: list[BaseException] = []

    def verify_all(entry: ModelEntry) -> None:
        try:
            for _ in range(5):
                files.verify(entry)
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=verify_all, args=(e,)) for e in entries]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == [] and sorted(records(tmp_path)) == [f"m{i}" for i in range(8)]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary files left


@pytest.mark.slow
def test_processes_verifying_at_once_leave_a_valid_record(tmp_path: Path) -> None:
    entries = [fake_model(tmp_path, CONTENT + bytes([i]), f"m{i}") for i in range(4)]
    script = ("import dataclasses, sys; from pathlib import Path\n"
              "from engram.core.manifest import model_entry\n"
              "from engram.core.models.files import ModelFiles\n"
              "e = dataclasses.replace(model_entry('smollm2-135m-instruct'), id=sys.argv[2], file=sys.argv[2] + '.gguf',"
              " packaged_in=None, sha256=sys.argv[3], size=0)\n"
              "for _ in range(20): ModelFiles(Path(sys.argv[1])).verify(e)\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path), e.id, e.sha256]) for e in entries]
    assert [p.wait(timeout=120) for p in procs] == [0] * 4
    kept = records(tmp_path)  # last writer wins: whatever is kept is whole and true
    assert kept and all(r == {**r, "path": str(tmp_path / f"{m}.gguf"),
                              "sha256": next(e.sha256 for e in entries if e.id == m)} for m, r in kept.items())


def test_the_bundled_embedding_model_is_hashed_once(tmp_path: Path, model_file: Path, hashes: list[Path]) -> None:
    entry = model_entry("all-minilm-l6-v2")
    shutil.copy(model_file, tmp_path / entry.file)
    assert ensure_bundled_model(entry, tmp_path) == tmp_path / entry.file
    assert ensure_bundled_model(entry, tmp_path) == tmp_path / entry.file
    assert hashes == [tmp_path / entry.file]
    assert records(tmp_path)["all-minilm-l6-v2"]["path"] == str(tmp_path / entry.file)
    ensure_bundled_model(entry, tmp_path, full=True)
    assert len(hashes) == 2


@pytest.mark.slow
def test_models_list_names_how_each_model_is_pinned(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_DATA_DIR=str(tmp_path / "data"), ENGRAM_CONFIG_DIR=str(tmp_path / "cfg"))
    out = subprocess.run([sys.executable, "-m", "engram.app", "models", "list"], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["model", "roles", "state", "size", "pinning"]
    rows = {line.split()[0]: line for line in lines[1:] if not line.startswith(" ")}
    assert sorted(rows) == sorted(["all-minilm-l6-v2", "qwen3.5-4b", "qwen3.5-35b-a3b", "smollm2-135m-instruct"])
    pinning = {model: line[lines[0].index("pinning"):] for model, line in rows.items()}
    assert pinning == {"all-minilm-l6-v2": "pinned by hash", "qwen3.5-4b": "pinned by hash",
                       "qwen3.5-35b-a3b": "pinned by revision only (hash recorded at first download)",
                       "smollm2-135m-instruct": "pinned by hash"}


def test_a_record_that_cannot_be_written_still_verifies_by_hashing(tmp_path: Path, hashes: list[Path]) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the models folder should be")
    files = ModelFiles(blocked)
    assert files.verify(SMOL) == files.verify(SMOL) == files.path_for(SMOL)
    assert len(hashes) == 2
