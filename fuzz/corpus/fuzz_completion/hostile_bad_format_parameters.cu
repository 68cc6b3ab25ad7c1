// what: a SELL slice height that is not a power of two and far beyond the limit
// expect: no-program
FORMAT: SELL C=1000000007 sigma=1
LAUNCH: block=128 rows_per_block=128
extern "C" __global__ void spmv_sell(int rows, int cols, int slice_height, int num_slices,
                                     const int* __restrict__ slice_ptr, const int* __restrict__ slice_width,
                                     const int* __restrict__ perm, const int* __restrict__ col_idx,
                                     const float* __restrict__ values, const float* __restrict__ x,
                                     float* __restrict__ y) {}
