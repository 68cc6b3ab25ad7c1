// what: executes a trap instruction
// expect-cpu: runtime __trap() called
// expect-gpu: runtime CUDA_ERROR_
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  __trap();
}
