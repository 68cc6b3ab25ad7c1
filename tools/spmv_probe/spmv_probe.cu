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
//   coo4 S / coo4_cs S
//                    four consecutive entries a lane (16-byte loads of row, column and value):
//                    each lane sums its own runs of equal rows and adds its complete inner runs
//                    at once; only the lanes' last runs go through the warp's segmented scan, so
//                    a warp step covers 128 entries with the shuffles COO spends on 32.
//   ell / ell_cs     the library's ELL template (a thread per row, column-major slots, padding -1)
//                    with plain or streamed slot loads; only where ELL pads <= 3x
//   hubH_coo4_cs S   coo4_cs over persistent blocks (grid-stride chunks) that first copy the x of
//                    the H most referenced columns into shared memory; entries in those columns
//                    store ~slot and read it there (hub0: the same kernel without a table, the
//                    control). Became the library's HCOO format and hcoo template.
// coo4_cs and ell_cs became the library's coo4 / hyb4 templates and its ELL template's loads
// (src/kernel/); the probe keeps its own copies, since it times variants the library does not
// have. The first run (commit 25bdab7, docs/results/spmv-probe-h100-2026-12-07a) also timed CSR
// arrays with COO's split (rows found in row_ptr per step): slower than COO on every matrix.
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

// Four consecutive entries a lane. Lane-local runs of one row: the first run may continue the
// previous lane's last, inner runs are complete (added at once), the last run may go on in the
// next lanes; a segmented scan over the lanes' last runs (a lane of one row passes its sum on)
// joins them, and a last run is added where the next lane starts another row. The step's open
// run is carried to the next step in lane 31, as in COO.
// x of entry with column c: hub entries (c < 0) read slot ~c of the block's shared copy of
// the hub columns' x, the others x itself.
template <bool kHub>
__device__ __forceinline__ float x_of(int c, const float* __restrict__ x, const float* hub_x) {
  if constexpr (kHub)
    return c < 0 ? hub_x[~c] : __ldg(&x[c]);
  else
    return __ldg(&x[c]);
}

