// what: half of each block returns, the other half waits at __syncthreads
// expect-cpu: runtime deadlock: __syncthreads not reached by all threads of block
// expect-gpu: failed (on sm_70+ exited threads count as arrived: the unwritten rows are wrong)
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  if (threadIdx.x >= 64) return;
  __syncthreads();
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) y[row] = 0.0f;
}
