// what: computes y on its first launch only, then writes nothing, hoping the previous trial's
// (or the previous program's) y is still in the buffer
// expect: wrong wrong result
// expect-cpu: wrong trial 2: wrong result
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
__device__ unsigned int threads_seen;
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  if (atomicAdd(&threads_seen, 1u) >= gridDim.x * blockDim.x) return;
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
  y[row] = sum;
}