// One warp's chunk of kSteps x 128 entries from `first`.
template <int kSteps, bool kStream, bool kHub>
__device__ __forceinline__ void coo4_chunk(int lane, long long first, int nnz,
                                           const int* __restrict__ row_idx,
                                           const int* __restrict__ col_idx,
                                           const float* __restrict__ values,
                                           const float* __restrict__ x, const float* hub_x,
                                           float* __restrict__ y) {
  int carry_row = -1;
  float carry = 0.0f;
  for (int step = 0; step < kSteps; ++step) {
    const long long base = first + step * 128LL;
    if (base >= nnz) break;
    const long long e = base + 4 * lane;
    int r[4];
    float p[4];
    if (e + 3 < nnz) {
      const int4 rows4 = load<kStream>(reinterpret_cast<const int4*>(row_idx + e));
      const int4 cols4 = load<kStream>(reinterpret_cast<const int4*>(col_idx + e));
      const float4 vals4 = load<kStream>(reinterpret_cast<const float4*>(values + e));
      r[0] = rows4.x, r[1] = rows4.y, r[2] = rows4.z, r[3] = rows4.w;
      p[0] = vals4.x * x_of<kHub>(cols4.x, x, hub_x);
      p[1] = vals4.y * x_of<kHub>(cols4.y, x, hub_x);
      p[2] = vals4.z * x_of<kHub>(cols4.z, x, hub_x);
      p[3] = vals4.w * x_of<kHub>(cols4.w, x, hub_x);
    } else {
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        r[k] = -1;  // past the end: a row of its own that is never written
        p[k] = 0.0f;
        if (e + k < nnz) {
          r[k] = load<kStream>(&row_idx[e + k]);
          p[k] =
              load<kStream>(&values[e + k]) * x_of<kHub>(load<kStream>(&col_idx[e + k]), x, hub_x);
        }
      }
    }
    // Lane-local runs.
    const int head_row = r[0];
    float head = 0.0f, run = p[0];
    int run_row = r[0];
    bool single = true;  // the lane is one run
#pragma unroll
    for (int k = 1; k < 4; ++k) {
      if (r[k] == run_row) {
        run += p[k];
      } else {
        if (single)
          head = run;
        else if (run_row >= 0)
          atomicAdd(&y[run_row], run);
        single = false;
        run = p[k];
        run_row = r[k];
      }
    }
    // The carried run joins lane 0's first run.
    if (lane == 0) {
      if (carry_row == head_row) {
        if (single)
          run += carry;
        else
          head += carry;
      } else if (carry_row >= 0) {
        atomicAdd(&y[carry_row], carry);
      }
    }
    // Segmented inclusive scan of the lanes' last runs: a lane of one row that continues the
    // previous lane's last row adds its sum; any other lane starts a segment.
    const int prev_tail_row = __shfl_up_sync(kFull, run_row, 1);
    float sum = run;
    bool starts = !(single && lane > 0 && prev_tail_row == run_row);
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const float up = __shfl_up_sync(kFull, sum, offset);
      const bool up_starts = __shfl_up_sync(kFull, starts, offset);
      if (lane >= offset) {
        if (!starts) sum += up;
        starts = starts || up_starts;
      }
    }
    // The first run, when it ends inside the lane: plus what the lanes before carried into it.
    const float before = __shfl_up_sync(kFull, sum, 1);
    if (!single && head_row >= 0) {
      const float in = lane > 0 && prev_tail_row == head_row ? before : 0.0f;
      atomicAdd(&y[head_row], head + in);
    }
    // The last run ends here unless the next lane starts with its row.
    const int next_head_row = __shfl_down_sync(kFull, head_row, 1);
    if (lane < 31 && run_row >= 0 && next_head_row != run_row) atomicAdd(&y[run_row], sum);
    carry_row = __shfl_sync(kFull, run_row, 31);
    carry = __shfl_sync(kFull, sum, 31);
  }
  if (lane == 0 && carry_row >= 0) atomicAdd(&y[carry_row], carry);
}

template <int kSteps, bool kStream>
__global__ void coo4_kernel(int nnz, const int* __restrict__ row_idx,
                            const int* __restrict__ col_idx, const float* __restrict__ values,
                            const float* __restrict__ x, float* __restrict__ y) {
  const int lane = threadIdx.x & 31;
  const long long warp = (long long)blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5);
  coo4_chunk<kSteps, kStream, false>(lane, warp * (128LL * kSteps), nnz, row_idx, col_idx, values,
                                     x, nullptr, y);
}

// Hub caching: the `hubs` most referenced columns' x, gathered once into hub_x (by prep_hub),
// are copied into each block's shared memory; entries in those columns carry ~slot as their
// column. Blocks are persistent (a few a multiprocessor) so that the copy is paid per block,
// not per chunk; warps take chunks grid-stride.
template <int kSteps, bool kStream>
__global__ void hub_coo4_kernel(int nnz, int hubs, const int* __restrict__ row_idx,
                                const int* __restrict__ col_idx, const float* __restrict__ values,
                                const float* __restrict__ x, const float* __restrict__ hub_x,
                                float* __restrict__ y) {
  extern __shared__ float4 shared_x4[];
  const float* shared_x = reinterpret_cast<const float*>(shared_x4);
  for (int i = threadIdx.x; i < hubs / 4; i += blockDim.x)
    shared_x4[i] = reinterpret_cast<const float4*>(hub_x)[i];
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const long long warps = (long long)gridDim.x * (blockDim.x / 32);
  const long long chunks = (nnz + 128LL * kSteps - 1) / (128LL * kSteps);
  for (long long chunk = (long long)blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5);
       chunk < chunks; chunk += warps)
    coo4_chunk<kSteps, kStream, true>(lane, chunk * (128LL * kSteps), nnz, row_idx, col_idx, values,
                                      x, shared_x, y);
}

