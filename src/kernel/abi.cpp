#include "kernel/abi.h"

#include <algorithm>
#include <cctype>

#include "kernel/format_registry.h"
#include "sparse/error.h"
#include "sparse/quote_text.h"

namespace sparserl {

namespace {

// ---- format parameters ------------------------------------------------------------------------

const std::vector<format_param_rule>& param_rules(format_kind format) {
  return find_format(format).params;
}

bool iequal(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string known_keys(format_kind format) {
  std::string out;
  for (const format_param_rule& p : param_rules(format))
    out += (out.empty() ? "" : ", ") + std::string(p.key);
  return out;
}

std::string range_error(const format_param_rule& p, int64_t v) {
  std::string what = std::string(p.key) + "=" + std::to_string(v) + " must be ";
  if (p.power_of_two) what += "a power of two ";
  what += "in " + std::to_string(p.min) + ".." + std::to_string(p.max);
  if (std::string(p.key) == "width") what += " (0 = automatic)";
  return what;
}

// ---- argument layout ----------------------------------------------------------------------------

std::vector<format_slot> signature_slots(sparse_op op, format_kind format) {
  std::vector<format_slot> out = {{arg_kind::i32, "rows"}, {arg_kind::i32, "cols"}};
  if (op == sparse_op::spmm) out.push_back({arg_kind::i32, "k"});
  for (const format_slot& s : find_format(format).slots) out.push_back(s);
  out.push_back({arg_kind::input, op == sparse_op::spmv ? "x" : "B"});
  out.push_back({arg_kind::output, op == sparse_op::spmv ? "y" : "C"});
  return out;
}

const char* c_type(arg_kind kind) {
  switch (kind) {
    case arg_kind::i32:
      return "int ";
    case arg_kind::i32_array:
      return "const int* __restrict__ ";
    case arg_kind::f32_array:
      return "const float* __restrict__ ";
    case arg_kind::u16_array:
      return "const unsigned short* __restrict__ ";
    case arg_kind::input:
      return "const float* __restrict__ ";
    case arg_kind::output:
    case arg_kind::scratch:
      return "float* __restrict__ ";
  }
  return "";
}

// ---- building the device data -------------------------------------------------------------------

// Padded layouts may store at most this many elements: generous for a sensible choice (32x the
// CSR entries) yet a bound on host and device memory when a program picks ELL for a power-law
// matrix. Never above INT32_MAX: kernels index with int.
int64_t stored_element_limit(const csr_matrix& a) {
  const int64_t relative = 32 * (a.nnz() + int64_t{a.rows});
  return std::min<int64_t>(INT32_MAX, std::max<int64_t>(int64_t{1} << 24, relative));
}

// A converter's arguments must match the format's slots (a registry bug otherwise).
void check_slots(const format_info& format, const format_data& data) {
  if (data.args.size() != format.slots.size())
    throw error(std::string("kernel ABI: ") + format.name + " converter gave " +
                std::to_string(data.args.size()) + " arguments for " +
                std::to_string(format.slots.size()) + " slots");
  for (size_t i = 0; i < data.args.size(); ++i)
    if (data.args[i].kind != format.slots[i].kind || data.args[i].name != format.slots[i].name)
      throw error(std::string("kernel ABI: argument ") + format.slots[i].name +
                  " has the wrong kind");
}

kernel_arg dense_arg(arg_kind kind, const char* name) {  // data supplied per trial by the runner
  kernel_arg a;
  a.kind = kind;
  a.name = name;
  return a;
}

// ---- launch geometry ----------------------------------------------------------------------------

std::string count_text(int64_t v) {
  if (v > 0 && (v & (v - 1)) == 0 && v >= 1024) {
    int bits = 0;
    while ((int64_t{1} << bits) < v) ++bits;
    return "2^" + std::to_string(bits);
  }
  return std::to_string(v);
}

int64_t ceil_div(int64_t a, int64_t b) { return a <= 0 ? 0 : (a - 1) / b + 1; }

std::string entry_label(const entry_point& entry) {
  return entry.name.empty() ? std::string("the entry point") : entry.name;
}

// grid.x from the one work key the spec gives.
int64_t grid_x_of(const launch_spec& spec, const entry_point& entry, const format_arguments& args) {
  const int64_t keys[] = {spec.rows_per_block, spec.nnz_per_block, spec.grid};
  const char* names[] = {"rows_per_block", "nnz_per_block", "grid"};
  std::string given;
  for (int i = 0; i < 3; ++i) {
    if (keys[i] < 0)
      throw error(std::string(names[i]) + "=" + std::to_string(keys[i]) + " must be positive");
    if (keys[i] > 0) given += (given.empty() ? "" : " and ") + std::string(names[i]);
  }
  const int count = (keys[0] > 0) + (keys[1] > 0) + (keys[2] > 0);
  if (count != 1)
    throw error("launch of " + entry_label(entry) +
                ": give exactly one of rows_per_block, nnz_per_block, grid (got " +
                (count == 0 ? std::string("none") : given) + ")");
  if (spec.rows_per_block > 0) return ceil_div(args.work_rows, spec.rows_per_block);
  if (spec.grid > 0) return spec.grid;
  if (!entry.nnz_work)
    throw error("nnz_per_block does not apply to " + entry_label(entry) +
                " (it is not split by nonzeros; use rows_per_block or grid)");
  // At least one block while there are rows: an nnz-split entry that writes the output (CSR)
  // must still run on a matrix whose rows are all empty.
  const int64_t blocks = ceil_div(args.work_nnz, spec.nnz_per_block);
  return args.work_rows > 0 ? std::max<int64_t>(1, blocks) : blocks;
}

}  // namespace

// ---- public
// ---------------------------------------------------------------------------------------

std::vector<entry_point> entry_points(sparse_op op, format_kind format) {
  const std::string p = std::string(op_name(op)) + "_";
  std::vector<entry_point> out;
  for (const format_entry& e : find_format(format).entries)
    out.push_back({p + e.suffix, e.nnz_work});
  return out;
}

std::string entry_signature(sparse_op op, format_kind format, const std::string& entry) {
  std::string out = "extern \"C\" __global__ void " + entry + "(";
  bool first = true;
  for (const format_slot& s : signature_slots(op, format)) {
    out += (first ? "" : ", ") + std::string(c_type(s.kind)) + s.name;
    first = false;
  }
  return out + ")";
}

std::map<std::string, int64_t> default_format_params(format_kind format) {
  std::map<std::string, int64_t> out;
  for (const format_param_rule& p : param_rules(format)) out[p.key] = p.fallback;
  return out;
}

std::vector<std::string> format_param_names(format_kind format) {
  std::vector<std::string> out;
  for (const format_param_rule& p : param_rules(format)) out.emplace_back(p.key);
  return out;
}

std::string normalize_format_params(format_kind format, std::map<std::string, int64_t>& params) {
  const std::vector<format_param_rule>& rules = param_rules(format);
  std::map<std::string, int64_t> out;
  std::map<std::string, std::string> spelled;  // canonical key -> as written
  for (const auto& [key, value] : params) {
    const std::string& written = key;  // clang 14 cannot capture a structured binding
    auto rule = std::find_if(rules.begin(), rules.end(),
                             [&](const format_param_rule& p) { return iequal(written, p.key); });
    if (rule == rules.end())
      return "unknown parameter " + quote_text(key) + " for " + format_name(format) +
             (rules.empty() ? std::string(" (it takes no parameters)")
                            : " (known: " + known_keys(format) + ")");
    if (spelled.count(rule->key))
      return std::string("parameter ") + rule->key + " given twice (" +
             quote_text(spelled[rule->key]) + " and " + quote_text(key) + ")";
    spelled[rule->key] = key;
    const bool pow2 = value > 0 && (value & (value - 1)) == 0;
    if (value < rule->min || value > rule->max || (rule->power_of_two && !pow2))
      return range_error(*rule, value);
    out[rule->key] = value;
  }
  for (const format_param_rule& p : rules) out.emplace(p.key, p.fallback);
  params = std::move(out);
  return "";
}

format_arguments build_arguments(sparse_op op, const csr_matrix& a, const kernel_program& program,
                                 int32_t k) {
  std::map<std::string, int64_t> params = program.format_params;
  const std::string bad = normalize_format_params(program.format, params);
  if (!bad.empty()) throw error(std::string("FORMAT ") + format_name(program.format) + ": " + bad);
  if (op == sparse_op::spmm && k < 1)
    throw error("SpMM: k = " + std::to_string(k) + " dense columns; need at least 1");
  const format_info& format = find_format(program.format);
  format_data data = format.convert(a, params, stored_element_limit(a));
  check_slots(format, data);
  format_arguments out;
  out.work_rows = data.work_rows;
  out.work_nnz = data.work_nnz;
  out.coo_nnz = data.coo_nnz;
  out.args.push_back(scalar_arg("rows", a.rows));
  out.args.push_back(scalar_arg("cols", a.cols));
  if (op == sparse_op::spmm) out.args.push_back(scalar_arg("k", k));
  for (kernel_arg& arg : data.args) out.args.push_back(std::move(arg));
  out.args.push_back(dense_arg(arg_kind::input, op == sparse_op::spmv ? "x" : "B"));
  out.args.push_back(dense_arg(arg_kind::output, op == sparse_op::spmv ? "y" : "C"));
  // A scratch buffer counts as the format's memory (as many floats as the input): the format
  // cannot run without it, so the memory penalty and bytes_moved see it.
  const int64_t input_floats = int64_t{a.cols} * (op == sparse_op::spmm ? k : 1);
  for (const kernel_arg& arg : out.args)
    out.footprint_bytes +=
        arg.kind == arg_kind::scratch ? input_floats * 4 : static_cast<int64_t>(arg.array_bytes());
  return out;
}

launch_geometry compute_geometry(const launch_spec& spec, const entry_point& entry,
                                 const format_arguments& args, int32_t k,
                                 const launch_limits& limits) {
  if (spec.block < 1 || spec.block > limits.max_threads_per_block)
    throw error("block=" + std::to_string(spec.block) + " is outside 1.." +
                std::to_string(limits.max_threads_per_block) + " (threads per block)");
  const int64_t grid_x = grid_x_of(spec, entry, args);
  if (grid_x > limits.max_grid_x)
    throw error("launch of " + entry_label(entry) + " needs " + std::to_string(grid_x) +
                " blocks, above the grid.x limit of " + std::to_string(limits.max_grid_x));
  if (spec.k_per_block < 0)
    throw error("k_per_block=" + std::to_string(spec.k_per_block) + " must be positive");
  if (k < 0) throw error("k = " + std::to_string(k) + " must not be negative");
  const int64_t grid_y = spec.k_per_block > 0 ? ceil_div(k, spec.k_per_block) : 1;
  if (grid_y > limits.max_grid_y)
    throw error("k_per_block=" + std::to_string(spec.k_per_block) + " gives " +
                std::to_string(grid_y) + " block rows for k = " + std::to_string(k) +
                ", above the grid.y limit of " + std::to_string(limits.max_grid_y));
  const int64_t per_block = spec.block;
  const bool too_many =
      grid_x > 0 && grid_y > 0 && (grid_x > limits.max_total_threads / per_block / grid_y);
  const int64_t blocks = too_many ? 0 : grid_x * grid_y;
  if (too_many || blocks * per_block > limits.max_total_threads)
    throw error("launch of " +
                (grid_y == 1 ? std::to_string(grid_x)
                             : std::to_string(grid_x) + " x " + std::to_string(grid_y)) +
                " blocks x " + std::to_string(spec.block) + " threads exceeds the " +
                count_text(limits.max_total_threads) + "-thread limit");
  if (spec.shared_bytes < 0 || spec.shared_bytes > limits.max_shared_bytes)
    throw error("shared=" + std::to_string(spec.shared_bytes) + " bytes is outside 0.." +
                std::to_string(limits.max_shared_bytes) + " (dynamic shared memory per block)");
  launch_geometry g;
  g.grid_x = static_cast<uint32_t>(grid_x);
  g.grid_y = static_cast<uint32_t>(grid_y);
  g.block_x = static_cast<uint32_t>(spec.block);
  g.shared_bytes = static_cast<uint32_t>(spec.shared_bytes);
  return g;
}

std::string parameter_defines(const kernel_program& program) {
  std::string out;
  auto define = [&out](const std::string& name, int64_t value) {
    out += "#define " + name + " " + std::to_string(value) + "\n";
  };
  for (const format_param_rule& p : param_rules(program.format)) {
    auto it = program.format_params.find(p.key);
    const int64_t value = it == program.format_params.end() ? p.fallback : it->second;
    if (std::string(p.key) == "width" && value == 0) continue;  // automatic: only known at run time
    define(p.define, value);
  }
  auto define_launch = [&](const std::string& prefix, const launch_spec& l) {
    define(prefix + "BLOCK", l.block);
    if (l.rows_per_block > 0) define(prefix + "ROWS_PER_BLOCK", l.rows_per_block);
    if (l.nnz_per_block > 0) define(prefix + "NNZ_PER_BLOCK", l.nnz_per_block);
    if (l.grid > 0) define(prefix + "GRID", l.grid);
    if (l.k_per_block > 0) define(prefix + "K_PER_BLOCK", l.k_per_block);
    if (l.shared_bytes > 0) define(prefix + "SHARED_BYTES", l.shared_bytes);
  };
  if (!program.launches.empty()) define_launch("SPARSERL_", program.launches.front());
  for (const launch_spec& l : program.launches) {
    const bool identifier =
        !l.entry.empty() && std::all_of(l.entry.begin(), l.entry.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        });
    if (!identifier) continue;
    std::string upper = "SPARSERL_";
    for (char c : l.entry) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    define_launch(upper + "_", l);
  }
  return out;
}

}  // namespace sparserl
