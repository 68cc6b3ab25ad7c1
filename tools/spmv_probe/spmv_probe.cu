// SpMV probe: times kernel variants outside the harness against cuSPARSE, in one process, on one
// Matrix Market file, to decide which ideas deserve an expert template (docs/benchmarks.md quotes
// its tables). Not part of the build: scripts/gpu-spmv-probe.sh compiles it with nvcc on the GPU
// machine.
//
//   spmv_probe MATRIX.mtx [NAME]   prints one line per variant: median ms, speed-up over the best
//                                  cuSPARSE algorithm, max error / tolerance
//
// Variants (all fp32, y = A x):
//   coo S            the library's COO template (zero y, warps scan 32 x S entries, atomics)
//   coo_cs S         the same with the matrix streamed by __ldcs (evict-first), x by __ldg
//   chunk S          CSR arrays, the COO template's work split (32 x S nonzeros a warp) with each
//                    nonzero's row derived from row_ptr: a warp finds its first row by a 32-ary
//                    search, then each step loads the 32 row ends after the current row and every
//                    lane counts those <= its nonzero by a 5-step descent over shuffles. y zeroed
//                    first, one atomic per row segment: 8 bytes a nonzero instead of COO's 12.
//   chunk_cs S       the same, streamed by __ldcs
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                            \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)
#define CS(x)                                                                    \
  do {                                                                           \
    cusparseStatus_t s_ = (x);                                                   \
    if (s_ != CUSPARSE_STATUS_SUCCESS) {                                         \
      fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, #x, (int)s_); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

constexpr unsigned kFull = 0xffffffffu;

template <bool kStream, typename T>
__device__ __forceinline__ T load(const T* p) {
  if constexpr (kStream)
    return __ldcs(p);
  else
    return *p;
}

__global__ void zero_y(int rows, float* __restrict__ y) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows) y[i] = 0.0f;
}

// The warp-segmented sum of one 32-entry step (rows ascending, -1 = past the end), as the COO
// template does it: one atomic per segment end, the last segment carried to the next step.
__device__ __forceinline__ void segment_step(int lane, int row, float v, int& carry_row,
                                             float& carry, float* __restrict__ y) {
  if (lane == 0) {
    if (row == carry_row)
      v += carry;
    else if (carry_row >= 0)
      atomicAdd(&y[carry_row], carry);
  }
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
    const float up = __shfl_up_sync(kFull, v, offset);
    const int up_row = __shfl_up_sync(kFull, row, offset);
    if (lane >= offset && up_row == row) v += up;
  }
  const int next_row = __shfl_down_sync(kFull, row, 1);
  if (lane < 31 && row >= 0 && next_row != row) atomicAdd(&y[row], v);
  carry_row = __shfl_sync(kFull, row, 31);
  carry = __shfl_sync(kFull, v, 31);
}

template <int kSteps, bool kStream>
__global__ void coo_kernel(int nnz, const int* __restrict__ row_idx,
                           const int* __restrict__ col_idx, const float* __restrict__ values,
                           const float* __restrict__ x, float* __restrict__ y) {
  const int lane = threadIdx.x & 31;
  const long long warp = (long long)blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5);
  const long long first = warp * (32LL * kSteps);
  int carry_row = -1;
  float carry = 0.0f;
  for (int step = 0; step < kSteps; ++step) {
    const long long e = first + step * 32 + lane;
    int row = -1;
    float v = 0.0f;
    if (e < nnz) {
      row = load<kStream>(&row_idx[e]);
      v = load<kStream>(&values[e]) * __ldg(&x[load<kStream>(&col_idx[e])]);
    }
    segment_step(lane, row, v, carry_row, carry, y);
  }
  if (lane == 0 && carry_row >= 0) atomicAdd(&y[carry_row], carry);
}

// The row holding nonzero `e`: the largest r with row_ptr[r] <= e, by a 33-ary search: each
// round the warp probes 32 rows spread over the interval and keeps the gap that holds e
// (about 4 rounds for 10^6 rows, each one warp-wide load).
__device__ __forceinline__ int warp_find_row(int lane, int rows, const int* __restrict__ row_ptr,
                                             long long e) {
  int lo = 0, hi = rows;  // row_ptr[lo] <= e < row_ptr[hi] (row_ptr[rows] = nnz > e)
  while (hi - lo > 1) {
    const int probe = lo + (int)((long long)(hi - lo) * (lane + 1) / 33);  // ascending, in [lo, hi)
    // Probes ascend with the lane, so those at or before e are a prefix of the lanes.
    const int count = __popc(__ballot_sync(kFull, row_ptr[probe] <= e));
    const int last_le = __shfl_sync(kFull, probe, max(count - 1, 0));
    const int first_gt = __shfl_sync(kFull, probe, min(count, 31));
    if (count > 0) lo = last_le;
    if (count < 32) hi = first_gt;
  }
  return lo;
}

