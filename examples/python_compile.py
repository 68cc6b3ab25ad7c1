#!/usr/bin/env python3
"""A tuned kernel in an application: sparserl.compile(program, A) on torch CUDA tensors.

    python3 examples/python_compile.py [--rows 3000] [--cols 2500] [--density 0.004]

Makes a random sparse matrix (numpy only), then for SpMV and SpMM (k = 16) compiles every program
of the expert library's space for it (what `sparserl tune` would rank), runs each once on a CUDA
tensor and compares with a float64 reference. Exits 1 on any mismatch; scripts/gpu-python.sh runs
it on the GPU machine. An application would compile only its tuned program:

    k = sparserl.compile(open("best.cu").read(), A)   # converts and uploads once
    y = k(x)                                          # every call: launches only
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import torch

import sparserl


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=3000)
    ap.add_argument("--cols", type=int, default=2500)
    ap.add_argument("--density", type=float, default=0.004)
    a = ap.parse_args()
    rng = np.random.default_rng(5)
    nnz = int(a.rows * a.cols * a.density)
    rows = rng.integers(0, a.rows, nnz)
    cols = rng.integers(0, a.cols, nnz)
    values = rng.uniform(-1, 1, nnz).astype(np.float32)
    A = sparserl.from_coordinates((a.rows, a.cols), rows, cols, values)  # duplicates summed
    dense = np.zeros((A.rows, A.cols))
    dense[np.repeat(np.arange(A.rows), np.diff(A.indptr)), A.indices] = A.data
    print(f"matrix {A.rows} x {A.cols}, {A.nnz} nonzeros; GPU {torch.cuda.get_device_name()}")

    failures = 0
    for op, k in (("spmv", 1), ("spmm", 16)):
        x = rng.uniform(-1, 1, (A.cols, k) if op == "spmm" else A.cols).astype(np.float32)
        reference = dense @ x.astype(np.float64)
        x_gpu = torch.from_numpy(x).cuda()
        for config, program in sparserl.expert_programs(A, op, k):
            t0 = time.perf_counter()
            kernel = sparserl.compile(program, A, op=op, k=k)
            compile_s = time.perf_counter() - t0
            y = kernel(x_gpu)
            torch.cuda.synchronize()
            error = float(np.abs(y.cpu().numpy().astype(np.float64) - reference).max())
            ok = error <= 1e-4 * max(1.0, float(np.abs(reference).max())) * np.sqrt(A.nnz / A.rows)
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {op} {config:60.60s} max |error| {error:.2e} "
                  f"(compile + upload {compile_s * 1e3:.0f} ms)")
    print(f"{failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
