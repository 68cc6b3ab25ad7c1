"""The verl and TRL reward functions judge completions in-process, tasks from their data."""

from __future__ import annotations

import importlib.util
import json

import pytest

import sparserl
from sparserl import rewards

TIERS = {"correct": 1.0, "wrong": 0.0, "compile_error": -0.5, "no_program": -1.0}


@pytest.fixture(autouse=True)
def cpu_device(monkeypatch):
    monkeypatch.setenv("SPARSERL_DEVICE", "cpu")


def sft_layout(matrix) -> dict:
    """The matrix as coordinates with values (the reward service's / training data's layout)."""
    coo = matrix.tocoo()
    return {"rows": coo.row.tolist(), "cols": coo.col.tolist(), "shape": list(coo.shape),
            "values": coo.data.tolist()}


def test_verl_compute_score(scipy_matrix, mtx_path, programs):
    for name, reward in TIERS.items():
        assert rewards.compute_score("sparserl", programs[name], mtx_path) == reward
        assert rewards.compute_score("sparserl", programs[name],
                                     json.dumps({"matrix": mtx_path})) == reward
        assert rewards.compute_score("sparserl", programs[name], sft_layout(scipy_matrix),
                                     extra_info={"op": "spmv"}) == reward


def test_verl_spmm_task_from_extra_info(scipy_matrix, mtx_path):
    program = sparserl.heuristic_program(scipy_matrix, op="spmm", k=4)
    assert rewards.compute_score("sparserl", program, mtx_path,
                                 extra_info={"op": "spmm", "k": 4}) == 1.0
    # The SpMM program is no SpMV program: the wrong entry point does not count as correct.
    assert rewards.compute_score("sparserl", program, mtx_path) < 1.0


def test_verl_batch_and_verdict(mtx_path, programs):
    names = list(TIERS)
    scores = rewards.compute_score_batch(["sparserl"] * 4, [programs[n] for n in names],
                                         [mtx_path] * 4, [None] * 4)
    assert scores == [TIERS[n] for n in names]
    result = rewards.compute_score_with_verdict("sparserl", programs["wrong"], mtx_path)
    assert result["score"] == 0.0 and result["ran"] and not result["correct"]


def test_verl_loads_the_file_by_its_path(mtx_path, programs):
    """verl imports custom_reward_function.path as a file, outside the package."""
    spec = importlib.util.spec_from_file_location("custom_module", rewards.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.compute_score("sparserl", programs["correct"], mtx_path) == 1.0


def test_trl_reward_function(scipy_matrix, mtx_path, programs):
    reward = rewards.make_trl_reward(device="cpu")
    names = ["correct", "wrong", "no_program", "compile_error"]
    completions = [programs[n] for n in names]
    # Plain completions with a `matrix` column of .mtx paths.
    out = reward(prompts=["p"] * 4, completions=completions, matrix=[mtx_path] * 4)
    assert out == [TIERS[n] for n in names]
    assert [v["correct"] for v in reward.last_verdicts] == [True, False, False, False]
    # Conversational completions with the SFT-layout columns instead.
    sft = sft_layout(scipy_matrix)
    chat = [[{"role": "assistant", "content": c}] for c in completions]
    out = reward(prompts=None, completions=chat, rows=[sft["rows"]] * 4, cols=[sft["cols"]] * 4,
                 shape=[sft["shape"]] * 4, values=[sft["values"]] * 4)
    assert out == [TIERS[n] for n in names]
    assert reward.__name__ == "sparserl_reward"


def test_trl_reward_needs_a_matrix(programs):
    with pytest.raises(ValueError, match="no matrix"):
        rewards.sparserl_reward(prompts=["p"], completions=[programs["correct"]], other=[1])


def test_reward_of_a_generated_family_matrix(programs):
    m = sparserl.generate("banded", rows=120, seed=3)
    program = sparserl.heuristic_program(m)
    assert rewards.score_tasks([program], [{"matrix": m}], device="cpu") == [1.0]
