#include "kernel/expert_library.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

#include "kernel/abi.h"
#include "sparse/error.h"

namespace sparserl {

namespace {

// The first line of every emitted source; the description follows it.
constexpr const char* expert_line_prefix = "// expert: ";

}  // namespace

namespace expert_detail {
namespace {

const std::vector<family>& families() {
  // One family a line (clang-format would pack the list into columns).
  // clang-format off
  static const std::vector<family> all = {
      csr_scalar_spmv(),
      csr_vector_spmv(),
      csr_adaptive_spmv(),
      csr_merge_spmv(),
      csr_merge_tiles_spmv(),
      csr_split_spmv(),
      ell_spmv(),
      sell_spmv(),
      bsr_spmv(),
      dia_spmv(),
      coo_spmv(),
      coo4_spmv(),
      hyb_spmv(),
      hyb4_spmv(),
      hcoo_spmv(),
      csr_rowgroup_spmm(),
      csr_merge_spmm(),
      ell_spmm(),
      sell_spmm(),
      bsr_spmm(),
      hyb_spmm(),
      csr16_vector_spmv(),
      csr16_stream_spmv(),
      csr16_rowgroup_spmm(),
      rcsr_vector_spmv(),
      rcsr_hubs_vector_spmv(),
      rcsr_rowgroup_spmm(),
  };
  // clang-format on
  return all;
}

// Names are unique per op (csr_merge exists for SpMV and SpMM); a name of the other op only is
// reported as an op mismatch by emit_program.
const family& find_family(const std::string& name, sparse_op op) {
  const family* other = nullptr;
  for (const family& f : families()) {
    if (f.info.name != name) continue;
    if (f.info.op == op) return f;
    other = &f;
  }
  if (other) return *other;
  throw error("expert library: unknown template '" + name + "'");
}

// The keys of `given` must be exactly the names of `wanted`: a missing key would leave a
// placeholder unfilled and an unknown one means the caller meant another template.
void check_keys(const expert_config& config, const std::map<std::string, int64_t>& given,
                const std::vector<expert_param>& wanted, const char* what) {
  std::set<std::string> names;
  for (const expert_param& p : wanted) {
    names.insert(p.name);
    require(given.count(p.name) == 1, config, std::string("missing ") + what + " '" + p.name + "'");
  }
  for (const auto& [key, value] : given)
    require(names.count(key) == 1, config, std::string("unknown ") + what + " '" + key + "'");
}

}  // namespace

std::string fill(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values) {
    const std::string token = "@" + key + "@";
    for (size_t at = text.find(token); at != std::string::npos; at = text.find(token, at))
      text.replace(at, token.size(), value), at += value.size();
  }
  const size_t left = text.find('@');
  if (left != std::string::npos)
    throw error("expert library: unfilled placeholder near '" + text.substr(left, 24) + "'");
  return text;
}

std::map<std::string, std::string> as_text(const std::map<std::string, int64_t>& values) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : values) out[key] = std::to_string(value);
  return out;
}

expert_config make_config(const expert_template& info, std::map<std::string, int64_t> format_params,
                          std::map<std::string, int64_t> params) {
  expert_config c;
  c.name = info.name;
  c.op = info.op;
  c.format = info.format;
  c.format_params = std::move(format_params);
  c.params = std::move(params);
  return c;
}

std::vector<expert_config> thread_per_row_space(const expert_template& info) {
  std::vector<expert_config> out;
  for (int64_t block : {128, 256, 512})
    out.push_back(make_config(info, {}, {{"block", block}, {"unroll", 1}}));
  out.push_back(make_config(info, {}, {{"block", 256}, {"unroll", 4}}));
  return out;
}

std::vector<expert_config> lanes_per_row_space(const expert_template& info,
                                               const matrix_features& f,
                                               const std::vector<int64_t>& lane_counts) {
  std::vector<expert_config> out;
  const double mean = std::max(1.0, f.row_length_mean);
  for (int64_t lanes : lane_counts) {
    const bool near = lanes <= 4 * mean && lanes * 4 >= mean;
    const bool widest = lanes == 32 && mean > 128;
    if (!near && !widest) continue;
    for (int64_t block : {128, 256})
      out.push_back(make_config(info, {}, {{"block", block}, {"lanes", lanes}}));
  }
  return out;
}

