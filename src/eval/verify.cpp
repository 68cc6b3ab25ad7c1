#include "eval/verify.h"

#include <cfloat>
#include <cmath>

namespace sparserl {

namespace {

csr_matrix absolute(const csr_matrix& a) {
  csr_matrix m = a;
  for (float& v : m.values) v = std::fabs(v);
  return m;
}

std::vector<float> absolute(const std::vector<float>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = std::fabs(v[i]);
  return out;
}

void apply(sparse_op op, const csr_matrix& a, const std::vector<float>& in, int32_t k, float* out) {
  if (op == sparse_op::spmv)
    spmv_reference(a, in.data(), out);
  else
    spmm_reference(a, in.data(), k, out);
}

}  // namespace

reference_output compute_reference(sparse_op op, const csr_matrix& a,
                                   const std::vector<float>& input, int32_t k, double eps_factor) {
  const int32_t width = op == sparse_op::spmv ? 1 : k;
  reference_output ref;
  const size_t n = static_cast<size_t>(a.rows) * width;
  ref.value.resize(n);
  ref.bound.resize(n);
  apply(op, a, input, k, ref.value.data());
  apply(op, absolute(a), absolute(input), k, ref.bound.data());  // sum_j |a_ij| |x_j|
  for (int32_t r = 0; r < a.rows; ++r) {
    const double scale = eps_factor * FLT_EPSILON * (a.row_length(r) + 1);
    for (int32_t j = 0; j < width; ++j) {
      float& b = ref.bound[static_cast<size_t>(r) * width + j];
      b = static_cast<float>(b * scale);
    }
  }
  return ref;
}

check_result check_output(const reference_output& ref, const std::vector<float>& out) {
  check_result result;
  if (out.size() != ref.value.size()) {
    result.ok = false;
    result.bad_elements = static_cast<int64_t>(ref.value.size());
    return result;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const float o = out[i];
    bool bad;
    if (!std::isfinite(o)) {
      ++result.poisoned_elements;
      bad = true;
    } else {
      const double err = std::fabs(static_cast<double>(o) - ref.value[i]);
      const double ratio = ref.bound[i] > 0 ? err / ref.bound[i] : (err == 0 ? 0 : INFINITY);
      if (ratio > result.max_error_ratio) result.max_error_ratio = ratio;
      bad = ratio > 1.0;
    }
    if (bad) {
      if (result.first_bad < 0) result.first_bad = static_cast<int64_t>(i);
      ++result.bad_elements;
    }
  }
  result.ok = result.bad_elements == 0;
  return result;
}

std::string check_result::describe(sparse_op op, int32_t k) const {
  if (ok) return "all elements within tolerance";
  std::string where = "?";
  if (first_bad >= 0) {
    if (op == sparse_op::spmv)
      where = "y[" + std::to_string(first_bad) + "]";
    else
      where = "C[" + std::to_string(first_bad / k) + "][" + std::to_string(first_bad % k) + "]";
  }
  std::string text = std::to_string(bad_elements) + " wrong elements, first " + where;
  if (poisoned_elements > 0)
    text += "; " + std::to_string(poisoned_elements) + " not written or not finite";
  return text;
}

}  // namespace sparserl
