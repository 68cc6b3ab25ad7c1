// what: spins forever
// expect: runtime timeout after
// slow
FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx, const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  // clock64() is never negative, but no compiler can know: a loop it must keep (NVVM deletes a
  // spin on a volatile local).
  long long spins = 0;
  while (clock64() >= 0) ++spins;
  y[0] = static_cast<float>(spins);
}
