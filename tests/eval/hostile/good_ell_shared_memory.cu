// what: a correct ELL SpMV that stages its sums through dynamic shared memory
// expect: correct
FORMAT: ELL
LAUNCH: block=64 rows_per_block=64 shared=256
extern "C" __global__ void spmv_ell(int rows, int cols, int width, const int* __restrict__ col_idx,
                                    const float* __restrict__ values, const float* __restrict__ x,
                                    float* __restrict__ y) {
  extern __shared__ float stage[];
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  float sum = 0.0f;
  if (row < rows)
    for (int j = 0; j < width; ++j) {
      const int c = col_idx[j * rows + row];
      if (c >= 0) sum += values[j * rows + row] * x[c];
    }
  stage[threadIdx.x] = sum;
  __syncthreads();
  if (row < rows) y[row] = stage[threadIdx.x];
}
