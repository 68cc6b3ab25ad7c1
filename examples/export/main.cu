// An application of an exported kernel (`sparserl export`, README.md here): builds a small
// matrix with rows of every kind (empty, short, long, one very long), runs the exported kernel on
// it through the header's class and compares every output element with a CPU CSR reference
// (double accumulation, the harness's tolerance). Prints PASS or FAIL; the exit code says the
// same (0 PASS, 1 FAIL).
//
// Build and run (examples/export/README.md; the header from the current directory):
//   nvcc -std=c++17 -O2 -arch=sm_90 -I. -o export_example examples/export/main.cu
//   ./export_example        # SpMM headers: ./export_example [k], default 16
#ifndef SPARSERL_EXPORT_HEADER
#define SPARSERL_EXPORT_HEADER "spmv_kernel.cuh"
#endif
#include SPARSERL_EXPORT_HEADER

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <set>
#include <vector>

namespace {

struct csr {
  int rows = 0, cols = 0;
  std::vector<int> row_ptr{0}, col_idx;
  std::vector<float> values;
};

// A seeded generator, so every run builds the same matrix.
struct lcg {
  uint64_t state;
  uint32_t next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  }
  float uniform() { return static_cast<float>(next()) / 2147483648.0f - 1.0f; }  // [-1, 1)
};

// Rows near the diagonal (band and a few far columns), every seventh row empty, row 5 long.
csr make_matrix(int rows, int cols, lcg& random) {
  csr a;
  a.rows = rows;
  a.cols = cols;
  for (int r = 0; r < rows; ++r) {
    std::set<int> columns;
    const int length = r % 7 == 3 ? 0
                       : r == 5   ? cols / 2
                                  : 1 + static_cast<int>(random.next() % 24);
    const int centre = static_cast<int>(static_cast<long long>(r) * cols / rows);
    while (static_cast<int>(columns.size()) < length) {
      const bool far = random.next() % 8 == 0;
      const int offset = static_cast<int>(random.next() % 64) - 32;
      const int col = far ? static_cast<int>(random.next() % cols) : centre + offset;
      if (col >= 0 && col < cols) columns.insert(col);
    }
    for (int col : columns) {  // std::set: ascending, as CSR requires
      a.col_idx.push_back(col);
      a.values.push_back(random.uniform());
    }
    a.row_ptr.push_back(static_cast<int>(a.col_idx.size()));
  }
  return a;
}

// Compares out (rows x k, row-major) with A in (cols x k) in double; the bound is the harness's:
// 8 * FLT_EPSILON * (row length + 1) * sum |a_ij| |in_j|.
bool check(const csr& a, const std::vector<float>& in, const std::vector<float>& out, int k,
           double& worst) {
  worst = 0;
  for (int r = 0; r < a.rows; ++r)
    for (int t = 0; t < k; ++t) {
      double sum = 0, magnitude = 0;
      for (int e = a.row_ptr[r]; e < a.row_ptr[r + 1]; ++e) {
        const double product = static_cast<double>(a.values[e]) * in[a.col_idx[e] * k + t];
        sum += product;
        magnitude += std::fabs(product);
      }
      const double bound = 8 * FLT_EPSILON * (a.row_ptr[r + 1] - a.row_ptr[r] + 1) * magnitude;
      const double got = out[static_cast<size_t>(r) * k + t];
      const double error = std::fabs(got - sum);
      if (!std::isfinite(got) || error > bound + DBL_MIN) {
        std::printf("row %d, column %d: got %.9g, expected %.9g\n", r, t, got, sum);
        return false;
      }
      if (bound > 0) worst = std::max(worst, error / bound);
    }
  return true;
}

void cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::printf("FAIL %s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rows = 2000, cols = 1700;  // DIA stays within the padding limit
#ifdef SPARSERL_EXPORT_SPMM
  const int k = argc > 1 ? std::atoi(argv[1]) : 16;  // columns of B
  const char* op = "spmm";
#else
  const int k = 1;
  const char* op = "spmv";
  (void)argc;
  (void)argv;
#endif
  lcg random{5};
  const csr a = make_matrix(rows, cols, random);
  const int nnz = static_cast<int>(a.col_idx.size());
  std::vector<float> in(static_cast<size_t>(cols) * k), out(static_cast<size_t>(rows) * k);
  for (float& v : in) v = random.uniform();

  float *d_in = nullptr, *d_out = nullptr;
  cuda(cudaMalloc(&d_in, in.size() * sizeof(float)), "cudaMalloc");
  cuda(cudaMalloc(&d_out, out.size() * sizeof(float)), "cudaMalloc");
  cuda(cudaMemcpy(d_in, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice), "upload");
  // NaN everywhere first: an element the kernel does not write fails the check.
  cuda(cudaMemset(d_out, 0xff, out.size() * sizeof(float)), "cudaMemset");
  try {
#ifdef SPARSERL_EXPORT_SPMM
    sparserl_export::spmm_kernel kernel(rows, cols, nnz, a.row_ptr.data(), a.col_idx.data(),
                                        a.values.data());
    kernel(d_in, d_out, k);
#else
    sparserl_export::spmv_kernel kernel(rows, cols, nnz, a.row_ptr.data(), a.col_idx.data(),
                                        a.values.data());
    kernel(d_in, d_out);
#endif
    cuda(cudaDeviceSynchronize(), "the kernel");
    std::printf("%s %s: %d x %d, %d nonzeros, k = %d, %zu bytes on the device\n", op,
                SPARSERL_EXPORT_FORMAT, rows, cols, nnz, k, kernel.device_bytes());
  } catch (const std::exception& e) {
    std::printf("FAIL %s %s: %s\n", op, SPARSERL_EXPORT_FORMAT, e.what());
    return 1;
  }
  cuda(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost),
       "download");
  cudaFree(d_in);
  cudaFree(d_out);
  double worst = 0;
  const bool ok = check(a, in, out, k, worst);
  std::printf("%s %s %s (largest error / tolerance %.3g)\n", ok ? "PASS" : "FAIL", op,
              SPARSERL_EXPORT_FORMAT, worst);
  return ok ? 0 : 1;
}
