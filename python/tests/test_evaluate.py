"""evaluate / evaluate_many / heuristic_program / tune on the CPU emulator, in-process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import sparserl
from conftest import random_csr


def test_expert_program_is_correct_on_scipy_and_mtx(scipy_matrix, mtx_path, programs):
    for matrix in (scipy_matrix, mtx_path):
        v = sparserl.evaluate(programs["correct"], matrix, op="spmv", device="cpu")
        assert v["correct"] and v["compiled"] and v["ran"] and v["extracted"], v["failure"]
        assert v["failure"] == ""
        assert v["executor"] == "cpu"
        assert v["trials"] == 3
        assert v["max_error_ratio"] <= 1.0
        assert v["kernel_ms"] is None  # the emulator does not time
        assert v["reward"] == 1.0


def test_wrong_program_fails_verification(scipy_matrix, programs):
    v = sparserl.evaluate(programs["wrong"], scipy_matrix, device="cpu")
    assert v["compiled"] and v["ran"] and not v["correct"]
    assert v["failure"] != ""
    assert v["max_error_ratio"] > 1.0
    assert v["reward"] == 0.0


def test_compile_error_and_no_program(scipy_matrix, programs):
    v = sparserl.evaluate(programs["compile_error"], scipy_matrix, device="cpu")
    assert v["extracted"] and not v["compiled"] and "undeclared_name_xyz" in v["compile_log"]
    assert v["reward"] == -0.5
    v = sparserl.evaluate(programs["no_program"], scipy_matrix, device="cpu")
    assert not v["extracted"] and v["reward"] == -1.0


def test_spmm_heuristic_program_is_correct(scipy_matrix):
    program = sparserl.heuristic_program(scipy_matrix, op="spmm", k=8)
    v = sparserl.evaluate(program, scipy_matrix, op="spmm", k=8, device="cpu")
    assert v["correct"], v["failure"]


def test_verdict_has_the_cli_json_fields(tmp_path, mtx_path, programs):
    """The same verdict through `python -m sparserl eval --json` (the CLI in-process)."""
    for name in ("correct", "wrong"):
        program = tmp_path / f"{name}.cu"
        program.write_text(programs[name])
        cli = subprocess.run([sys.executable, "-m", "sparserl", "eval", "--matrix", mtx_path,
                              "--program", str(program), "--device", "cpu", "--json"],
                             capture_output=True, text=True, timeout=300)
        assert cli.returncode == (0 if name == "correct" else 1), cli.stderr
        from_cli = json.loads(cli.stdout)
        from_python = sparserl.evaluate(programs[name], mtx_path, device="cpu")
        assert set(from_python) == set(from_cli)
        for field in ("extracted", "compiled", "ran", "correct", "reward", "executor", "trials",
                      "footprint_bytes", "bytes_moved"):
            assert from_python[field] == from_cli[field], field


def test_evaluate_many_keeps_the_order(scipy_matrix, mtx_path, programs):
    order = ["no_program", "correct", "wrong", "compile_error", "correct"]
    verdicts = sparserl.evaluate_many([programs[n] for n in order],
                                      [scipy_matrix, mtx_path, scipy_matrix, mtx_path, mtx_path],
                                      device="cpu", threads=2)
    assert [v["reward"] for v in verdicts] == [-1.0, 1.0, 0.0, -0.5, 1.0]


def test_tune_ranks_the_expert_space(tmp_path):
    a = random_csr(48, 48, 0.1, seed=11)
    best = tmp_path / "best.cu"
    result = sparserl.tune(a, device="cpu", threads=2, output=best)
    assert result["executor"] == "cpu"
    assert len(result["candidates"]) == len(sparserl.expert_programs(a))
    assert result["correct"] == sum(c["correct"] for c in result["candidates"]) > 0
    assert result["best"]["correct"]
    assert best.read_text() == result["best"]["program"]
    assert sparserl.evaluate(best.read_text(), a, device="cpu")["correct"]


def test_bad_op_is_refused(scipy_matrix, programs):
    with pytest.raises(sparserl.Error, match="spmv or spmm"):
        sparserl.evaluate(programs["correct"], scipy_matrix, op="spgemm")
