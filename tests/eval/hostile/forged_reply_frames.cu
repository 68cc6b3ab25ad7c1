// what: writes garbage to every descriptor 0..15, to corrupt or forge the runner's reply stream
// expect: rejected #include of 'unistd.h' is not allowed
// (the screen stops the include before it sees the call; sandbox-cpu shows the call's fate)
// sandbox-cpu: runtime
// sandbox-gpu: compile
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
#include <unistd.h>
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  const unsigned char junk[16] = {0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (int fd = 0; fd < 16; ++fd) (void)!write(fd, junk, sizeof(junk));
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
  y[row] = sum;
}
