// RCSR: the square matrix renumbered symmetrically by reverse Cuthill-McKee, B = P A P^T, stored
// as CSR with the permutation. On a matrix whose node numbering is random (meshes, kNN, road and
// power-law graphs as they come) SpMV's x gathers are what costs; after RCM the columns of a row
// lie near the row, so a kernel that first gathers x into the new numbering reads it locally.
#include <algorithm>
#include <string>

#include "sparse/error.h"
#include "sparse/format_detail.h"
#include "sparse/formats.h"
#include "sparse/node_order.h"

namespace sparserl {

namespace {

void check_square(const csr_matrix& a) {
  if (a.rows != a.cols)
    throw error("RCSR: the matrix is " + std::to_string(a.rows) + " x " + std::to_string(a.cols) +
                "; a symmetric renumbering needs a square matrix (use CSR)");
}

void check_rcsr_shape(const rcsr_matrix& a, const char* what) {
  const bool ok = a.rows >= 0 && a.rows == a.cols && a.perm.size() == static_cast<size_t>(a.rows) &&
                  a.row_ptr.size() == static_cast<size_t>(a.rows) + 1 &&
                  a.col_idx.size() == a.values.size() && a.row_ptr.front() == 0 &&
                  a.row_ptr.back() == static_cast<int64_t>(a.values.size());
  if (!ok) throw error(std::string(what) + ": inconsistent RCSR array sizes");
  for (int32_t p = 0; p < a.rows; ++p)
    if (a.row_ptr[p + 1] < a.row_ptr[p])
      throw error(std::string(what) + ": row_ptr decreases at row " + std::to_string(p));
}

}  // namespace

rcsr_matrix to_rcsr(const csr_matrix& a, std::vector<int32_t> perm) {
  validate_csr(a);
  check_square(a);
  const std::vector<int32_t> position = inverse_permutation(perm, a.rows, "RCSR");
  rcsr_matrix m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.row_ptr.assign(static_cast<size_t>(a.rows) + 1, 0);
  for (int32_t p = 0; p < a.rows; ++p) m.row_ptr[p + 1] = m.row_ptr[p] + a.row_length(perm[p]);
  m.col_idx.resize(a.col_idx.size());
  m.values.resize(a.values.size());
  std::vector<std::pair<int32_t, float>> row;
  for (int32_t p = 0; p < a.rows; ++p) {
    const int32_t old = perm[p];
    row.clear();
    for (int32_t e = a.row_ptr[old]; e < a.row_ptr[old + 1]; ++e)
      row.emplace_back(position[static_cast<size_t>(a.col_idx[e])], a.values[e]);
    // Columns are distinct, so sorting by the new column alone is a total order.
    std::sort(row.begin(), row.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    for (size_t i = 0; i < row.size(); ++i) {
      m.col_idx[m.row_ptr[p] + i] = row[i].first;
      m.values[m.row_ptr[p] + i] = row[i].second;
    }
  }
  m.perm = std::move(perm);
  return m;
}

rcsr_matrix to_rcsr(const csr_matrix& a) {
  validate_csr(a);
  check_square(a);
  return to_rcsr(a, reverse_cuthill_mckee_order(a));
}

csr_matrix to_csr(const rcsr_matrix& a) {
  check_rcsr_shape(a, "RCSR to CSR");
  // A = P^T B P: original row perm[p] is row p of B with its columns mapped back through perm.
  csr_matrix m;
  m.rows = a.rows;
  m.cols = a.cols;
  inverse_permutation(a.perm, a.rows, "RCSR to CSR");
  m.row_ptr.assign(static_cast<size_t>(a.rows) + 1, 0);
  for (int32_t p = 0; p < a.rows; ++p) m.row_ptr[a.perm[p] + 1] = a.row_ptr[p + 1] - a.row_ptr[p];
  for (int32_t r = 0; r < a.rows; ++r) m.row_ptr[r + 1] += m.row_ptr[r];
  m.col_idx.resize(a.col_idx.size());
  m.values.resize(a.values.size());
  std::vector<std::pair<int32_t, float>> row;
  for (int32_t p = 0; p < a.rows; ++p) {
    row.clear();
    for (int32_t e = a.row_ptr[p]; e < a.row_ptr[p + 1]; ++e) {
      if (a.col_idx[e] < 0 || a.col_idx[e] >= a.cols)
        throw error("RCSR to CSR: column out of range");
      row.emplace_back(a.perm[a.col_idx[e]], a.values[e]);
    }
    std::sort(row.begin(), row.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    const int32_t begin = m.row_ptr[a.perm[p]];
    for (size_t i = 0; i < row.size(); ++i) {
      m.col_idx[begin + i] = row[i].first;
      m.values[begin + i] = row[i].second;
    }
  }
  validate_csr(m);
  return m;
}

void spmv(const rcsr_matrix& a, const float* x, float* y) {
  check_rcsr_shape(a, "RCSR spmv");
  // What the kernels do: gather x into the new numbering, multiply by B, scatter y back.
  std::vector<float> work(static_cast<size_t>(a.rows));
  for (int32_t p = 0; p < a.rows; ++p) work[p] = x[a.perm[p]];
#pragma omp parallel for schedule( \
    dynamic, detail::rows_per_task) if (detail::parallel_worth(a.rows + a.nnz()))
  for (int32_t p = 0; p < a.rows; ++p) {
    double acc = 0;
    for (int32_t e = a.row_ptr[p]; e < a.row_ptr[p + 1]; ++e)
      acc += static_cast<double>(a.values[e]) * work[a.col_idx[e]];
    y[a.perm[p]] = static_cast<float>(acc);
  }
}

}  // namespace sparserl
