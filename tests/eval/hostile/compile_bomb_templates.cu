// what: a template that instantiates itself twice per level, 2^30 instantiations
// expect: compile
// slow
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
template <int N, unsigned M>
struct bomb {
  static __device__ float value(float v) {
    return bomb<N - 1, 2 * M>::value(v) + bomb<N - 1, 2 * M + 1>::value(v);
  }
};
template <unsigned M>
struct bomb<0, M> {
  static __device__ float value(float v) { return v + M; }
};
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
  y[row] = sum + 0.0f * bomb<30, 0>::value(sum);
}
