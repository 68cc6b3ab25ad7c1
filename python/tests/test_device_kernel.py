"""sparserl.compile: the preparation (NVRTC image, format arrays, launches) on any machine; the
launches themselves against the double-precision reference where torch sees a CUDA GPU
(scripts/gpu-python.sh on the GPU machine)."""

from __future__ import annotations

import numpy as np
import pytest

import sparserl
from conftest import random_csr
from sparserl import _core


def test_preparation_follows_the_abi(scipy_matrix):
    program = sparserl.heuristic_program(scipy_matrix, op="spmm", k=8)
    prepared = _core.prepare_device_kernel(sparserl.as_matrix(scipy_matrix), program, "spmm", 8,
                                           "sm_90")
    assert prepared["cubin"][:4] == b"\x7fELF"
    assert (prepared["rows"], prepared["cols"], prepared["k"]) == (96, 80, 8)
    kinds = [a["kind"] for a in prepared["args"]]
    assert kinds.count("input") == 1 and kinds.count("output") == 1
    for entry in prepared["entries"]:
        gx, gy, gz = entry["grid"]
        assert gx >= 1 and gy >= 1 and gz == 1 and 1 <= entry["block"] <= 1024
    if prepared["format"] == "CSR":  # the format arrays are the matrix's own
        arrays = {a["name"]: a["value"] for a in prepared["args"]}
        np.testing.assert_array_equal(arrays["row_ptr"], scipy_matrix.indptr)


def test_every_format_array_of_the_expert_space_reaches_python_with_its_type(scipy_matrix):
    # Each array kind the ABI has, CSR16's 16-bit column deltas included, arrives as a numpy
    # array of its element type (sparserl.compile uploads whatever ends in "_array").
    matrix = sparserl.as_matrix(scipy_matrix)
    dtypes = {"i32_array": np.int32, "f32_array": np.float32, "u16_array": np.uint16}
    seen = set()
    for op, k in (("spmv", 1), ("spmm", 8)):
        for config, program in sparserl.expert_programs(matrix, op, k):
            prepared = _core.prepare_device_kernel(matrix, program, op, k, "sm_90")
            for a in prepared["args"]:
                assert a["kind"] in ("i32", "input", "output", "scratch", *dtypes), (config, a["kind"])
                if a["kind"] in dtypes:
                    assert a["value"].dtype == dtypes[a["kind"]], (config, a["name"])
                    seen.add(a["kind"])
    assert seen == set(dtypes)


def test_bad_programs_are_refused_before_anything_runs(scipy_matrix, programs):
    matrix = sparserl.as_matrix(scipy_matrix)
    with pytest.raises(sparserl.Error, match="undeclared_name_xyz"):
        _core.prepare_device_kernel(matrix, programs["compile_error"], "spmv", 1, "sm_90")
    with pytest.raises(sparserl.Error, match="no program"):
        _core.prepare_device_kernel(matrix, programs["no_program"], "spmv", 1, "sm_90")


def cuda_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU visible to torch")
    return torch


def test_every_expert_program_matches_the_reference_on_the_gpu():
    torch = cuda_torch()
    a = random_csr(3000, 2500, 0.004, seed=5)
    a64 = a.astype(np.float64)
    rng = np.random.default_rng(1)
    for op, k in (("spmv", 1), ("spmm", 16)):
        x = rng.uniform(-1, 1, (a.shape[1], k) if op == "spmm" else a.shape[1]).astype(np.float32)
        reference = a64 @ x.astype(np.float64)
        x_gpu = torch.from_numpy(x).cuda()
        for config, program in sparserl.expert_programs(a, op, k):
            kernel = sparserl.compile(program, a, op=op, k=k)
            y = kernel(x_gpu)
            torch.cuda.synchronize()
            assert y.shape == reference.shape and y.dtype == torch.float32
            error = np.abs(y.cpu().numpy() - reference).max()
            assert error <= 1e-3 * max(1.0, np.abs(reference).max()), (config, error)