kernel_program emit_lanes_per_row(const expert_config& c, format_kind format,
                                  const std::string& source) {
  const int64_t block = c.param("block"), lanes = c.param("lanes");
  require_block(c, block);
  require(is_pow2(lanes) && lanes <= 32, c, "lanes must be a power of two <= 32");
  return emit_rows_kernel(c, format, source, block / lanes);
}

kernel_program emit_rows_kernel(const expert_config& c, format_kind format,
                                const std::string& source, int64_t rows_per_block,
                                std::map<std::string, std::string> extra_values) {
  auto values = as_text(c.params);
  values.insert(extra_values.begin(), extra_values.end());
  values["ARGS"] = entry_args(sparse_op::spmv, format);
  kernel_program p;
  p.launches = {rows_launch("", c.param("block"), rows_per_block)};
  p.source = fill(source, values);
  return p;
}

kernel_program emit_row_stream(const expert_config& c, format_kind format,
                               const std::string& source,
                               std::map<std::string, std::string> extra_values) {
  require_block(c, c.param("block"));
  require(c.param("rows_per_block") >= 1 && c.param("rows_per_block") <= (1 << 20), c,
          "rows_per_block must be 1..2^20");
  require(c.param("stream_cap") >= 32 && c.param("stream_cap") <= 8192, c,
          "stream_cap must be 32..8192 (shared memory)");
  return emit_rows_kernel(c, format, source, c.param("rows_per_block"), std::move(extra_values));
}

kernel_program emit_thread_per_row(const expert_config& c, format_kind format,
                                   const std::string& source, int64_t rows_per_thread) {
  const int64_t block = c.param("block");
  require_block(c, block);
  require(c.param("unroll") >= 1 && c.param("unroll") <= 32, c, "unroll must be 1..32");
  return emit_rows_kernel(c, format, source, block * rows_per_thread);
}

launch_spec rows_launch(const std::string& entry, int64_t block, int64_t rows_per_block,
                        int64_t k_per_block) {
  launch_spec s;
  s.entry = entry;
  s.block = static_cast<int32_t>(block);
  s.rows_per_block = rows_per_block;
  s.k_per_block = k_per_block;
  return s;
}

launch_spec nnz_launch(const std::string& entry, int64_t block, int64_t nnz_per_block) {
  launch_spec s;
  s.entry = entry;
  s.block = static_cast<int32_t>(block);
  s.nnz_per_block = nnz_per_block;
  return s;
}

void require(bool ok, const expert_config& config, const std::string& what) {
  if (!ok) throw error("expert template '" + config.name + "': " + what);
}

void require_block(const expert_config& config, int64_t block) {
  require(block >= 32 && block <= 1024 && block % 32 == 0, config, "block must be 32..1024, x32");
}

// Taken from the ABI itself so the emitted signatures cannot drift from what the harness passes.
std::string entry_args(sparse_op op, format_kind format) {
  const std::string entry = entry_points(op, format).front().name;
  const std::string sig = entry_signature(op, format, entry);
  const size_t open = sig.find('('), close = sig.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open)
    throw error("expert library: unexpected ABI signature '" + sig + "'");
  return sig.substr(open + 1, close - open - 1);
}

bool rcsr_order_pays(const matrix_features& f) {
  return f.rows == f.cols && f.column_distance_mean > random_order_distance;
}

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int64_t pow2_at_least(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(hi, v)); }

bool skewed_rows(const matrix_features& f) {
  return f.row_length_max > 32 * std::max(1.0, f.row_length_mean) || f.row_length_gini > 0.6;
}

const char* const warp_sum_source = R"(__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
})";

