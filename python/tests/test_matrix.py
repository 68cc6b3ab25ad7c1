"""Matrices reach the core unchanged from scipy, torch, Matrix Market files and the SFT layout."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import sparserl
from conftest import random_csr


def assert_same(matrix: sparserl.Matrix, a: sp.csr_matrix) -> None:
    a = a.tocsr().copy()
    a.sum_duplicates()
    a.sort_indices()
    assert (matrix.rows, matrix.cols, matrix.nnz) == (a.shape[0], a.shape[1], a.nnz)
    np.testing.assert_array_equal(matrix.indptr, a.indptr)
    np.testing.assert_array_equal(matrix.indices, a.indices)
    np.testing.assert_array_equal(matrix.data, a.data.astype(np.float32))


def test_scipy_csr_and_other_formats():
    a = random_csr(70, 50, 0.08, seed=1)
    assert_same(sparserl.as_matrix(a), a)
    assert_same(sparserl.as_matrix(a.tocoo()), a)
    assert_same(sparserl.as_matrix(sp.csr_array(a)), a)


def test_unsorted_columns_and_duplicates_are_summed():
    indptr = np.array([0, 3, 3, 5])
    indices = np.array([2, 0, 2, 1, 0])
    data = np.array([1.0, 2.0, 4.0, 8.0, 16.0], dtype=np.float32)
    a = sp.csr_matrix((data, indices, indptr), shape=(3, 3))
    m = sparserl.as_matrix(a)
    assert_same(m, a)
    assert m.nnz == 4 and m.data[1] == 5.0  # (0, 2): 1 + 4


def test_matrix_market_round_trip(tmp_path):
    a = random_csr(40, 60, 0.1, seed=2)
    path = tmp_path / "m.mtx"
    sparserl.write_matrix_market(a, path)
    assert_same(sparserl.as_matrix(str(path)), a)
    assert_same(sparserl.read_matrix_market(path), a)


def test_sft_layout_without_values_gets_pattern_values():
    m = sparserl.as_matrix({"rows": [0, 1, 2, 2], "cols": [1, 0, 2, 0], "shape": [3, 3]})
    assert m.nnz == 4
    assert np.all((np.abs(m.data) >= 0.5) & (np.abs(m.data) < 1.0))
    assert len(set(m.data.tolist())) > 1  # not all one value: a kernel ignoring them fails


def test_torch_sparse_csr():
    torch = pytest.importorskip("torch")
    a = random_csr(30, 20, 0.2, seed=3)
    t = torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                                torch.from_numpy(a.indices.astype(np.int64)),
                                torch.from_numpy(a.data), size=a.shape)
    assert_same(sparserl.as_matrix(t), a)


def test_bad_arrays_are_refused():
    with pytest.raises(sparserl.Error, match="indptr"):
        sparserl.from_csr_arrays((2, 2), [0, 1], [0], [1.0])
    with pytest.raises(sparserl.Error):
        sparserl.from_csr_arrays((2, 2), [0, 1, 2], [0, 5], [1.0, 2.0])  # column 5 of 2
    with pytest.raises(TypeError):
        sparserl.as_matrix(3.5)
