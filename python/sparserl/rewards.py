"""Reward functions for RL engines, judged in-process by the harness (no service, no subprocess).

The reward is the harness's hierarchical one (src/eval/reward.h): -1 no parsable program, -0.5
compile error or rejected source, 0 fault / timeout / wrong result, and for a correct program 1 +
the clipped log2 speed-up over cuSPARSE less a memory penalty on the GPU executor; exactly 1.0
on the CPU emulator, which does not time.

A task names its matrix and operation. As a dict (or its JSON text): `matrix` (a .mtx path, or an
SFT-layout dict) or the SFT layout itself (`rows`, `cols`, `shape`[, `values`]), with optional
`op` ("spmv"/"spmm") and `k`. A plain string that is not JSON is a .mtx path. Same layout as the
reward service's (docs/reward-service.md), so datasets move between the two.

Settings, from the environment (or keyword arguments where the signature allows):
    SPARSERL_DEVICE   cpu | gpu | auto (default auto: the GPU when one works)
    SPARSERL_THREADS  programs judged at once (default: the machine's cores)

verl:  custom_reward_function.path=<site-packages>/sparserl/rewards.py,
       custom_reward_function.name=compute_score; with reward_model.reward_manager=batch,
       compute_score_batch.
TRL:   GRPOTrainer(reward_funcs=[sparserl.rewards.sparserl_reward], ...) with a dataset column
       `matrix` (or rows/cols/shape), optional `op` and `k`; make_trl_reward(...) for other
       settings. The verdicts of the last call are in the reward's `last_verdicts`.
"""

from __future__ import annotations

import json
import os
from typing import Any, Sequence

# Absolute imports: verl loads this file by its path (custom_reward_function.path), not as a
# module of the package.
from sparserl.evaluate import evaluate_many
from sparserl.matrix import as_matrix

__all__ = ["score_tasks", "judge_tasks", "compute_score", "compute_score_batch",
           "compute_score_with_verdict", "TrlReward", "make_trl_reward", "sparserl_reward"]


def _device(device: str | None) -> str:
    return device or os.environ.get("SPARSERL_DEVICE") or "auto"


def _threads(threads: int | None) -> int:
    return threads or int(os.environ.get("SPARSERL_THREADS", 0)) or os.cpu_count() or 1