// Merrill & Garland's merge-path search over the merge of the row ends with the nonzero indices:
// the number of row ends among the first `diagonal` items. row_end[i] - base is row i's end.
const char* const merge_search_source = R"(
__device__ __forceinline__ int merge_search(long long diagonal, const int* __restrict__ row_end,
                                            int base, int n_rows, int n_nnz) {
  int lo = (int)max(diagonal - n_nnz, 0LL);
  int hi = (int)min(diagonal, (long long)n_rows);
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if ((long long)(row_end[mid] - base) <= diagonal - mid - 1) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// This block's cut of the global merge path (rows + nonzeros split evenly over the grid): it owns
// the rows whose end lies inside, [bounds[0], bounds[1]). `bounds` is __shared__ int[2]; every
// thread of the block calls this (it ends in a barrier).
__device__ __forceinline__ void merge_block_rows(const int* __restrict__ row_ptr, int rows,
                                                 int* bounds) {
  const int total_nnz = row_ptr[rows];
  const long long total = (long long)rows + total_nnz;
  if (threadIdx.x < 2) {
    const long long per_block = (total + gridDim.x - 1) / gridDim.x;
    const long long diagonal = min(per_block * (blockIdx.x + threadIdx.x), total);
    bounds[threadIdx.x] = merge_search(diagonal, row_ptr + 1, 0, rows, total_nnz);
  }
  __syncthreads();
}
)";

// A warp takes 32 consecutive entries per step (coalesced), scans them segmented by row with
// shuffles (entries are sorted by row, so a row's entries sit in adjacent lanes) and adds each
// segment to y with one atomicAdd; the segment still open at lane 31 is carried into the next
// step, so a long row costs one atomic per warp, not per step. Placeholders: ENTRY, ARGS, NNZ,
// ROW, COL, VAL.
const char* const coo_segment_source = R"(
extern "C" __global__ void @ENTRY@(@ARGS@) {
  const int lane = threadIdx.x & 31;
  const long long warp = (long long)blockIdx.x * (kBlock / 32) + (threadIdx.x >> 5);
  const long long first = warp * (32LL * kSteps);
  int carry_row = -1;
  float carry = 0.0f;
  for (int step = 0; step < kSteps; ++step) {
    const long long e = first + step * 32 + lane;
    int row = -1;  // lanes past the end form their own segment and never write
    float v = 0.0f;
    if (e < @NNZ@) {
      row = @ROW@[e];
      v = @VAL@[e] * __ldg(&x[@COL@[e]]);
    }
    if (lane == 0) {
      if (row == carry_row) v += carry;
      else if (carry_row >= 0) atomicAdd(&y[carry_row], carry);
    }
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const float up = __shfl_up_sync(0xffffffffu, v, offset);
      const int up_row = __shfl_up_sync(0xffffffffu, row, offset);
      if (lane >= offset && up_row == row) v += up;
    }
    const int next_row = __shfl_down_sync(0xffffffffu, row, 1);
    if (lane < 31 && row >= 0 && next_row != row) atomicAdd(&y[row], v);
    carry_row = __shfl_sync(0xffffffffu, row, 31);
    carry = __shfl_sync(0xffffffffu, v, 31);
  }
  if (lane == 0 && carry_row >= 0) atomicAdd(&y[carry_row], carry);
}
)";

