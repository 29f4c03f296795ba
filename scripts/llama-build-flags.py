"""Prints ``<cache key> <CMake arguments>`` for a llama.cpp build that fits this CPU (used by setup-env.sh and
vulkan-build.sh).

On Linux x86-64 the instruction sets are read from /proc/cpuinfo and AMX is left out: some CPUs (and VMs)
advertise AMX without enabling its tile state, and ggml's AMX kernels then die with SIGILL. Elsewhere the
compiler's -march=native decides. The key names the wheel cache's folder, so a wheel is never used on another
CPU type.
"""

import hashlib
import platform

flags: set[str] = set()
try:
    with open("/proc/cpuinfo") as f:
        line = next((ln for ln in f if ln.startswith(("flags", "Features"))), "")
        flags = set(line.split(":", 1)[1].split()) if ":" in line else set()
except OSError:
    pass
args = ["-DGGML_NATIVE=ON"]
if platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64") and flags:
    wanted = {"GGML_SSE42": "sse4_2", "GGML_AVX": "avx", "GGML_AVX2": "avx2", "GGML_FMA": "fma", "GGML_F16C": "f16c",
              "GGML_BMI2": "bmi2", "GGML_AVX_VNNI": "avx_vnni", "GGML_AVX512": "avx512f",
              "GGML_AVX512_VBMI": "avx512vbmi", "GGML_AVX512_VNNI": "avx512_vnni", "GGML_AVX512_BF16": "avx512_bf16"}
    args = ["-DGGML_NATIVE=OFF"] + [f"-D{k}={'ON' if v in flags else 'OFF'}" for k, v in wanted.items()]
    args += ["-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF"]
cmake = " ".join(args)
key = "-".join([platform.system().lower(), platform.machine().lower(),
                hashlib.sha256((" ".join(sorted(flags)) + cmake).encode()).hexdigest()[:10]])
print(key, cmake)
