// Matrix: the core's csr_matrix, made from a Matrix Market file, from CSR arrays (scipy.sparse,
// torch sparse CSR: python/sparserl/matrix.py converts them), from coordinates (the SFT layout
// the reward service and training use) or by a generator family.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "bindings.h"
#include "numpy_copy.h"
#include "sparse/error.h"
#include "sparse/features.h"
#include "sparse/generators.h"
#include "sparse/matrix_market.h"
#include "sparse/pattern_values.h"

namespace nb = nanobind;

namespace sparserl::python {
namespace {

using index_array = nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using value_array = nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// From CSR arrays that may be unsorted or hold duplicates (scipy allows both): through triplets,
// so the result has the core's invariants (sorted columns, duplicates summed). Without values
// every nonzero gets sparse/pattern_values.h's value, as pattern .mtx files do.
csr_matrix from_csr_arrays(int32_t rows, int32_t cols, index_array indptr, index_array indices,
                           std::optional<value_array> values) {
  if (rows < 0 || cols < 0) throw error("matrix shape must not be negative");
  if (indptr.shape(0) != static_cast<size_t>(rows) + 1)
    throw error("indptr has " + std::to_string(indptr.shape(0)) +
                " entries, expected rows + 1 = " + std::to_string(rows + 1));
  const int32_t* ptr = indptr.data();
  const size_t nnz = indices.shape(0);
  if (ptr[0] != 0 || static_cast<size_t>(ptr[rows]) != nnz)
    throw error("indptr must start at 0 and end at the number of indices (" + std::to_string(nnz) +
                ")");
  if (values && values->shape(0) != nnz)
    throw error("data has " + std::to_string(values->shape(0)) + " entries for " +
                std::to_string(nnz) + " indices");
  std::vector<triplet> entries;
  entries.reserve(nnz);
  for (int32_t r = 0; r < rows; ++r) {
    if (ptr[r + 1] < ptr[r]) throw error("indptr decreases at row " + std::to_string(r));
    for (int32_t i = ptr[r]; i < ptr[r + 1]; ++i)
      entries.push_back({r, indices.data()[i], values ? values->data()[i] : 0.0f});
  }
  csr_matrix m = csr_from_triplets(rows, cols, std::move(entries));
  if (!values) fill_pattern_values(m);
  return m;
}

// The SFT layout: 0-based coordinates of the nonzeros; a pattern position given twice counts once
// when there are no values (as in the reward service), valued duplicates are summed.
csr_matrix from_coordinates(int32_t rows, int32_t cols, index_array row_idx, index_array col_idx,
                            std::optional<value_array> values) {
  if (row_idx.shape(0) != col_idx.shape(0))
    throw error("rows and cols differ in length (" + std::to_string(row_idx.shape(0)) + " vs " +
                std::to_string(col_idx.shape(0)) + ")");
  if (values && values->shape(0) != row_idx.shape(0))
    throw error("values has " + std::to_string(values->shape(0)) + " entries for " +
                std::to_string(row_idx.shape(0)) + " coordinates");
  std::vector<triplet> entries;
  entries.reserve(row_idx.shape(0));
  for (size_t i = 0; i < row_idx.shape(0); ++i)
    entries.push_back({row_idx.data()[i], col_idx.data()[i], values ? values->data()[i] : 0.0f});
  csr_matrix m = csr_from_triplets(rows, cols, std::move(entries));
  if (!values) fill_pattern_values(m);
  return m;
}

}  // namespace

void bind_matrix(nb::module_& m) {
  nb::class_<csr_matrix>(m, "Matrix",
                         "A sparse matrix in CSR (32-bit indices, float values), as the harness "
                         "evaluates programs on it")
      .def_ro("rows", &csr_matrix::rows)
      .def_ro("cols", &csr_matrix::cols)
      .def_prop_ro("nnz", &csr_matrix::nnz)
      // Copies that own themselves (not views tied to the Matrix: hence not reference_internal).
      .def_prop_ro(
          "indptr", [](const csr_matrix& a) { return numpy_copy(a.row_ptr); }, nb::rv_policy::move)
      .def_prop_ro(
          "indices", [](const csr_matrix& a) { return numpy_copy(a.col_idx); }, nb::rv_policy::move)
      .def_prop_ro(
          "data", [](const csr_matrix& a) { return numpy_copy(a.values); }, nb::rv_policy::move)
      .def(
          "features_json",
          [](const csr_matrix& a) { return features_to_json(compute_features(a)).dump(); },
          "The structural features (sparserl matrix info --json) as JSON text")
      .def("__repr__", [](const csr_matrix& a) {
        return "<sparserl.Matrix " + std::to_string(a.rows) + " x " + std::to_string(a.cols) +
               ", " + std::to_string(a.nnz()) + " nonzeros>";
      });

  m.def(
      "read_matrix_market", [](const std::string& path) { return read_matrix_market(path); },
      nb::arg("path"), nb::call_guard<nb::gil_scoped_release>(),
      "A Matrix Market file (.mtx, .mtx.gz); pattern files get sparse/pattern_values.h's values");
  m.def(
      "write_matrix_market",
      [](const csr_matrix& matrix, const std::string& path) { write_matrix_market(path, matrix); },
      nb::arg("matrix"), nb::arg("path"), nb::call_guard<nb::gil_scoped_release>(),
      "Writes coordinate real general (.gz: compressed), atomically");
  m.def("matrix_from_csr_arrays", &from_csr_arrays, nb::arg("rows"), nb::arg("cols"),
        nb::arg("indptr"), nb::arg("indices"), nb::arg("data").none());
  m.def("matrix_from_coordinates", &from_coordinates, nb::arg("rows"), nb::arg("cols"),
        nb::arg("row_indices"), nb::arg("col_indices"), nb::arg("values").none());
  m.def(
      "generate_matrix",
      [](const std::string& family, int32_t rows, uint64_t seed) {
        generator_spec spec = default_spec(family);
        spec.rows = rows;
        spec.seed = seed;
        return generate_matrix(spec);
      },
      nb::arg("family"), nb::arg("rows"), nb::arg("seed") = 1,
      "A matrix of one of the generator families (sparserl matrix families) with their defaults");
}

}  // namespace sparserl::python
