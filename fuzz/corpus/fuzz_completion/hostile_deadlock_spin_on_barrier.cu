// what: warp 0 spins on a flag that the rest of the block sets only after a __syncthreads warp 0
// never reaches
// expect: runtime timeout after
// slow
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  __shared__ volatile int flag;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  if (threadIdx.x < 32) {
    while (flag == 0) {
    }
  } else {
    __syncthreads();
    flag = 1;
  }
}
