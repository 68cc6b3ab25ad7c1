// what: makes a raw system call (open of a host file) through inline assembly
// expect: rejected inline assembly
// sandbox-cpu: runtime sandbox: forbidden system call open
// sandbox-gpu: compile
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  long ret;
  const char* path = "/tmp/sparserl-hostile-pwned";
  asm volatile("syscall" : "=a"(ret) : "a"(2L), "D"(path), "S"(0101L), "d"(0644L) : "rcx", "r11", "memory");
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
  y[row] = sum + 0.0f * static_cast<float>(ret);
}
