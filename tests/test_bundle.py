"""The installer bundle: built with PyInstaller from this checkout, then run in a clean environment."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the other platforms' bundles are built by "
                       "release.yml on their own runners"),
    pytest.mark.skipif(importlib.util.find_spec("PyInstaller") is None, reason="PyInstaller is a test dependency"),
]


def test_the_linux_bundle_builds_and_runs_without_python() -> None:
    sys.path.insert(0, str(ROOT / "installers"))
    try:
        import smoke
    finally:
        sys.path.pop(0)
    with tempfile.TemporaryDirectory(prefix="engram-bundle-") as tmp:
        dist, work = Path(tmp) / "dist", Path(tmp) / "work"
        subprocess.run([sys.executable, str(ROOT / "installers" / "build.py"), "--dist", str(dist), "--work",
                        str(work)], check=True, timeout=1500)
        report = json.loads((dist / "build-report.json").read_text())
        bundle = dist / "engram"
        internal = {p.name.lower() for p in (bundle / "_internal").iterdir()}
        assert not {"torch", "matplotlib", "pytest", "pyinstaller"} & internal, "never in the bundle"
        assert (bundle / "_internal" / "engram" / "models" / "all-MiniLM-L6-v2-f16.gguf").is_file()
        appdir = dist / "Engram.AppDir"
        assert (appdir / "AppRun").stat().st_mode & 0o111 and (appdir / "engram.desktop").is_file()
        tarball = next(dist.glob("engram-*-linux-*.tar.gz"))
        tar_bytes = tarball.stat().st_size
        with tarfile.open(tarball) as tar:
            assert f"engram-{report['version']}/usr/lib/engram/engram" in tar.getnames()

        # The AppDir's entry point, as a person would start it: a clean environment, no Python on PATH.
        measured = smoke.smoke(appdir / "usr" / "lib" / "engram" / "engram")
    assert measured["version"] == f"engram {report['version']}" and measured["mcp_tools"] == 20
    print(f"\nbundle: {report['bundle_bytes'] / 1e6:.0f} MB, built in {sum(report['seconds'].values()):.0f} s "
          f"({report['seconds']}); tarball {tar_bytes / 1e6:.0f} MB; smoke {measured}")  # seen with pytest -s
