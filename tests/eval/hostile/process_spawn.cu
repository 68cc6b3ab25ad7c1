// what: forks and execs a shell in the child
// expect: rejected #include of 'unistd.h' is not allowed
// (the screen stops the include before it sees the call; sandbox-cpu shows the call's fate)
// sandbox-cpu: runtime sandbox: forbidden system call
// sandbox-gpu: compile
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
#include <unistd.h>
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  if (threadIdx.x == 0 && fork() == 0) execl("/bin/sh", "sh", "-c", "touch /tmp/sparserl-hostile-pwned", (char*)0);
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
  y[row] = sum;
}