// coo_segment_source with four consecutive entries a lane (128 a warp step; kSteps steps),
// 16-byte loads streamed with __ldcs so that they do not push x out of the caches. A lane sums
// its own runs of one row and adds the complete inner ones at once; only the lanes' last runs go
// through the warp's segmented scan, so 128 entries cost the shuffles coo_segment_source spends
// on 32. Needs each array 16-byte aligned (every argument array is its own allocation).
// Placeholders: ENTRY, ARGS, NNZ, ROW, COL, VAL and X_OF, the kernel's first lines, which define
// `x_of(c)`, the x of column c (HCOO reads hub columns from shared memory there).
const char* const coo4_segment_source = R"(
extern "C" __global__ void @ENTRY@(@ARGS@) {
@X_OF@
  const int lane = threadIdx.x & 31;
  // Chunks of kSteps x 128 entries: warp w takes chunks w, w + W, w + 2W, ... (W: the grid's
  // warps), so a grid that covers the entries gives each warp one chunk, a fixed grid several.
  const long long warps = (long long)gridDim.x * (kBlock / 32);
  for (long long warp = (long long)blockIdx.x * (kBlock / 32) + (threadIdx.x >> 5);
       warp * (128LL * kSteps) < @NNZ@; warp += warps) {
    const long long first = warp * (128LL * kSteps);
    int carry_row = -1;  // the run open at the end of the previous step (lane 31's last)
    float carry = 0.0f;
    for (int step = 0; step < kSteps; ++step) {
      const long long base = first + step * 128LL;
      if (base >= @NNZ@) break;  // uniform across the warp
      const long long e = base + 4 * lane;
      int r[4];
      float p[4];
      if (e + 3 < @NNZ@) {  // e is a multiple of 4; every array starts 16-byte aligned or more
        const int4 rows4 = __ldcs(reinterpret_cast<const int4*>(@ROW@ + e));
        const int4 cols4 = __ldcs(reinterpret_cast<const int4*>(@COL@ + e));
        const float4 vals4 = __ldcs(reinterpret_cast<const float4*>(@VAL@ + e));
        r[0] = rows4.x, r[1] = rows4.y, r[2] = rows4.z, r[3] = rows4.w;
        p[0] = vals4.x * x_of(cols4.x);
        p[1] = vals4.y * x_of(cols4.y);
        p[2] = vals4.z * x_of(cols4.z);
        p[3] = vals4.w * x_of(cols4.w);
      } else {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          r[k] = -1;  // past the end: a row of its own that is never written
          p[k] = 0.0f;
          if (e + k < @NNZ@) {
            r[k] = __ldcs(&@ROW@[e + k]);
            p[k] = __ldcs(&@VAL@[e + k]) * x_of(__ldcs(&@COL@[e + k]));
          }
        }
      }
      // The lane's runs: the first may continue the previous lane's last run, inner runs are
      // complete, the last may go on in the next lanes.
      const int head_row = r[0];
      float head = 0.0f, run = p[0];
      int run_row = r[0];
      bool single = true;  // the lane is one run
#pragma unroll
      for (int k = 1; k < 4; ++k) {
        if (r[k] == run_row) {
          run += p[k];
        } else {
          if (single) head = run;
          else if (run_row >= 0) atomicAdd(&y[run_row], run);
          single = false;
          run = p[k];
          run_row = r[k];
        }
      }
      if (lane == 0) {  // the carried run joins lane 0's first run
        if (carry_row == head_row) {
          if (single) run += carry;
          else head += carry;
        } else if (carry_row >= 0) {
          atomicAdd(&y[carry_row], carry);
        }
      }
      // Segmented inclusive scan of the lanes' last runs: a lane of one run that continues the
      // previous lane's last row adds on; every other lane starts a segment.
      const int prev_last_row = __shfl_up_sync(0xffffffffu, run_row, 1);
      float sum = run;
      bool starts = !(single && lane > 0 && prev_last_row == run_row);
#pragma unroll
      for (int offset = 1; offset < 32; offset *= 2) {
        const float up = __shfl_up_sync(0xffffffffu, sum, offset);
        const bool up_starts = __shfl_up_sync(0xffffffffu, starts, offset);
        if (lane >= offset) {
          if (!starts) sum += up;
          starts = starts || up_starts;
        }
      }
      // A first run that ends inside the lane, plus what the lanes before carried into it.
      const float before = __shfl_up_sync(0xffffffffu, sum, 1);
      if (!single && head_row >= 0)
        atomicAdd(&y[head_row], head + (lane > 0 && prev_last_row == head_row ? before : 0.0f));
      // The last run ends here unless the next lane starts with its row.
      const int next_head_row = __shfl_down_sync(0xffffffffu, head_row, 1);
      if (lane < 31 && run_row >= 0 && next_head_row != run_row) atomicAdd(&y[run_row], sum);
      carry_row = __shfl_sync(0xffffffffu, run_row, 31);
      carry = __shfl_sync(0xffffffffu, sum, 31);
    }
    if (lane == 0 && carry_row >= 0) atomicAdd(&y[carry_row], carry);
  }
}
)";

// coo4's read of x at a column: `x_of(c)`, defined at the top of its kernel.
const char* const plain_x_of =
    "  const auto x_of = [&](int c) { return __ldg(&x[c]); };  // read-only path";

std::string coo_segment(int per_lane, const std::string& entry, const std::string& args,
                        const std::string& prefix, const std::string& x_of) {
  return fill(per_lane == 4 ? coo4_segment_source : coo_segment_source,
              {{"ENTRY", entry},
               {"ARGS", args},
               {"NNZ", prefix + "nnz"},
               {"ROW", prefix + "row_idx"},
               {"COL", prefix + "col_idx"},
               {"VAL", prefix + "values"},
               {"X_OF", x_of.empty() ? plain_x_of : x_of}});
}

}  // namespace expert_detail

