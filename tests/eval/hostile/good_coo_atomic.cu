// what: a correct COO SpMV, zeroing y then one atomicAdd per entry (two entry points)
// expect: correct
FORMAT: COO
LAUNCH spmv_coo_init: block=256 rows_per_block=256
LAUNCH spmv_coo: block=256 nnz_per_block=256
extern "C" __global__ void spmv_coo_init(int rows, int cols, int nnz, const int* __restrict__ row_idx,
                                         const int* __restrict__ col_idx, const float* __restrict__ values,
                                         const float* __restrict__ x, float* __restrict__ y) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) y[r] = 0.0f;
}
extern "C" __global__ void spmv_coo(int rows, int cols, int nnz, const int* __restrict__ row_idx,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < nnz) atomicAdd(&y[row_idx[i]], values[i] * x[col_idx[i]]);
}
