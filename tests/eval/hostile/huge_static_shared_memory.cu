// what: declares 4 MiB of static shared memory
// expect: compile
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float big[1 << 20];
  big[threadIdx.x * 4096] = 1.0f;
  __syncthreads();
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
  y[row] = sum * big[(threadIdx.x * 4096 + 8192) & ((1 << 20) - 1)];
}
