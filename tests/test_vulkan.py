"""The Vulkan build of llama.cpp, for real: built with its backends as loadable modules (``GGML_BACKEND_DL``, as
the bundle carries it) and run here on Mesa's lavapipe, a software Vulkan device.

Opt-in (the build takes long; see the README): ``ENGRAM_TEST_VULKAN=1 bash scripts/test.sh`` builds the wheel
(``scripts/vulkan-build.sh``) into ``.venv/vulkan-llama`` and runs these tests, each in a process that imports
that build instead of the CPU one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engram.core.manifest import model_entry
from engram.core.models.files import ModelFiles

pytestmark = [pytest.mark.vulkan, pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="lavapipe is tested on Linux")]

ROOT = Path(__file__).resolve().parent.parent
SITE = Path(os.environ.get("ENGRAM_VULKAN_SITE", ROOT / ".venv" / "vulkan-llama"))
SMOL = ModelFiles(Path("/nonexistent")).path_for(model_entry("smollm2-135m-instruct"))

PROBE = r'''
import ctypes, json, sys
from engram.core.models.backend import backend_devices, llama_library, loaded_backends
from engram.core.models.gpu import choose, detect
from engram.core.models.placement import ALL_LAYERS, Offload, OpenOptions
from engram.core.models.pool import open_llama

llama_cpp = llama_library()
logs = []
keep = llama_cpp.llama_log_callback(lambda level, text, data: logs.append(text.decode("utf-8", "replace")))
llama_cpp.llama_log_set(keep, ctypes.c_void_p(0))
loaded = loaded_backends()
gpus = detect()
out = {"file": llama_cpp.__file__, "backends": list(loaded.names), "dynamic": loaded.dynamic, "note": loaded.note,
       "devices": [[d.name, d.description, d.kind] for d in backend_devices()],
       "gpus": [g.name for g in gpus], "chosen": getattr(choose(gpus, "auto"), "name", None)}
offload = Offload(ALL_LAYERS, 0) if sys.argv[2] == "gpu" else Offload()
llm = open_llama(sys.argv[1], OpenOptions(n_ctx=512, offload=offload, threads=2, batch=64))
out["text"] = llm.create_completion("The capital of France is", max_tokens=8, temperature=0.0)["choices"][0]["text"]
del llm
out["logs"] = "".join(logs)
print("RESULT " + json.dumps(out))
'''


def probe(mode: str, **env: str) -> dict[str, object]:
    """Run ``PROBE`` in a process whose ``llama_cpp`` is the Vulkan build."""
    if not (SITE / "llama_cpp").is_dir():
        pytest.fail(f"the Vulkan build is not installed in {SITE}: run `ENGRAM_TEST_VULKAN=1 bash scripts/test.sh` "
                    "(or `bash scripts/vulkan-build.sh`) first")
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SITE), os.environ.get("PYTHONPATH", "")]), **env}
    done = subprocess.run([sys.executable, "-c", PROBE, str(SMOL), mode], capture_output=True, text=True,
                          env=environ, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
    result: dict[str, object] = json.loads(line.removeprefix("RESULT "))
    assert str(result["file"]).startswith(str(SITE)), "the process imported the Vulkan build"
    return result


def test_the_test_model_generates_through_the_vulkan_backend_on_lavapipe() -> None:
    # ggml's Vulkan backend skips CPU-type devices unless they are named: lavapipe is device 0 here.
    out = probe("gpu", GGML_VK_VISIBLE_DEVICES="0")
    assert out["dynamic"] and set(out["backends"]) >= {"Vulkan", "CPU"}, out["backends"]
    vulkan = [d for d in out["devices"] if str(d[0]).startswith("Vulkan")]  # type: ignore[union-attr]
    assert vulkan and "llvmpipe" in str(vulkan[0][1]), out["devices"]
    logs = str(out["logs"])
    offloaded = re.search(r"offloaded (\d+)/(\d+) layers to GPU", logs)
    assert offloaded and offloaded.group(1) == offloaded.group(2) != "0", logs[-2000:]
    assert "Vulkan0" in logs, "the model's weights went to the Vulkan device"
    assert str(out["text"]).strip(), "it generated text"
    # ... and Engram's chooser never takes lavapipe, a CPU device, for "the GPU".
    assert out["chosen"] is None and not any("llvmpipe" in str(g) for g in out["gpus"]), out["gpus"]  # type: ignore


def test_without_a_named_device_the_vulkan_build_generates_on_the_cpu() -> None:
    out = probe("cpu")
    assert set(out["backends"]) >= {"Vulkan", "CPU"} and out["note"] == ""  # type: ignore[arg-type]
    assert not [d for d in out["devices"] if str(d[0]).startswith("Vulkan")], "lavapipe is not offered by default"
    assert out["chosen"] is None and str(out["text"]).strip()


def test_without_a_vulkan_driver_the_build_falls_back_to_the_cpu_with_a_note(tmp_path: Path) -> None:
    # A loader that has none of Vulkan's functions stands in for a machine without a Vulkan driver.
    if shutil.which("cc") is None:
        pytest.fail("a C compiler is needed (it built the wheel)")
    (tmp_path / "empty.c").write_text("int engram_no_vulkan_here;\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(tmp_path / "libvulkan.so.1"), str(tmp_path / "empty.c")],
                   check=True)
    out = probe("cpu", LD_LIBRARY_PATH=str(tmp_path))
    assert out["backends"] == ["CPU"] and out["dynamic"], out["backends"]
    assert "carries the Vulkan backend, but it could not be loaded" in str(out["note"])
    assert str(out["text"]).strip(), "the model still generates, on the CPU"
