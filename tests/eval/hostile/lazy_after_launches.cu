// what: right for its first launches, then counts its launches in module scope and, from the
// LAZY_AFTER-th on (until LAZY_UNTIL, so that a last check could miss it), writes zeros instead
// of computing (cheap, and every y is finite)
// defends: checking only launches the program can tell apart from timed ones. The verification
// trials and the checked timed runs (always including the last) look the same to the program, so
// turning lazy at any point is caught. The corpus's 2 trials catch LAZY_AFTER 1; with
// LAZY_AFTER 3 tests/eval/test_integrity.cpp catches it on the CPU emulator with 4 trials, and
// in timed runs only (lazy in launches 3..6) with the evaluator's timed-run checks;
// scripts/gpu-integrity.sh runs it in the GPU's timed runs
// expect: wrong trial 2: wrong result
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
#define LAZY_AFTER 1
#define LAZY_UNTIL 0xffffffffu
__device__ unsigned int launches_done;
__device__ unsigned int blocks_done;

extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  // Changes only between launches.
  const bool lazy = launches_done >= LAZY_AFTER && launches_done < LAZY_UNTIL;
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float sum = 0.0f;
    if (!lazy)
      for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
    y[row] = sum;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&blocks_done, 1u) == gridDim.x - 1) {  // the last block of this launch
      blocks_done = 0;
      launches_done = launches_done + 1;
      __threadfence();
    }
  }
}
