"""sparserl rewards for RL engines, computed by the sparserl reward service (`sparserl serve`).

The service verifies each completion (a `FORMAT:` line, `LAUNCH:` line(s) and CUDA device source,
docs/kernel-abi.md) on the task's matrix and returns the hierarchical reward: -1 no parsable
program, -0.5 compile error, 0 fault / timeout / wrong result, 1 + speed term (GPU executor) for
a correct program; exactly 1.0 for a correct program on the CPU emulator, which does not time.
Python 3.11 standard library only. Configuration, from the environment:

    SPARSERL_URL          the service (default http://127.0.0.1:8808)
    SPARSERL_TOKEN        bearer token, or SPARSERL_TOKEN_FILE: a file holding it
    SPARSERL_TIMEOUT      seconds to wait for one request (default 600)
    SPARSERL_CONCURRENCY  requests in flight from one batch (default 8)

The matrix of each sample comes from the dataset, in the SFT JSONL layout: `rows`, `cols`
(0-based coordinates of the nonzeros), `shape` ([n, m]), optional `values` (else 1.0 each), or
`matrix_name` for one of the server's --matrices; optional `op` ("spmv"/"spmm") and `k`.

TRL (GRPOTrainer): the dataset's columns arrive as keyword lists, one entry per completion:

    import sys; sys.path.insert(0, "tools")
    from sparserl_reward import sparserl_reward
    trainer = GRPOTrainer(model=..., reward_funcs=[sparserl_reward], train_dataset=dataset)

verl: a custom reward function; `ground_truth` (reward_model.ground_truth in the parquet) holds
the task as a dict or JSON text, {"rows", "cols", "shape"[, "values"]} or {"name"}, with optional
"op" and "k" (these may also sit in extra_info):

    custom_reward_function.path=tools/sparserl_reward.py
    custom_reward_function.name=compute_score              # one sample per call
    # or, with reward_model.reward_manager=batch:
    custom_reward_function.name=compute_score_batch        # a whole batch, requests in parallel

Completions of one matrix are sent together (up to the server's max_programs per request), so a
GRPO group costs one request. A failure to reach the service raises ServiceError: a training run
should stop rather than learn from made-up rewards.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import sys
from typing import Any, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sparserl_client import ServiceError, SparserlClient, read_token  # noqa: E402

__all__ = ["sparserl_reward", "make_trl_reward", "compute_score", "compute_score_batch",
           "score_tasks", "ServiceError"]

_clients: dict[tuple, SparserlClient] = {}


def _client(url: str | None = None, token: str | None = None) -> SparserlClient:
    url = url or os.environ.get("SPARSERL_URL", "http://127.0.0.1:8808")
    if token is None:
        token = os.environ.get("SPARSERL_TOKEN")
        if not token and os.environ.get("SPARSERL_TOKEN_FILE"):
            token = read_token(os.environ["SPARSERL_TOKEN_FILE"])
    key = (url, token)
    if key not in _clients:
        _clients[key] = SparserlClient(url, token=token,
                                       timeout_s=float(os.environ.get("SPARSERL_TIMEOUT", 600)))
    return _clients[key]


def _completion_text(completion: Any) -> str:
    """TRL passes plain strings, or for conversational data a list of messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    return str(completion)


def _task(spec: dict) -> dict:
    """The evaluate() arguments of one sample's task description."""
    op = spec.get("op") or "spmv"
    k = spec.get("k")
    name = spec.get("name") or spec.get("matrix_name")
    if name:
        task: dict[str, Any] = {"name": name, "op": op}
    elif all(f in spec for f in ("rows", "cols", "shape")):
        matrix = {"rows": list(spec["rows"]), "cols": list(spec["cols"]),
                  "shape": list(spec["shape"])}
        if spec.get("values") is not None:
            matrix["values"] = list(spec["values"])
        task = {"matrix": matrix, "op": op}
    else:
        raise ValueError("a sparserl task needs rows, cols and shape (the SFT layout) or a "
                         f"matrix name; got fields {sorted(spec)}")
    if k is not None and op.lower() == "spmm":
        task["k"] = int(k)
    return task


