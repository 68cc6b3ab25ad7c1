// what: recurses without bound, each frame holding a 1 KiB array
// expect-cpu: runtime stack overflow
// expect-gpu: runtime
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
__device__ float deep(int n, float* out) {
  volatile float pad[256];
  pad[n & 255] = static_cast<float>(n);
  if (n > 2000000000) return 0.0f;
  return deep(n + 1, out) + pad[(n * 7) & 255];
}
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
  y[row] = sum + 0.0f * deep(row, y);
}