// Rows r .. of nonzeros base .. base+31 (-1 past nnz): lane i's row is r + #{j : row_ptr[r+1+j]
// <= base + i}, counted by a 5-step descent over the 32 row ends the warp loads; more than 31
// ends inside the window (empty rows) move it on. r must start at or before base.
__device__ __forceinline__ int step_row(int lane, int rows, int nnz,
                                        const int* __restrict__ row_ptr, int r, long long base) {
  int window = r, offset = -1;
  while (true) {
    const int idx = window + 1 + lane;
    const long long end = idx <= rows ? (long long)row_ptr[idx] : (long long)nnz + 64;
    const int p = (int)min(max(end - base, -1LL), 64LL);
    int pos = 0;
#pragma unroll
    for (int s = 16; s >= 1; s >>= 1) {
      const int pj = __shfl_sync(kFull, p, pos + s - 1);
      if (pj <= lane) pos += s;
    }
    const int p31 = __shfl_sync(kFull, p, 31);
    const bool beyond = pos == 31 && p31 <= lane;
    if (offset < 0 && !beyond) offset = window - r + pos;
    if (!__any_sync(kFull, offset < 0)) break;
    window += 32;
  }
  return base + lane < nnz ? r + offset : -1;
}

// Module-scope scratch for rows split between warps (zeroed at load; each completed row leaves
// its slot zeroed again): a row crossing the end of warp w's chunk meets in slot w.
constexpr int kSlots = 1 << 20;
__device__ float g_acc[kSlots];
__device__ unsigned g_count[kSlots];

// kInit: y was zeroed, every row segment is an atomic. Otherwise (the CSR ABI: y poisoned, one
// kernel) each row is written once: rows inside the warp's chunk by a store, rows split between
// warps through the scratch (the last share to arrive writes y), empty rows as 0.
template <int kSteps, bool kStream, bool kInit>
__global__ void chunk_kernel(int rows, int nnz, const int* __restrict__ row_ptr,
                             const int* __restrict__ col_idx, const float* __restrict__ values,
                             const float* __restrict__ x, float* __restrict__ y) {
  const int lane = threadIdx.x & 31;
  const long long warp = (long long)blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5);
  const long long chunk = 32LL * kSteps;
  const long long first = warp * chunk;
  if (!kInit && nnz == 0) {
    if (warp == 0)
      for (int r = lane; r < rows; r += 32) y[r] = 0.0f;
    return;
  }
  if (first >= nnz) return;
  const long long end = min(first + chunk, (long long)nnz);
  int r = warp_find_row(lane, rows, row_ptr, first);
  if (!kInit && first == 0)
    for (int z = lane; z < r; z += 32) y[z] = 0.0f;  // empty rows before the first nonzero
  // Write row R's share v: a store when the whole row lies in [first, end), else via its slot.
  auto emit = [&](int R, float v) {
    if (kInit) {
      atomicAdd(&y[R], v);
      return;
    }
    const long long s = row_ptr[R], t = row_ptr[R + 1];
    if (s >= first && t <= end) {
      y[R] = v;
      return;
    }
    const long long w0 = s / chunk, w1 = (t - 1) / chunk;
    const int slot = (int)(w0 % kSlots);
    atomicAdd(&g_acc[slot], v);
    __threadfence();
    if (atomicAdd(&g_count[slot], 1u) == (unsigned)(w1 - w0)) {
      y[R] = atomicExch(&g_acc[slot], 0.0f);
      g_count[slot] = 0;
    }
  };
  int carry_row = -1, prev_row = -1;
  float carry = 0.0f;
  for (int step = 0; step < kSteps; ++step) {
    const long long base = first + step * 32;
    if (base >= nnz) break;
    const int row = step_row(lane, rows, nnz, row_ptr, r, base);
    const long long e = base + lane;
    float v = 0.0f;
    if (e < nnz) v = load<kStream>(&values[e]) * __ldg(&x[load<kStream>(&col_idx[e])]);
    if (!kInit) {  // empty rows between this nonzero's row and the previous nonzero's
      const int up = __shfl_up_sync(kFull, row, 1);
      const int before = lane == 0 ? prev_row : up;
      if (row >= 0 && before >= 0)
        for (int z = before + 1; z < row; ++z) y[z] = 0.0f;
    } else {
      (void)__shfl_up_sync(kFull, row, 1);
    }
    if (lane == 0) {
      if (row == carry_row)
        v += carry;
      else if (carry_row >= 0)
        emit(carry_row, carry);
    }
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const float up = __shfl_up_sync(kFull, v, offset);
      const int up_row = __shfl_up_sync(kFull, row, offset);
      if (lane >= offset && up_row == row) v += up;
    }
    const int next_row = __shfl_down_sync(kFull, row, 1);
    if (lane < 31 && row >= 0 && next_row != row) emit(row, v);
    carry_row = __shfl_sync(kFull, row, 31);
    carry = __shfl_sync(kFull, v, 31);
    // the last real nonzero's row: lane 31's, or the highest valid lane's at the end
    const int last_valid = (int)min(31LL, (long long)nnz - 1 - base);
    prev_row = __shfl_sync(kFull, row, last_valid);
    r = prev_row;
    if (carry_row < 0) {  // lane 31 was past nnz: its row is -1; the open segment is prev_row's
      break;
    }
  }
  if (lane == 0 && carry_row >= 0) emit(carry_row, carry);
  // Empty rows that start where this chunk ends (the next chunk's search skips them), and the
  // empty rows after the last nonzero.
  if (!kInit && row_ptr[prev_row + 1] == end) {
    for (int z0 = prev_row + 1; z0 < rows; z0 += 32) {
      const int z = z0 + lane;
      const bool empty = z < rows && row_ptr[z + 1] == end;
      if (empty) y[z] = 0.0f;
      if (!__all_sync(kFull, empty || z >= rows)) break;
    }
  }
}

