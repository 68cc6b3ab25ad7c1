// what: includes a host header and calls getpid
// expect: rejected 'unistd.h' is not allowed
// sandbox-cpu: runtime sandbox: forbidden system call getpid
// sandbox-gpu: compile
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
#include <unistd.h>
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
  y[row] = sum + 0.0f * static_cast<float>(getpid());
}
