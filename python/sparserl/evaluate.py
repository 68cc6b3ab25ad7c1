"""Judging programs in-process: the harness's evaluator (src/eval/evaluator.h) on the sandboxed CPU
emulator or the GPU worker pool, the feature heuristic and the autotuner.

A verdict is a dict with exactly the fields of `sparserl eval --json` (src/eval/verdict.cpp's
verdict_to_json): extracted, compiled, ran, correct, failure, reward, executor, kernel_ms,
speedup, ... The model-written device code runs only inside the runner's sandbox, as for the CLI.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Sequence

from . import _core
from .matrix import as_matrix

_evaluators: dict[tuple, _core.Evaluator] = {}
_evaluators_lock = threading.Lock()


def evaluator(device: str = "cpu", trials: int = 3, timeout: float = 5.0, arch: str = "",
              workers: int = 1) -> _core.Evaluator:
    """The shared evaluator of these settings (made on first use: the GPU pool starts once, and
    its caches of conversions, references and cuSPARSE timings are kept)."""
    key = (device, int(trials), float(timeout), arch, int(workers))
    with _evaluators_lock:
        if key not in _evaluators:
            _evaluators[key] = _core.Evaluator(device, int(trials), float(timeout), arch,
                                               int(workers))
        return _evaluators[key]


def _program_text(program: Any) -> str:
    if isinstance(program, os.PathLike):
        with open(program, encoding="utf-8", errors="replace") as f:
            return f.read()
    return str(program)


def evaluate(program: Any, matrix: Any, op: str = "spmv", k: int = 64, device: str = "cpu",
             trials: int = 3, timeout: float = 5.0, arch: str = "") -> dict:
    """The verdict of `program` (program text or raw model output; a pathlib.Path is read) on
    `matrix` (anything sparserl.as_matrix takes). op "spmv" or "spmm" (k columns of B)."""
    ev = evaluator(device, trials, timeout, arch)
    return json.loads(ev.evaluate(as_matrix(matrix), _program_text(program), op, int(k)))


def evaluate_many(programs: Sequence[Any], matrices: Sequence[Any], ops: Sequence[str] | str = "spmv",
                  ks: Sequence[int] | int = 64, device: str = "cpu", threads: int | None = None,
                  trials: int = 3, timeout: float = 5.0, arch: str = "") -> list[dict]:
    """Verdicts of programs[i] on matrices[i], `threads` at once (default: the machine's cores)."""
    n = len(programs)
    ops = [ops] * n if isinstance(ops, str) else list(ops)
    ks = [int(ks)] * n if isinstance(ks, int) else [int(k) for k in ks]
    ev = evaluator(device, trials, timeout, arch)
    texts = ev.evaluate_many([as_matrix(m) for m in matrices], [_program_text(p) for p in programs],
                             ops, ks, threads or os.cpu_count() or 1)
    return [json.loads(t) for t in texts]


def heuristic_program(matrix: Any, op: str = "spmv", k: int = 64) -> str:
    """The expert library's program that the feature heuristic picks for the matrix (no timing)."""
    text, _config = _core.heuristic_program(as_matrix(matrix), op, int(k))
    return text


def expert_programs(matrix: Any, op: str = "spmv", k: int = 64) -> list[tuple[str, str]]:
    """The expert library's candidates for the matrix (the autotuner's space, pruned by its
    features), untimed: [(configuration, program text)]."""
    return list(_core.expert_programs(as_matrix(matrix), op, int(k)))


def tune(matrix: Any, op: str = "spmv", k: int = 64, device: str = "cpu", threads: int = 1,
         output: str | os.PathLike | None = None) -> dict:
    """Autotunes the expert library on the matrix, as `sparserl tune` does: every candidate of the
    space its features prune is verified, the correct ones ranked by measured time (on the CPU
    emulator nothing is timed: the first correct candidate leads). Returns {"executor", "op",
    "wall_s", "correct", "heuristic", "heuristic_rank", "candidates": [verdict + "config" +
    "program"], "best": the first correct candidate or None}; `output` receives its program."""
    result = json.loads(_core.tune(evaluator(device), as_matrix(matrix), op, int(k), int(threads)))
    result["best"] = next((c for c in result["candidates"] if c["correct"]), None)
    if output is not None and result["best"] is not None:
        with open(output, "w", encoding="utf-8") as f:
            f.write(result["best"]["program"])
    return result