def score_tasks(completions: Sequence[str], tasks: Sequence[dict], *, url: str | None = None,
                token: str | None = None) -> list[float]:
    """Rewards of completions[i] on tasks[i]; completions of one task share requests, and
    distinct tasks are sent in parallel."""
    if len(completions) != len(tasks):
        raise ValueError(f"{len(completions)} completions for {len(tasks)} tasks")
    client = _client(url, token)
    groups: dict[str, list[int]] = {}
    args: dict[str, dict] = {}
    for i, spec in enumerate(tasks):
        task = _task(spec)
        key = json.dumps(task, sort_keys=True)
        groups.setdefault(key, []).append(i)
        args[key] = task
    rewards: list[float] = [0.0] * len(completions)

    def run(key: str) -> None:
        indices = groups[key]
        task = dict(args[key])
        matrix = task.pop("matrix", None)
        scores = client.rewards([completions[i] for i in indices], matrix, **task)
        for i, score in zip(indices, scores):
            rewards[i] = score

    workers = max(1, min(len(groups), int(os.environ.get("SPARSERL_CONCURRENCY", 8))))
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        for future in [pool.submit(run, key) for key in groups]:
            future.result()  # re-raises the first failure
    return rewards


_TRL_COLUMNS = ("rows", "cols", "shape", "values", "matrix_name", "op", "k")


def _trl_tasks(n: int, kwargs: dict) -> list[dict]:
    """Per-completion tasks from the dataset columns TRL forwards as keyword lists."""
    columns = {f: list(kwargs[f]) for f in _TRL_COLUMNS if kwargs.get(f) is not None}
    return [{f: column[i] for f, column in columns.items() if column[i] is not None}
            for i in range(n)]


def make_trl_reward(url: str | None = None, token: str | None = None):
    """A TRL reward function (GRPOTrainer reward_funcs) bound to one service; without arguments
    it follows SPARSERL_URL / SPARSERL_TOKEN(_FILE)."""

    def sparserl_reward(prompts: Sequence[Any] | None = None, completions: Sequence[Any] = (),
                        **kwargs: Any) -> list[float]:
        """One reward per completion; the task from the columns rows, cols, shape[, values] or
        matrix_name, and optionally op and k."""
        tasks = _trl_tasks(len(completions), kwargs)
        return score_tasks([_completion_text(c) for c in completions], tasks, url=url,
                           token=token)

    return sparserl_reward  # TRL logs each reward under its function's __name__


sparserl_reward = make_trl_reward()


def _verl_task(ground_truth: Any, extra_info: dict | None) -> dict:
    spec = json.loads(ground_truth) if isinstance(ground_truth, (str, bytes)) else ground_truth
    if not isinstance(spec, dict):
        raise ValueError(f"ground_truth: expected a dict or JSON object text, got {type(spec)}")
    spec = dict(spec)
    for field in ("op", "k", "name", "matrix_name"):
        if extra_info and field not in spec and extra_info.get(field) is not None:
            spec[field] = extra_info[field]
    return spec


def compute_score(data_source: str, solution_str: str, ground_truth: Any,
                  extra_info: dict | None = None, **kwargs: Any) -> float:
    """verl custom reward function: the reward of one response."""
    return score_tasks([solution_str], [_verl_task(ground_truth, extra_info)])[0]


def compute_score_batch(data_sources: Sequence[str], solution_strs: Sequence[str],
                        ground_truths: Sequence[Any], extra_infos: Sequence[dict | None] | None = None,
                        **kwargs: Any) -> list[float]:
    """verl batch reward function (reward_manager=batch): rewards of a whole batch."""
    extras = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    tasks = [_verl_task(g, e) for g, e in zip(ground_truths, extras)]
    return score_tasks(list(solution_strs), tasks)