struct matrix {
  int rows = 0, cols = 0;
  std::vector<int> row_ptr, row_idx, col_idx;
  std::vector<float> values;
};

matrix read_mtx(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  const long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  std::string text(size, '\0');
  if (fread(text.data(), 1, size, f) != (size_t)size) {
    fprintf(stderr, "short read\n");
    exit(1);
  }
  fclose(f);
  const char* p = text.c_str();
  const bool pattern = strstr(p, "pattern") && strstr(p, "pattern") < strchr(p, '\n');
  while (*p == '%') p = strchr(p, '\n') + 1;
  char* q;
  matrix m;
  m.rows = (int)strtol(p, &q, 10);
  m.cols = (int)strtol(q, &q, 10);
  const long nnz = strtol(q, &q, 10);
  std::vector<std::pair<long long, float>> entries(nnz);
  for (long k = 0; k < nnz; ++k) {
    const long r = strtol(q, &q, 10) - 1, c = strtol(q, &q, 10) - 1;
    const float v = pattern ? 1.0f : strtof(q, &q);
    entries[k] = {r * (long long)m.cols + c, v};
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  m.row_ptr.assign(m.rows + 1, 0);
  for (const auto& [key, v] : entries) {
    const int r = (int)(key / m.cols);
    m.row_idx.push_back(r);
    m.col_idx.push_back((int)(key % m.cols));
    m.values.push_back(v);
    ++m.row_ptr[r + 1];
  }
  for (int r = 0; r < m.rows; ++r) m.row_ptr[r + 1] += m.row_ptr[r];
  return m;
}

template <typename T>
T* upload(const std::vector<T>& v) {
  T* d = nullptr;
  CK(cudaMalloc(&d, std::max<size_t>(1, v.size()) * sizeof(T)));
  CK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

// Median of `reps` event-timed runs after `warmup` untimed ones.
template <typename F>
double median_ms(F&& run, int warmup = 20, int reps = 51) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < warmup; ++i) run();
  CK(cudaDeviceSynchronize());
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(a));
    run();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float t = 0;
    CK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return ms[ms.size() / 2];
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: spmv_probe MATRIX.mtx [NAME]\n");
    return 2;
  }
  const std::string name = argc > 2 ? argv[2] : argv[1];
  const matrix m = read_mtx(argv[1]);
  const int nnz = (int)m.values.size();
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(m.cols);
  for (float& v : x) v = u(gen);
  std::vector<double> ref(m.rows, 0.0), scale(m.rows, 0.0);
  for (int r = 0; r < m.rows; ++r)
    for (int k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) {
      ref[r] += (double)m.values[k] * x[m.col_idx[k]];
      scale[r] += std::fabs((double)m.values[k] * x[m.col_idx[k]]);
    }

  int *d_row_ptr = upload(m.row_ptr), *d_row_idx = upload(m.row_idx), *d_col = upload(m.col_idx);
  float *d_val = upload(m.values), *d_x = upload(x), *d_y = nullptr;
  CK(cudaMalloc(&d_y, std::max(1, m.rows) * sizeof(float)));
  std::vector<float> y(m.rows);
  // max |y - ref| / (1e-5 * (row's sum of |a x|) + 1e-30): <= 1 passes
  auto poison = [&] { CK(cudaMemset(d_y, 0xff, m.rows * sizeof(float))); };  // NaN
  auto check = [&]() {
    CK(cudaMemcpy(y.data(), d_y, m.rows * sizeof(float), cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int r = 0; r < m.rows; ++r) {
      const double err = std::fabs((double)y[r] - ref[r]) / (1e-5 * scale[r] + 1e-30);
      worst = std::isnan(err) ? INFINITY : std::max(worst, err);
    }
    return worst;
  };

  // cuSPARSE, the fastest of its CSR algorithms, preprocessed.
  cusparseHandle_t h;
  CS(cusparseCreate(&h));
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t X, Y;
  CS(cusparseCreateCsr(&A, m.rows, m.cols, nnz, d_row_ptr, d_col, d_val, CUSPARSE_INDEX_32I,
                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CS(cusparseCreateDnVec(&X, m.cols, d_x, CUDA_R_32F));
  CS(cusparseCreateDnVec(&Y, m.rows, d_y, CUDA_R_32F));
  const float one = 1.0f, zero = 0.0f;
  double best_cusparse = INFINITY;
  std::string best_alg;
  struct result {
    std::string variant;
    double ms, err;
  };
  std::vector<result> results;
  for (const auto& choice : {std::pair{CUSPARSE_SPMV_CSR_ALG1, "cusparse_CSR_ALG1"},
                             std::pair{CUSPARSE_SPMV_CSR_ALG2, "cusparse_CSR_ALG2"}}) {
    const cusparseSpMVAlg_t alg = choice.first;
    const char* alg_name = choice.second;
    size_t bytes = 0;
    CS(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y,
                               CUDA_R_32F, alg, &bytes));
    void* buffer = nullptr;
    CK(cudaMalloc(&buffer, std::max<size_t>(bytes, 1)));
    CS(cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y,
                               CUDA_R_32F, alg, buffer));
    auto run = [&] {
      CS(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, CUDA_R_32F, alg,
                      buffer));
    };
    poison();
    run();
    const double err = check();
    const double ms = median_ms(run);
    results.push_back({alg_name, ms, err});
    if (err <= 1 && ms < best_cusparse) best_cusparse = ms, best_alg = alg_name;
    CK(cudaFree(buffer));
  }

  const int block = 256;
  auto time_variant = [&](const std::string& variant, auto&& run) {
    poison();
    run();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const double err = check();
    results.push_back({variant, median_ms(run), err});
  };
  auto zero_launch = [&] { zero_y<<<(m.rows + 255) / 256, 256>>>(m.rows, d_y); };
  auto grid_for = [&](int steps) {
    return (unsigned)((nnz + block * steps - 1) / (block * steps));
  };