// Zeroes y and gathers the hub columns' x.
__global__ void prep_hub(int rows, float* __restrict__ y, int hubs,
                         const int* __restrict__ hub_cols, const float* __restrict__ x,
                         float* __restrict__ hub_x) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows) y[i] = 0.0f;
  if (i < hubs) hub_x[i] = __ldg(&x[hub_cols[i]]);
}

template <bool kStream>
__global__ void ell_kernel(int rows, int width, const int* __restrict__ col_idx,
                           const float* __restrict__ values, const float* __restrict__ x,
                           float* __restrict__ y) {
  const long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int j = 0; j < width; ++j) {
    const size_t at = (size_t)j * rows + row;
    const int c = load<kStream>(&col_idx[at]);
    if (c < 0) break;
    sum += load<kStream>(&values[at]) * __ldg(&x[c]);
  }
  y[row] = sum;
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
  auto poison = [&] { CK(cudaMemset(d_y, 0xff, m.rows * sizeof(float))); };  // NaN
  // max |y - ref| / (1e-5 * (row's sum of |a x|) + 1e-30): <= 1 passes
  auto check = [&]() {
    CK(cudaMemcpy(y.data(), d_y, m.rows * sizeof(float), cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int r = 0; r < m.rows; ++r) {
      const double err = std::fabs((double)y[r] - ref[r]) / (1e-5 * scale[r] + 1e-30);
      worst = std::isnan(err) ? INFINITY : std::max(worst, err);
    }
    return worst;
  };
  struct result {
    std::string variant;
    double ms, err;
  };
  std::vector<result> results;
  // One run checked on poisoned output, then the median of the timed runs.
  auto time_variant = [&](const std::string& variant, auto&& run) {
    poison();
    run();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const double err = check();
    results.push_back({variant, median_ms(run), err});
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
    time_variant(alg_name, [&] {
      CS(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, CUDA_R_32F, alg,
                      buffer));
    });
    const result& r = results.back();
    if (r.err <= 1 && r.ms < best_cusparse) best_cusparse = r.ms, best_alg = alg_name;
    CK(cudaFree(buffer));
  }

  const int block = 256;
  auto zero_launch = [&] { zero_y<<<(m.rows + 255) / 256, 256>>>(m.rows, d_y); };
  // Blocks for `per_thread` entries a thread (COO: steps, coo4: 4 x steps).
  auto grid_for = [&](int per_thread) {
    return (unsigned)((nnz + block * per_thread - 1) / (block * per_thread));
  };
#define COO(S, CSTREAM)                                                                     \
  time_variant(std::string(CSTREAM ? "coo_cs " : "coo ") + #S, [&] {                        \
    zero_launch();                                                                          \
    coo_kernel<S, CSTREAM><<<grid_for(S), block>>>(nnz, d_row_idx, d_col, d_val, d_x, d_y); \
  })
