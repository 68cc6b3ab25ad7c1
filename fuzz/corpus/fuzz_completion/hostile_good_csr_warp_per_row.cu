// what: a correct CSR SpMV, a warp per row with a shuffle reduction, inside prose and a fence
// expect: correct
Here is a warp-per-row kernel:
```cuda
FORMAT: CSR
LAUNCH: block=256 rows_per_block=8
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * SPARSERL_ROWS_PER_BLOCK + threadIdx.x / 32;
  if (row >= rows) return;  // the whole warp leaves together
  float sum = 0.0f;
  for (int i = row_ptr[row] + lane; i < row_ptr[row + 1]; i += 32) sum += values[i] * __ldg(&x[col_idx[i]]);
  for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) y[row] = sum;
}
```
