"""Where the installed package keeps the C++ core's helper programs, and pointing the core at them.

The evaluator starts sandboxed children (the NVRTC compile child, the CPU emulator child), the GPU
worker, and pastes the CUDA emulation header into every program it runs on the CPU. A build tree
finds them by their build paths; the wheel carries its own copies (python/CMakeLists.txt installs
them under sparserl/bin and sparserl/include), and the core reads these environment variables
first (src/eval/cpu_runner.cpp, compiler.cpp, gpu_runner.cpp). A variable already set wins.
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent

HELPERS = {
    "SPARSERL_CPU_CHILD": _PACKAGE / "bin" / "sparserl-cpu-child",
    "SPARSERL_NVRTC_CHILD": _PACKAGE / "bin" / "sparserl-nvrtc-child",
    "SPARSERL_GPU_WORKER": _PACKAGE / "bin" / "sparserl-gpu-worker",
    "SPARSERL_CUDA_EMULATION_HEADER": _PACKAGE / "include" / "cuda_emulation.h",
}


def use_installed_helpers() -> None:
    """Sets each variable of HELPERS that is unset to the installed copy, when there is one."""
    for variable, path in HELPERS.items():
        if not os.environ.get(variable) and path.exists():
            os.environ[variable] = str(path)
