// what: opens a TCP socket to the outside
// expect: rejected #include of 'sys/socket.h' is not allowed
// (the screen stops the include before it sees the call; sandbox-cpu shows the call's fate)
// sandbox-cpu: runtime sandbox: forbidden system call socket
// sandbox-gpu: compile
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
#include <sys/socket.h>
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  const int s = socket(2, 1, 0);
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
  y[row] = sum + 0.0f * s;
}
