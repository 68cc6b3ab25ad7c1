"""Shared inputs of the sparserl package tests: small matrices and programs from the expert
library, made here (nothing is a stored result).

Run against the installed package (scripts/test.sh: scripts/python-install.sh, then pytest)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import sparserl


def random_csr(rows: int, cols: int, density: float, seed: int) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    a = sp.random(rows, cols, density=density, format="csr", random_state=rng, dtype=np.float32)
    a.data = rng.uniform(-1, 1, a.nnz).astype(np.float32)  # signed, no zeros in the pattern
    a.data[np.abs(a.data) < 0.1] = 0.5
    return a


def wrong_program(matrix) -> str:
    """The expert library's csr_scalar SpMV with its result halved: it compiles and runs, and
    only verification can catch it."""
    for config, text in sparserl.expert_programs(matrix, "spmv"):
        if config.startswith("csr_scalar"):
            assert "y[row] = sum;" in text, "csr_scalar's source changed: update the mutation"
            return text.replace("y[row] = sum;", "y[row] = 0.5f * sum;")
    raise AssertionError("no csr_scalar program in the expert space of the test matrix")


@pytest.fixture(scope="session")
def scipy_matrix() -> sp.csr_matrix:
    return random_csr(96, 80, 0.05, seed=7)


@pytest.fixture(scope="session")
def mtx_path(tmp_path_factory, scipy_matrix) -> str:
    path = tmp_path_factory.mktemp("matrices") / "a.mtx"
    sparserl.write_matrix_market(scipy_matrix, path)
    return str(path)


@pytest.fixture(scope="session")
def programs(scipy_matrix) -> dict:
    """One completion of each reward tier for scipy_matrix."""
    correct = sparserl.heuristic_program(scipy_matrix)
    return {
        "correct": correct,
        "wrong": wrong_program(scipy_matrix),
        # A program whose device source does not compile: an undeclared name in the kernel.
        "compile_error": correct.replace("{", "{ undeclared_name_xyz = 1;", 1),
        "no_program": "I am not sure how to write this kernel.",
    }
