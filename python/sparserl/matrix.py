"""Matrices for the harness: `as_matrix` turns what a caller has into a sparserl.Matrix (CSR,
32-bit indices, float32 values, as the kernels see it).

Accepted: a Matrix; a path to a Matrix Market file (.mtx, .mtx.gz); a scipy.sparse matrix or
array (any format, through .tocsr()); a torch sparse CSR or COO tensor (torch stays optional: it
is never imported here); a dict in the SFT layout (`rows`, `cols`: 0-based coordinates of the
nonzeros, `shape`, optional `values`), as the reward service and the training data use. Without
values, each nonzero gets the harness's pattern value (src/sparse/pattern_values.h), as pattern
.mtx files do.
"""

from __future__ import annotations

import collections
import os
import threading
from typing import Any

import numpy as np

from . import _core

Matrix = _core.Matrix

_INT32_MAX = np.iinfo(np.int32).max
# Files and SFT dicts already converted (rewards see the same task many times): a small LRU.
_CACHE_ENTRIES = 64
_cache: "collections.OrderedDict[Any, Matrix]" = collections.OrderedDict()
_cache_lock = threading.Lock()


def _int32(array: Any, what: str) -> np.ndarray:
    a = np.asarray(array)
    if a.size and (a.min() < 0 or a.max() > _INT32_MAX):
        raise ValueError(f"{what}: values outside [0, 2^31): the harness uses 32-bit indices")
    return np.ascontiguousarray(a, dtype=np.int32)


def _float32(array: Any) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(array), dtype=np.float32)


def from_csr_arrays(shape, indptr, indices, data=None) -> Matrix:
    """A Matrix from CSR arrays (unsorted columns and duplicates allowed: duplicates are summed)."""
    rows, cols = (int(s) for s in shape)
    return _core.matrix_from_csr_arrays(rows, cols, _int32(indptr, "indptr"),
                                        _int32(indices, "indices"),
                                        None if data is None else _float32(data))


def from_scipy(a: Any) -> Matrix:
    csr = a.tocsr()
    return from_csr_arrays(csr.shape, csr.indptr, csr.indices, csr.data)


def from_torch(t: Any) -> Matrix:
    layout = str(t.layout)
    if layout == "torch.sparse_csr":
        return from_csr_arrays(t.shape, t.crow_indices().cpu().numpy(),
                               t.col_indices().cpu().numpy(),
                               t.values().detach().float().cpu().numpy())
    if layout == "torch.sparse_coo":
        c = t.coalesce()
        idx = c.indices().cpu().numpy()
        return from_coordinates(c.shape, idx[0], idx[1], c.values().detach().float().cpu().numpy())
    raise TypeError(f"a torch tensor with layout {layout}: expected torch.sparse_csr or sparse_coo")


def from_coordinates(shape, rows, cols, values=None) -> Matrix:
    """A Matrix from 0-based coordinates (the SFT layout); without values, pattern values."""
    n, m = (int(s) for s in shape)
    return _core.matrix_from_coordinates(n, m, _int32(rows, "rows"), _int32(cols, "cols"),
                                         None if values is None else _float32(values))


def read_matrix_market(path: str | os.PathLike) -> Matrix:
    return _core.read_matrix_market(os.fspath(path))


def _cached(key: Any, make) -> Matrix:
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    m = make()
    with _cache_lock:
        _cache[key] = m
        while len(_cache) > _CACHE_ENTRIES:
            _cache.popitem(last=False)
    return m


def as_matrix(matrix: Any) -> Matrix:
    """A sparserl.Matrix from any of the forms in this module's docstring."""
    if isinstance(matrix, Matrix):
        return matrix
    if isinstance(matrix, (str, os.PathLike)):
        path = os.path.abspath(os.fspath(matrix))
        st = os.stat(path)  # a rewritten file is read again
        return _cached(("file", path, st.st_mtime_ns, st.st_size), lambda: read_matrix_market(path))
    if isinstance(matrix, dict):
        if "matrix" in matrix:
            return as_matrix(matrix["matrix"])
        missing = [f for f in ("rows", "cols", "shape") if f not in matrix]
        if missing:
            raise ValueError(f"a matrix dict needs rows, cols and shape (the SFT layout); "
                             f"missing {missing}")
        values = matrix.get("values")
        key = ("sft", tuple(matrix["shape"]), tuple(matrix["rows"]), tuple(matrix["cols"]),
               None if values is None else tuple(values))
        return _cached(key, lambda: from_coordinates(matrix["shape"], matrix["rows"],
                                                     matrix["cols"], values))
    if type(matrix).__module__.startswith("torch"):
        return from_torch(matrix)
    if hasattr(matrix, "tocsr"):
        return from_scipy(matrix)
    raise TypeError(f"cannot make a sparserl matrix from {type(matrix).__name__}: give a Matrix, "
                    "a .mtx path, a scipy.sparse matrix, a torch sparse tensor or an SFT dict")


def generate(family: str, rows: int, seed: int = 1) -> Matrix:
    """A matrix of a generator family (`sparserl matrix families`) with the family's defaults."""
    return _core.generate_matrix(family, int(rows), int(seed))


def write_matrix_market(matrix: Any, path: str | os.PathLike) -> None:
    """Writes the matrix as a Matrix Market coordinate real general file (.gz: compressed)."""
    _core.write_matrix_market(as_matrix(matrix), os.fspath(path))