def completion_text(completion: Any) -> str:
    """TRL passes plain strings, or for conversational data a list of messages (the last one is
    the model's)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    return str(completion)


def _task_spec(task: Any) -> dict:
    if isinstance(task, (str, bytes)):
        text = task.decode() if isinstance(task, bytes) else task
        return json.loads(text) if text.lstrip().startswith("{") else {"matrix": text}
    if isinstance(task, dict):
        return task
    return {"matrix": task}  # a Matrix, scipy or torch matrix, a path


def judge_tasks(completions: Sequence[Any], tasks: Sequence[Any], *, device: str | None = None,
                threads: int | None = None, trials: int = 3, timeout: float = 5.0) -> list[dict]:
    """The verdicts (dicts with `sparserl eval --json`'s fields, `reward` among them) of
    completions[i] on tasks[i], judged `threads` at once."""
    if len(completions) != len(tasks):
        raise ValueError(f"{len(completions)} completions for {len(tasks)} tasks")
    specs = [_task_spec(t) for t in tasks]
    matrices = [as_matrix(s.get("matrix", s)) for s in specs]
    ops = [str(s.get("op") or "spmv") for s in specs]
    ks = [int(s.get("k") or 64) for s in specs]
    return evaluate_many([completion_text(c) for c in completions], matrices, ops, ks,
                         device=_device(device), threads=_threads(threads), trials=trials,
                         timeout=timeout)


def score_tasks(completions: Sequence[Any], tasks: Sequence[Any], **options: Any) -> list[float]:
    """The rewards of completions[i] on tasks[i] (judge_tasks' verdicts' `reward`)."""
    return [float(v["reward"]) for v in judge_tasks(completions, tasks, **options)]


def _verl_task(ground_truth: Any, extra_info: dict | None) -> dict:
    spec = dict(_task_spec(ground_truth))
    for field in ("matrix", "op", "k"):
        if extra_info and field not in spec and extra_info.get(field) is not None:
            spec[field] = extra_info[field]
    return spec


def compute_score(data_source: str, solution_str: str, ground_truth: Any,
                  extra_info: dict | None = None, **kwargs: Any) -> float:
    """verl's custom reward function: the reward of one response. `ground_truth` is the task;
    op and k may also come in extra_info; verl's reward_kwargs may set device and threads."""
    return score_tasks([solution_str], [_verl_task(ground_truth, extra_info)], **kwargs)[0]


def compute_score_with_verdict(data_source: str, solution_str: str, ground_truth: Any,
                               extra_info: dict | None = None, **kwargs: Any) -> dict:
    """As compute_score, returning verl's dict form: {"score": reward, **verdict} (without the
    compile log), so verl logs the verdict's fields beside the score."""
    verdict = judge_tasks([solution_str], [_verl_task(ground_truth, extra_info)], **kwargs)[0]
    verdict.pop("compile_log", None)
    return {"score": float(verdict["reward"]), **verdict}


def compute_score_batch(data_sources: Sequence[str], solution_strs: Sequence[str],
                        ground_truths: Sequence[Any],
                        extra_infos: Sequence[dict | None] | None = None,
                        **kwargs: Any) -> list[float]:
    """verl's batch reward function (reward_manager=batch): the rewards of a whole batch, judged
    in parallel."""
    extras = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    tasks = [_verl_task(g, e) for g, e in zip(ground_truths, extras)]
    return score_tasks(list(solution_strs), tasks, **kwargs)


_TASK_COLUMNS = ("rows", "cols", "shape", "values", "op", "k")


class TrlReward:
    """A TRL reward function (GRPOTrainer reward_funcs): reward(prompts, completions, **columns)
    -> list of floats. The matrix of completion i comes from the dataset column `matrix_column`
    (a .mtx path or an SFT dict), else from the columns rows, cols, shape[, values]; optional
    columns op and k. The verdicts of the last call stay in `last_verdicts`."""

    def __init__(self, matrix_column: str = "matrix", device: str | None = None,
                 threads: int | None = None, trials: int = 3, timeout: float = 5.0,
                 name: str = "sparserl_reward"):
        self.matrix_column = matrix_column
        self.options = {"device": device, "threads": threads, "trials": trials,
                        "timeout": timeout}
        self.__name__ = name  # TRL logs each reward function under its __name__
        self.last_verdicts: list[dict] = []

    def tasks(self, n: int, columns: dict) -> list[dict]:
        present = {f: list(columns[f]) for f in (self.matrix_column, *_TASK_COLUMNS)
                   if columns.get(f) is not None}
        if self.matrix_column not in present and "rows" not in present:
            raise ValueError(f"no matrix for the completions: give a dataset column "
                             f"'{self.matrix_column}' (a .mtx path or SFT dict) or rows, cols, "
                             f"shape; got columns {sorted(columns)}")
        tasks = []
        for i in range(n):
            spec = {f: column[i] for f, column in present.items() if column[i] is not None}
            if self.matrix_column in spec:
                spec["matrix"] = spec.pop(self.matrix_column)
            tasks.append(spec)
        return tasks

    def __call__(self, prompts: Sequence[Any] | None = None, completions: Sequence[Any] = (),
                 **kwargs: Any) -> list[float]:
        verdicts = judge_tasks(list(completions), self.tasks(len(completions), kwargs),
                               **self.options)
        self.last_verdicts = verdicts
        return [float(v["reward"]) for v in verdicts]


def make_trl_reward(**options: Any) -> TrlReward:
    """A TRL reward function with these TrlReward settings."""
    return TrlReward(**options)


sparserl_reward = make_trl_reward()
