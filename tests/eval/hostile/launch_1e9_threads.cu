// what: a correct program launched as 10^6 blocks of 1024 threads (10^9 threads, inside the
// launch limit): a GPU finishes it in milliseconds, the CPU emulator cannot within its time limit
// expect-cpu: runtime timeout after
// expect-gpu: correct
// slow
FORMAT: CSR
LAUNCH: block=1024 grid=1000000
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
  y[row] = sum;
}
