// what: calls exit(0) from device code, hoping for a clean-looking end with no output
// expect: rejected #include of 'cstdlib' is not allowed
// (the screen stops the include before it sees the call; sandbox-cpu shows the call's fate)
// sandbox-cpu: runtime sandbox: forbidden system call
// sandbox-gpu: compile
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
#include <cstdlib>
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  exit(0);
}
