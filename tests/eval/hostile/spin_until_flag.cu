// what: waits for a module-scope flag that nothing ever sets, so every launch spins forever
// defends: the per-launch time limit. Either executor must end it within the limit (+1 s),
// judge it a timeout, and serve the next program at once (the GPU worker polls the stream against
// the limit and exits, the pool starts another; the CPU runner kills a child that reports no
// trial within the limit)
// expect: runtime timeout after
// slow
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
__device__ int never_set;

extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  // An atomic read each time round: no compiler may hoist it out of the loop.
  while (atomicAdd(&never_set, 0) == 0) {
  }
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) y[row] = 0.0f;
}
