// what: every thread prints 100 lines of 100 bytes (1000 rows: 10 MB of log), then computes y
// expect: rejected 'printf' is not allowed
// sandbox-cpu: ran
// sandbox-gpu: ran
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  for (int i = 0; i < 100; ++i)
    printf("%06d flood flood flood flood flood flood flood flood flood flood flood flood flood flood\n", i);
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
  y[row] = sum;
}
