// what: a correct CSR SpMM (k columns of B), one thread per (row, column block)
// op: spmm
// expect: correct
FORMAT: CSR
LAUNCH: block=64 rows_per_block=64 k_per_block=2
extern "C" __global__ void spmm_csr(int rows, int cols, int k, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ B, float* __restrict__ C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  for (int j = blockIdx.y * SPARSERL_K_PER_BLOCK; j < min(k, (int)(blockIdx.y + 1) * SPARSERL_K_PER_BLOCK); ++j) {
    float sum = 0.0f;
    for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * B[col_idx[i] * k + j];
    C[row * k + j] = sum;
  }
}
