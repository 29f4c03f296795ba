"""Build the Engram bundle for this platform and package it.

    python installers/build.py [--dist DIR] [--work DIR] [--no-archive]

Runs with the Python environment that has Engram's dependencies and PyInstaller installed (the
project's .venv). Steps:

1. ``pip wheel`` the project and unpack it into a staging folder: PyInstaller must see the installed
   layout (``engram.core`` …), which an editable install hides from it.
2. Build and verify the embedding GGUF (pinned SHA256), shipped ready-made in the bundle.
3. PyInstaller with ``installers/engram.spec`` (onedir): one ``engram`` executable for every entry point.
4. Package: Linux — ``engram-<version>-linux-<arch>.tar.gz`` and an AppImage-style ``Engram.AppDir``
   (AppRun, .desktop file, icon); Windows — the Inno Setup installer when ``iscc`` is installed;
   macOS — ``Engram.app`` in a ``.dmg`` (hdiutil).

Writes ``<dist>/build-report.json``: seconds per step, the bundle's size and its largest parts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "installers"


def _run(cmd: list[str], **kwargs: object) -> None:
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)  # type: ignore[arg-type]


def stage_package(work: Path) -> tuple[Path, str]:
    """The project's wheel unpacked into ``work/stage``; returns (stage, version)."""
    wheels = work / "wheel"
    shutil.rmtree(wheels, ignore_errors=True)
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels),
          str(ROOT)])
    wheel = next(wheels.glob("engram-*.whl"))
    stage = work / "stage"
    shutil.rmtree(stage, ignore_errors=True)
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(stage)
    return stage, wheel.name.split("-")[1]


def embedding_model(work: Path) -> Path:
    from engram.core.embedding.bundled import ensure_bundled_model
    from engram.core.manifest import model_entry

    return ensure_bundled_model(model_entry("all-minilm-l6-v2"), work / "models")


def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def largest_parts(bundle: Path, top: int = 12) -> list[tuple[str, int]]:
    """Sizes of the bundle's top-level parts (inside ``_internal``), largest first."""
    inner = bundle / "_internal" if (bundle / "_internal").is_dir() else bundle
    parts: dict[str, int] = {}
    for f in inner.rglob("*"):
        if f.is_file() and not f.is_symlink():
            rel = f.relative_to(inner).parts
            key = "/".join(rel[:2]) if rel[0] in ("engram", "PySide6") and len(rel) > 2 else rel[0]
            parts[key] = parts.get(key, 0) + f.stat().st_size
    return sorted(parts.items(), key=lambda kv: -kv[1])[:top]


def package_linux(bundle: Path, dist: Path, version: str, archive: bool) -> list[Path]:
    arch = platform.machine().lower()
    appdir = dist / "Engram.AppDir"
    shutil.rmtree(appdir, ignore_errors=True)
    (appdir / "usr" / "lib").mkdir(parents=True)
    shutil.copytree(bundle, appdir / "usr" / "lib" / "engram", symlinks=True)
    shutil.copy2(HERE / "linux" / "AppRun", appdir / "AppRun")
    shutil.copy2(HERE / "linux" / "engram.desktop", appdir / "engram.desktop")
    shutil.copy2(ROOT / "resources" / "engram.png", appdir / "engram.png")
    outputs = [appdir]
    if archive:
        tarball = dist / f"engram-{version}-linux-{arch}.tar.gz"
        with tarfile.open(tarball, "w:gz", compresslevel=6) as tar:
            tar.add(appdir, arcname=f"engram-{version}")
        outputs.append(tarball)
    return outputs


def package_windows(bundle: Path, dist: Path, version: str) -> list[Path]:
    iscc = shutil.which("iscc") or shutil.which("ISCC")
    if iscc is None:
        print("iscc (Inno Setup) not found: the installer .exe is not built; the bundle folder is.", flush=True)
        return []
    _run([iscc, f"/DAppVersion={version}", f"/DSourceDir={bundle}", f"/DOutputDir={dist}",
          f"/DIconFile={ROOT / 'resources' / 'engram.png'}", str(HERE / "windows" / "engram.iss")])
    return list(dist.glob("engram-*-setup.exe"))


def package_macos(dist: Path, version: str) -> list[Path]:
    app = dist / "Engram.app"
    dmg = dist / f"Engram-{version}.dmg"
    _run(["hdiutil", "create", "-volname", "Engram", "-srcfolder", str(app), "-ov", "-format", "UDZO", str(dmg)])
    return [app, dmg]


def ggml_modules(bundle: Path) -> list[str]:
    """The ggml libraries the bundle carries (with ``GGML_BACKEND_DL``, one per backend and CPU variant)."""
    return sorted(p.name for p in bundle.rglob("*ggml*") if p.is_file() and p.suffix in (".so", ".dll", ".dylib"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "installer")
    parser.add_argument("--no-archive", action="store_true", help="Skip the compressed archive (Linux).")
    args = parser.parse_args(argv)
    dist, work = args.dist.resolve(), args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    dist.mkdir(parents=True, exist_ok=True)
    seconds: dict[str, float] = {}

    started = time.perf_counter()
    stage, version = stage_package(work)
    gguf = embedding_model(work)
    seconds["stage"] = time.perf_counter() - started

    started = time.perf_counter()
    env = {**os.environ, "ENGRAM_STAGE": str(stage), "ENGRAM_EMBED_GGUF": str(gguf), "ENGRAM_VERSION": version,
           "ENGRAM_ICON": str(ROOT / "resources" / "engram.png")}
    _run([sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
          "--distpath", str(dist), "--workpath", str(work / "pyinstaller"), str(HERE / "engram.spec")], env=env)
    seconds["pyinstaller"] = time.perf_counter() - started
    bundle = dist / "engram"

    started = time.perf_counter()
    if sys.platform.startswith("linux"):
        outputs = package_linux(bundle, dist, version, archive=not args.no_archive)
    elif sys.platform == "win32":
        outputs = package_windows(bundle, dist, version)
    else:
        outputs = package_macos(dist, version)
    seconds["package"] = time.perf_counter() - started

    report = {
        "version": version, "platform": f"{sys.platform}-{platform.machine().lower()}",
        "python": platform.python_version(), "seconds": {k: round(v, 1) for k, v in seconds.items()},
        "bundle": str(bundle), "bundle_bytes": folder_size(bundle), "ggml_libraries": ggml_modules(bundle),
        "largest_parts": [{"part": k, "bytes": v} for k, v in largest_parts(bundle)],
        "outputs": [{"path": str(p), "bytes": p.stat().st_size if p.is_file() else folder_size(p)} for p in outputs],
    }
    (dist / "build-report.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"bundle: {bundle} ({report['bundle_bytes'] / 1e6:.0f} MB) in {sum(seconds.values()):.0f} s")
    for part in report["largest_parts"]:
        print(f"  {part['bytes'] / 1e6:8.1f} MB  {part['part']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
