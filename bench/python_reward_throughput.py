#!/usr/bin/env python3
"""Programs per second of the in-process reward functions (sparserl.rewards) on one executor.

    .venv/bin/python bench/python_reward_throughput.py [--device cpu] [--programs 32]
        [--rows 2000] [--threads N]

Each measured program is distinct (a numbered unused constant is appended to its source), so neither the
NVRTC compile cache nor the CPU emulator's object cache can serve it: every one is parsed,
screened, compiled by NVRTC, built for the emulator (CPU) or timed (GPU), run and verified, as a
fresh RL completion would be. The mix is a quarter each: the heuristic's correct program, a wrong
one (csr_scalar with the result halved), a compile error and prose without a program. Measured:
  verl compute_score, one call per completion (verl's naive reward manager),
  verl compute_score_batch, one call for all (reward_manager=batch: judged `threads` at once),
  a TRL reward call (reward_funcs) for all, with a `matrix` column.
The matrix, its trial inputs and references are made once before timing (the evaluator caches
them by content, as it would over a training run). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time

import sparserl
from sparserl import rewards


def completions(matrix, count: int, start: int) -> list[str]:
    correct = sparserl.heuristic_program(matrix)
    wrong = next(text.replace("y[row] = sum;", "y[row] = 0.5f * sum;")
                 for config, text in sparserl.expert_programs(matrix) if config.startswith("csr_scalar"))
    compile_error = correct.replace("{", "{ undeclared_name_xyz = 1;", 1)
    prose = "I would use a CSR kernel with one thread per row."
    mix = [correct, wrong, compile_error, prose]
    # An unused constant, not a comment: the program differs as code, whatever a cache strips.
    return [mix[i % 4] + f"\nconstexpr int kCompletion{start + i} = {start + i};\n"
            for i in range(count)]


def rate(count: int, seconds: float) -> float:
    return round(count / seconds, 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", help="cpu, gpu or auto")
    ap.add_argument("--programs", type=int, default=32, help="programs per measurement")
    ap.add_argument("--rows", type=int, default=2000, help="rows of the banded test matrix")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    os.environ["SPARSERL_DEVICE"] = a.device
    os.environ["SPARSERL_THREADS"] = str(a.threads)

    matrix = sparserl.generate("banded", a.rows, seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "banded.mtx")
        sparserl.write_matrix_market(matrix, path)
        # Warm-up: the evaluator, the matrix's conversion, trial inputs and references.
        rewards.score_tasks(completions(matrix, 4, -4), [path] * 4)

        n = a.programs
        t0 = time.perf_counter()
        single = [rewards.compute_score("sparserl", c, path) for c in completions(matrix, n, 0)]
        t_single = time.perf_counter() - t0

        batch_in = completions(matrix, n, n)
        t0 = time.perf_counter()
        batch = rewards.compute_score_batch(["sparserl"] * n, batch_in, [path] * n)
        t_batch = time.perf_counter() - t0

        trl = rewards.make_trl_reward(device=a.device, threads=a.threads)
        trl_in = completions(matrix, n, 2 * n)
        t0 = time.perf_counter()
        trl_out = trl(prompts=["p"] * n, completions=trl_in, matrix=[path] * n)
        t_trl = time.perf_counter() - t0

    expected = [1.0, 0.0, -0.5, -1.0] * (n // 4) + [1.0, 0.0, -0.5, -1.0][: n % 4]
    ok = single == batch == trl_out == expected if a.device == "cpu" else None
    print(json.dumps({
        "device": a.device, "executor": trl.last_verdicts[0]["executor"],
        "matrix": f"banded {matrix.rows} rows, {matrix.nnz} nonzeros", "programs": n,
        "threads": a.threads, "cores": os.cpu_count(), "machine": platform.node(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "compute_score_programs_per_s": rate(n, t_single),
        "compute_score_batch_programs_per_s": rate(n, t_batch),
        "trl_reward_programs_per_s": rate(n, t_trl),
        "rewards_as_expected": ok,
    }, indent=2))
    if ok is False:
        sys.exit("rewards differ from the tiers of the mix")


if __name__ == "__main__":
    main()