#define COO4(S, CSTREAM)                                                                         \
  time_variant(std::string(CSTREAM ? "coo4_cs " : "coo4 ") + #S, [&] {                           \
    zero_launch();                                                                               \
    coo4_kernel<S, CSTREAM><<<grid_for(4 * S), block>>>(nnz, d_row_idx, d_col, d_val, d_x, d_y); \
  })
  COO(1, false);
  COO(4, false);
  COO(1, true);
  COO(4, true);
  COO(16, true);
  COO4(1, false);
  COO4(1, true);
  COO4(2, true);
  COO4(4, true);

  // Hub caching: the `hubs` columns with the most entries, their x in each block's shared
  // memory (0 hubs: the same persistent kernel with every x from global memory, the control).
  {
    std::vector<int> degree(m.cols, 0), order(m.cols);
    for (int c : m.col_idx) ++degree[c];
    for (int c = 0; c < m.cols; ++c) order[c] = c;
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return degree[a] > degree[b]; });
    int device = 0, sms = 0;
    CK(cudaGetDevice(&device));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    for (int hubs : {0, 8192, 24576, 49152}) {
      hubs = std::min(hubs, m.cols / 4 * 4);
      std::vector<int> slot(m.cols, -1), hub_cols(order.begin(), order.begin() + hubs);
      long long hub_entries = 0;
      for (int i = 0; i < hubs; ++i) slot[hub_cols[i]] = i, hub_entries += degree[hub_cols[i]];
      std::vector<int> hub_col(m.col_idx);
      for (int& c : hub_col)
        if (slot[c] >= 0) c = ~slot[c];
      int* d_hub_col = upload(hub_col);
      int* d_hub_cols = upload(hub_cols);
      float* d_hub_x = nullptr;
      CK(cudaMalloc(&d_hub_x, std::max(hubs, 4) * sizeof(float)));
      const size_t shared = hubs * sizeof(float);
      const int hub_block = 512;
      auto run_hub = [&](auto kernel, int steps) {
        CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared));
        int per_sm = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, hub_block, shared));
        const unsigned grid = (unsigned)std::max(1, per_sm * sms);
        const int prep_n = std::max(m.rows, hubs);
        char label[64];
        snprintf(label, sizeof label, "hub%d_coo4_cs %d", hubs, steps);
        time_variant(label, [&] {
          prep_hub<<<(prep_n + 255) / 256, 256>>>(m.rows, d_y, hubs, d_hub_cols, d_x, d_hub_x);
          kernel<<<grid, hub_block, shared>>>(nnz, hubs, d_row_idx, d_hub_col, d_val, d_x, d_hub_x,
                                              d_y);
        });
        printf("# %s: %d blocks of %d, %.3f of entries in hub columns\n", label, grid, hub_block,
               (double)hub_entries / std::max(1, nnz));
      };
      run_hub(hub_coo4_kernel<1, true>, 1);
      run_hub(hub_coo4_kernel<2, true>, 2);
      CK(cudaFree(d_hub_col));
      CK(cudaFree(d_hub_cols));
      CK(cudaFree(d_hub_x));
    }
  }

  // ELL, column-major, padded with -1 / 0, where it pads at most 3x.
  int width = 0;
  for (int r = 0; r < m.rows; ++r) width = std::max(width, m.row_ptr[r + 1] - m.row_ptr[r]);
  if ((double)width * m.rows <= 3.0 * nnz) {
    std::vector<int> ell_col((size_t)width * m.rows, -1);
    std::vector<float> ell_val((size_t)width * m.rows, 0.0f);
    for (int r = 0; r < m.rows; ++r)
      for (int k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) {
        const size_t at = (size_t)(k - m.row_ptr[r]) * m.rows + r;
        ell_col[at] = m.col_idx[k];
        ell_val[at] = m.values[k];
      }
    int* d_ell_col = upload(ell_col);
    float* d_ell_val = upload(ell_val);
    for (int ell_block : {128, 256}) {
      const unsigned grid = (unsigned)((m.rows + ell_block - 1) / ell_block);
      time_variant("ell " + std::to_string(ell_block), [&] {
        ell_kernel<false><<<grid, ell_block>>>(m.rows, width, d_ell_col, d_ell_val, d_x, d_y);
      });
      time_variant("ell_cs " + std::to_string(ell_block), [&] {
        ell_kernel<true><<<grid, ell_block>>>(m.rows, width, d_ell_col, d_ell_val, d_x, d_y);
      });
    }
    CK(cudaFree(d_ell_col));
    CK(cudaFree(d_ell_val));
  }

  const double bytes = 8.0 * nnz + 4.0 * (m.rows + 1) + 4.0 * m.cols + 4.0 * m.rows;
  printf("%s rows=%d nnz=%d min_bytes=%.1fMB best_cusparse=%s %.4f ms\n", name.c_str(), m.rows, nnz,
         bytes / 1e6, best_alg.c_str(), best_cusparse);
  for (const result& r : results)
    printf("%-22s %-18s %9.4f ms  %6.3fx  %7.1f GB/s  err %.3g%s\n", name.c_str(),
           r.variant.c_str(), r.ms, best_cusparse / r.ms, bytes / r.ms / 1e6, r.err,
           r.err <= 1 ? "" : "  WRONG");
  return 0;
}