std::string expert_config::describe() const {
  std::string out = name + " " + op_name(op) + " " + format_name(format);
  for (const auto& [key, value] : format_params) out += " " + key + "=" + std::to_string(value);
  for (const auto& [key, value] : params) out += " " + key + "=" + std::to_string(value);
  return out;
}

int64_t expert_config::param(const std::string& key) const {
  const auto it = params.find(key);
  expert_detail::require(it != params.end(), *this, "missing parameter '" + key + "'");
  return it->second;
}

int64_t expert_config::format_param(const std::string& key) const {
  const auto it = format_params.find(key);
  expert_detail::require(it != format_params.end(), *this,
                         "missing format parameter '" + key + "'");
  return it->second;
}

const std::vector<expert_template>& expert_templates() {
  static const std::vector<expert_template> all = [] {
    std::vector<expert_template> out;
    for (const expert_detail::family& f : expert_detail::families()) out.push_back(f.info);
    return out;
  }();
  return all;
}

std::vector<expert_config> expert_space(sparse_op op, const matrix_features& f, int k) {
  const int kk = std::max(k, 1);
  std::vector<expert_config> out;
  for (const expert_detail::family& fam : expert_detail::families()) {
    if (fam.info.op != op) continue;
    for (expert_config& c : fam.space(f, kk)) out.push_back(std::move(c));
  }
  if (out.empty())
    throw error("expert library: empty space for " + std::string(op_name(op)) + " (a bug)");
  return out;
}

kernel_program emit_program(const expert_config& config) {
  const expert_detail::family& fam = expert_detail::find_family(config.name, config.op);
  expert_detail::require(
      fam.info.op == config.op, config,
      std::string("is an ") + op_name(fam.info.op) + " template, not " + op_name(config.op));
  expert_detail::require(
      fam.info.format == config.format, config,
      std::string("emits ") + format_name(fam.info.format) + ", not " + format_name(config.format));
  expert_detail::check_keys(config, config.format_params, fam.info.format_params,
                            "format parameter");
  expert_detail::check_keys(config, config.params, fam.info.params, "parameter");
  kernel_program p = fam.emit(config);
  p.format = config.format;
  p.format_params = config.format_params;
  p.source = expert_line_prefix + config.describe() + "\n" + p.source;
  return p;
}

std::string expert_description(const std::string& program_text) {
  std::istringstream in(program_text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(expert_line_prefix, 0) == 0) return line.substr(std::strlen(expert_line_prefix));
  return "";
}

std::optional<expert_config> parse_expert_description(const std::string& description) {
  std::istringstream in(description);
  std::string name, op_text, format_text;
  if (!(in >> name >> op_text >> format_text)) return std::nullopt;
  const std::optional<sparse_op> op = parse_op(op_text);
  const std::optional<format_kind> format = parse_format(format_text);
  if (!op || !format) return std::nullopt;
  const expert_template* info = nullptr;
  for (const expert_template& t : expert_templates())
    if (t.name == name && t.op == *op && t.format == *format) info = &t;
  if (!info) return std::nullopt;
  auto named = [](const std::vector<expert_param>& list, const std::string& key) {
    return std::any_of(list.begin(), list.end(),
                       [&](const expert_param& p) { return p.name == key; });
  };
  expert_config c;
  c.name = name;
  c.op = *op;
  c.format = *format;
  for (std::string pair; in >> pair;) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) return std::nullopt;
    const std::string key = pair.substr(0, eq), value = pair.substr(eq + 1);
    int64_t v = 0;
    try {
      size_t used = 0;
      v = std::stoll(value, &used);
      if (used != value.size()) return std::nullopt;
    } catch (const std::exception&) {
      return std::nullopt;
    }
    std::map<std::string, int64_t>* into = named(info->format_params, key) ? &c.format_params
                                           : named(info->params, key)      ? &c.params
                                                                           : nullptr;
    if (!into || !into->emplace(key, v).second) return std::nullopt;  // unknown or repeated
  }
  if (c.format_params.size() != info->format_params.size() ||
      c.params.size() != info->params.size())
    return std::nullopt;
  return c;
}

}  // namespace sparserl
