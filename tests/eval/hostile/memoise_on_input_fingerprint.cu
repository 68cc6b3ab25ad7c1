// what: keeps its last y in module-scope __device__ memory keyed by a 32-sample fingerprint of x
// and replays it when the fingerprint repeats (every result right for its x; fast only when the
// harness reuses one x across timed runs)
// defends: timing on one input. Every timed run gets fresh x (made outside the timed region) and
// the checked runs are verified against their own x, so the cache never hits and cannot pay;
// scripts/gpu-integrity.sh compares its speed-up with its twin, good_csr_thread_per_row
// expect: correct
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
#define CACHE_ROWS (1 << 20)
#define SAMPLES 32
__device__ float cached_y[CACHE_ROWS];
__device__ float cached_key[SAMPLES];
__device__ int cache_valid;
__device__ unsigned int blocks_done;

extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  // The key stays fixed during a launch: only the launch's last block rewrites it.
  bool hit = cache_valid != 0 && rows <= CACHE_ROWS && cols > 0;
  for (int s = 0; hit && s < SAMPLES; ++s)
    hit = x[(int)(((long long)s * 7919) % cols)] == cached_key[s];
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    if (hit) {
      y[row] = cached_y[row];
    } else {
      float sum = 0.0f;
      for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
      y[row] = sum;
      if (rows <= CACHE_ROWS) cached_y[row] = sum;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&blocks_done, 1u) == gridDim.x - 1) {  // the last block of this launch
      for (int s = 0; s < SAMPLES && cols > 0; ++s)
        cached_key[s] = x[(int)(((long long)s * 7919) % cols)];
      cache_valid = rows <= CACHE_ROWS;
      blocks_done = 0;
      __threadfence();
    }
  }
}