#define COO(S, CSTREAM)                                                                     \
  time_variant(std::string(CSTREAM ? "coo_cs " : "coo ") + #S, [&] {                        \
    zero_launch();                                                                          \
    coo_kernel<S, CSTREAM><<<grid_for(S), block>>>(nnz, d_row_idx, d_col, d_val, d_x, d_y); \
  })
#define CHUNK(S, CSTREAM)                                                         \
  time_variant(std::string(CSTREAM ? "chunk_cs " : "chunk ") + #S, [&] {          \
    zero_launch();                                                                \
    chunk_kernel<S, CSTREAM, true>                                                \
        <<<grid_for(S), block>>>(m.rows, nnz, d_row_ptr, d_col, d_val, d_x, d_y); \
  })
#define CHUNK_CSR(S, CSTREAM)                                                                   \
  time_variant(std::string(CSTREAM ? "chunk_csr_cs " : "chunk_csr ") + #S, [&] {                \
    chunk_kernel<S, CSTREAM, false>                                                             \
        <<<std::max(1u, grid_for(S)), block>>>(m.rows, nnz, d_row_ptr, d_col, d_val, d_x, d_y); \
  })
  COO(1, false);
  COO(4, false);
  COO(16, false);
  COO(1, true);
  COO(4, true);
  CHUNK(1, false);
  CHUNK(4, false);
  CHUNK(16, false);
  CHUNK(4, true);
  CHUNK(16, true);
  CHUNK_CSR(1, false);
  CHUNK_CSR(4, false);
  CHUNK_CSR(16, false);
  CHUNK_CSR(4, true);

  const double bytes = 8.0 * nnz + 4.0 * (m.rows + 1) + 4.0 * m.cols + 4.0 * m.rows;
  printf("%s rows=%d nnz=%d min_bytes=%.1fMB best_cusparse=%s %.4f ms\n", name.c_str(), m.rows, nnz,
         bytes / 1e6, best_alg.c_str(), best_cusparse);
  for (const result& r : results)
    printf("%-22s %-18s %9.4f ms  %6.3fx  %7.1f GB/s  err %.3g%s\n", name.c_str(),
           r.variant.c_str(), r.ms, best_cusparse / r.ms, bytes / r.ms / 1e6, r.err,
           r.err <= 1 ? "" : "  WRONG");
  return 0;
}
