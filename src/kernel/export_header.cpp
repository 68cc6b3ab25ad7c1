#include "kernel/export_header.h"

#include <sstream>
#include <vector>

#include "kernel/abi.h"
#include "kernel/format_registry.h"
#include "sparse/error.h"

namespace sparserl {

namespace {

// What every exported header shares: CUDA error checks, device arrays, the CSR input and its
// checks, the padding limit and the launch geometry, each as the harness has it (abi.cpp).
constexpr const char* host_helpers = R"host(
inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("sparserl_export: ") + what + ": " +
                             cudaGetErrorString(status));
}

// A device copy of a host array, freed with the object (empty arrays stay null).
template <typename T>
class device_array {
 public:
  device_array() = default;
  explicit device_array(const std::vector<T>& host) : bytes_(host.size() * sizeof(T)) {
    if (bytes_ == 0) return;
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&data_), bytes_), "cudaMalloc");
    const cudaError_t copied = cudaMemcpy(data_, host.data(), bytes_, cudaMemcpyHostToDevice);
    if (copied != cudaSuccess) {
      cudaFree(data_);
      data_ = nullptr;
      check_cuda(copied, "cudaMemcpy");
    }
  }
  device_array(device_array&& other) noexcept { swap(other); }
  device_array& operator=(device_array&& other) noexcept {
    swap(other);
    return *this;
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  ~device_array() {
    if (data_ != nullptr) cudaFree(data_);
  }
  const T* get() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void swap(device_array& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
  }
  T* data_ = nullptr;
  size_t bytes_ = 0;
};

// A scratch argument (RCSR's work): a device buffer of as many floats as the input, which the
// program writes before it reads. Grown to the largest input a call needs (SpMM: cols x k); its
// contents between calls are undefined. One buffer per kernel object: calls of one object on
// several streams at once would share it (serialize them, or use one object per stream).
class scratch_buffer {
 public:
  scratch_buffer() = default;
  scratch_buffer(scratch_buffer&& other) noexcept { swap(other); }
  scratch_buffer& operator=(scratch_buffer&& other) noexcept {
    swap(other);
    return *this;
  }
  scratch_buffer(const scratch_buffer&) = delete;
  scratch_buffer& operator=(const scratch_buffer&) = delete;
  ~scratch_buffer() {
    if (data_ != nullptr) cudaFree(data_);
  }
  float* get(size_t floats) {
    floats = std::max<size_t>(floats, 1);  // never a null pointer, as the harness
    if (floats > floats_) {
      if (data_ != nullptr) cudaFree(data_);  // synchronizes: earlier launches are done with it
      data_ = nullptr;
      floats_ = 0;
      check_cuda(cudaMalloc(reinterpret_cast<void**>(&data_), floats * sizeof(float)),
                 "cudaMalloc (scratch)");
      floats_ = floats;
    }
    return data_;
  }
  size_t bytes() const { return floats_ * sizeof(float); }

 private:
  void swap(scratch_buffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(floats_, other.floats_);
  }
  float* data_ = nullptr;
  size_t floats_ = 0;
};

// The CSR matrix every format is built from, copied from the caller's arrays.
struct csr_host {
  int rows = 0, cols = 0;
  long long nnz = 0;
  std::vector<int> row_ptr, col_idx;
  std::vector<float> values;
  int row_length(int r) const { return row_ptr[r + 1] - row_ptr[r]; }
};

// Copies and checks CSR arrays: row_ptr[rows + 1] from 0 to nnz, never decreasing; columns in
// [0, cols), strictly ascending within a row (the layouts rely on it).
inline csr_host read_csr(int rows, int cols, int nnz, const int* row_ptr, const int* col_idx,
                         const float* values) {
  auto fail = [](const std::string& why) {
    throw std::invalid_argument("sparserl_export: invalid CSR matrix: " + why);
  };
  if (rows < 0 || cols < 0 || nnz < 0) fail("negative dimensions");
  if (row_ptr == nullptr || (nnz > 0 && (col_idx == nullptr || values == nullptr)))
    fail("a null array");
  csr_host a;
  a.rows = rows;
  a.cols = cols;
  a.nnz = nnz;
  a.row_ptr.assign(row_ptr, row_ptr + rows + 1);
  a.col_idx.assign(col_idx, col_idx + nnz);
  a.values.assign(values, values + nnz);
  if (a.row_ptr[0] != 0) fail("row_ptr[0] != 0");
  if (a.row_ptr[rows] != nnz) fail("row_ptr[rows] != nnz");
  for (int r = 0; r < rows; ++r)
    if (a.row_ptr[r + 1] < a.row_ptr[r]) fail("row_ptr decreases at row " + std::to_string(r));
  for (int r = 0; r < rows; ++r)
    for (int e = a.row_ptr[r]; e < a.row_ptr[r + 1]; ++e) {
      if (a.col_idx[e] < 0 || a.col_idx[e] >= cols)
        fail("column out of range in row " + std::to_string(r));
      if (e > a.row_ptr[r] && a.col_idx[e] <= a.col_idx[e - 1])
        fail("columns not strictly ascending in row " + std::to_string(r));
    }
  return a;
}

// The elements a padded layout may store: what the harness allowed when it judged the program,
// max(2^24, 32 x (nnz + rows)), never above 2^31 - 1 (kernels index with int).
inline long long stored_element_limit(const csr_host& a) {
  const long long relative = 32 * (a.nnz + a.rows);
  return std::min<long long>(2147483647LL, std::max<long long>(1LL << 24, relative));
}

inline void check_elements(const char* format, long long elements, long long max_elements) {
  if (elements > max_elements)
    throw std::runtime_error(std::string("sparserl_export: ") + format +
                             ": the matrix would store " + std::to_string(elements) +
                             " elements, above the limit of " + std::to_string(max_elements));
}

inline long long ceil_div(long long a, long long b) { return a <= 0 ? 0 : (a - 1) / b + 1; }

// One entry point's geometry from its LAUNCH line (exactly one of rows_per_block, nnz_per_block,
// grid is set); no blocks means the entry point is not launched.
struct launch_shape {
  dim3 grid, block;
  size_t shared = 0;
  bool empty = false;
};
inline launch_shape shape_of(const char* entry, int block, long long rows_per_block,
                             long long nnz_per_block, long long grid, long long k_per_block,
                             int shared, long long work_rows, long long work_nnz, int k) {
  long long grid_x = grid;
  if (rows_per_block > 0) grid_x = ceil_div(work_rows, rows_per_block);
  if (nnz_per_block > 0) {
    // At least one block while there are rows: an entry that writes the output must run.
    grid_x = ceil_div(work_nnz, nnz_per_block);
    if (work_rows > 0 && grid_x < 1) grid_x = 1;
  }
  const long long grid_y = k_per_block > 0 ? ceil_div(k, k_per_block) : 1;
  if (grid_x > 2147483647LL || grid_y > 65535 || grid_x * grid_y * block > (1LL << 32))
    throw std::runtime_error(std::string("sparserl_export: the launch of ") + entry + " needs " +
                             std::to_string(grid_x) + " x " + std::to_string(grid_y) +
                             " blocks, beyond the CUDA limits");
  launch_shape s;
  s.grid = dim3(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
  s.block = dim3(static_cast<unsigned>(block));
  s.shared = static_cast<size_t>(shared);
  s.empty = grid_x == 0 || grid_y == 0;
  return s;
}
)host";

// The FORMAT line's text after "FORMAT: " and the LAUNCH lines, from the canonical text.
std::vector<std::string> program_header_lines(const kernel_program& program) {
  kernel_program bare = program;
  bare.source.clear();
  std::vector<std::string> lines;
  std::istringstream text(bare.to_text());
  for (std::string line; std::getline(text, line);) lines.push_back(line);
  return lines;
}

std::string printable(const std::string& text) {
  std::string out;
  for (char c : text) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return out;
}

// "#undef NAME" for every "#define NAME value" line of `defines`.
std::string undefines(const std::string& defines) {
  std::istringstream lines(defines);
  std::string out;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string directive, name;
    if (words >> directive >> name && directive == "#define") out += "#undef " + name + "\n";
  }
  return out;
}

// The C++ element type of a format slot (its scalar's type for i32).
const char* element_type(arg_kind kind) {
  switch (kind) {
    case arg_kind::i32:
    case arg_kind::i32_array:
      return "int";
    case arg_kind::f32_array:
    case arg_kind::scratch:
      return "float";
    case arg_kind::u16_array:
      return "unsigned short";
    default:
      throw error("export: a format slot of an unexpected kind");
  }
}

// How the conversion holds a slot on the host, and how the kernel object holds it on the device.
std::string host_type(arg_kind kind) {
  const std::string e = element_type(kind);
  return kind == arg_kind::i32 ? e : "std::vector<" + e + ">";
}

std::string device_type(arg_kind kind) {
  if (kind == arg_kind::scratch) return "mutable detail::scratch_buffer";
  const std::string e = element_type(kind);
  return kind == arg_kind::i32 ? e : "detail::device_array<" + e + ">";
}

// struct format_arrays and convert_from_csr(): the format's own host conversion.
std::string conversion_code(const kernel_program& program, const format_info& format) {
  std::string out = "// The matrix in " + std::string(format.name) +
                    ", host side: one member per argument of the entry points.\n"
                    "struct format_arrays {\n";
  for (const format_slot& s : format.slots)
    if (s.kind != arg_kind::scratch) out += "  " + host_type(s.kind) + " " + s.name + "{};\n";
  out +=
      "  long long work_rows = 0, work_nnz = 0;  // what rows_per_block / nnz_per_block divide\n";
  out += "};\n\ninline format_arrays convert_from_csr(const csr_host& a) {\n";
  out += "  format_arrays f;\n";
  out += "  const long long max_elements = stored_element_limit(a);\n";
  out += "  (void)max_elements;\n";
  for (const format_param_rule& p : format.params)
    out += "  const long long " + std::string(p.key) + " = " +
           std::to_string(program.format_params.at(p.key)) + ";  // " + p.meaning + "\n";
  out += "  {\n";
  std::istringstream body(format.host_conversion);
  for (std::string line; std::getline(body, line);)
    out += line.empty() ? "\n" : "    " + line + "\n";
  out += "  }\n  return f;\n}\n";
  return out;
}

std::string launch_code(const kernel_program& program, sparse_op op, const format_info& format) {
  const std::vector<entry_point> entries = entry_points(op, program.format);
  std::string out;
  for (size_t i = 0; i < entries.size(); ++i) {
    const launch_spec& l = program.launches.at(i);
    const std::string& name = entries[i].name;
    if (!l.entry.empty() && l.entry != name)
      throw error("export: launch " + std::to_string(i) + " is for " + l.entry + ", not " + name);
    out += "    {\n      const detail::launch_shape s = detail::shape_of(\"" + name + "\", " +
           std::to_string(l.block) + ", " + std::to_string(l.rows_per_block) + ", " +
           std::to_string(l.nnz_per_block) + ", " + std::to_string(l.grid) + ", " +
           std::to_string(l.k_per_block) + ", " + std::to_string(l.shared_bytes) +
           ", work_rows_, work_nnz_, k);\n";
    std::string args = "matrix_rows_, matrix_cols_";
    if (op == sparse_op::spmm) args += ", k";
    for (const format_slot& s : format.slots)
      args += ", " + std::string(s.name) +
              (s.kind == arg_kind::i32       ? "_"
               : s.kind == arg_kind::scratch ? "_.get(static_cast<size_t>(matrix_cols_) * k)"
                                             : "_.get()");
    args += ", input, output";
    out += "      if (!s.empty) {\n        " + name + "<<<s.grid, s.block, s.shared, stream>>>(" +
           args + ");\n" + "        detail::check_cuda(cudaGetLastError(), \"launch of " + name +
           "\");\n" + "      }\n    }\n";
  }
  return out;
}

std::string class_code(const kernel_program& program, sparse_op op, const format_info& format,
                       const std::string& format_line) {
  const std::string cls = exported_class_name(op);
  const bool spmm = op == sparse_op::spmm;
  std::string out;
  out += "// " + std::string(spmm ? "C = A B" : "y = A x") + " with the program, A in " +
         format_line + " on the device.\n";
  out += "class " + cls + " {\n public:\n";
  out += "  // Converts the host CSR matrix (rows x cols, nnz entries) into " +
         std::string(format.name) +
         " and uploads it to the current\n"
         "  // device, once. Throws std::invalid_argument for a malformed CSR matrix,\n"
         "  // std::runtime_error when the format cannot hold it or CUDA fails.\n";
  out += "  " + cls +
         "(int rows, int cols, int nnz, const int* row_ptr, const int* col_idx,\n"
         "              const float* values) {\n"
         "    const detail::csr_host a = detail::read_csr(rows, cols, nnz, row_ptr, col_idx, "
         "values);\n"
         "    detail::format_arrays f = detail::convert_from_csr(a);\n"
         "    matrix_rows_ = a.rows;\n    matrix_cols_ = a.cols;\n"
         "    matrix_nnz_ = static_cast<int>(a.nnz);\n"
         "    work_rows_ = f.work_rows;\n    work_nnz_ = f.work_nnz;\n";
  for (const format_slot& s : format.slots) {
    if (s.kind == arg_kind::scratch) {  // allocated here for SpMV; SpMM knows k at the call
      if (!spmm) out += std::string("    ") + s.name + "_.get(static_cast<size_t>(a.cols));\n";
      continue;
    }
    out += std::string("    ") + s.name + "_ = " +
           (s.kind == arg_kind::i32 ? std::string("f.") + s.name
                                    : device_type(s.kind) + "(f." + s.name + ")") +
           ";\n";
  }
  // Above 48 KiB of dynamic shared memory a kernel must opt in (the harness does the same).
  const std::vector<entry_point> entries = entry_points(op, program.format);
  for (size_t i = 0; i < entries.size(); ++i)
    if (program.launches.at(i).shared_bytes > 48 * 1024)
      out += "    detail::check_cuda(cudaFuncSetAttribute(" + entries[i].name +
             ", cudaFuncAttributeMaxDynamicSharedMemorySize, " +
             std::to_string(program.launches.at(i).shared_bytes) +
             "), \"cudaFuncSetAttribute\");\n";
  out += "  }\n\n";
  if (spmm)
    out +=
        "  // C = A B: B is cols x k, C rows x k, both row-major float arrays on the device. "
        "Every\n"
        "  // element of C is written. Asynchronous on `stream`; throws std::invalid_argument "
        "for k < 1\n"
        "  // and std::runtime_error when a launch fails.\n"
        "  void operator()(const float* B, float* C, int k, cudaStream_t stream = 0) const {\n"
        "    if (k < 1) throw std::invalid_argument(\"sparserl_export: SpMM needs k >= 1\");\n"
        "    launch(B, C, k, stream);\n  }\n\n";
  else
    out +=
        "  // y = A x: x has cols floats, y rows floats, on the device; every element of y is\n"
        "  // written. Asynchronous on `stream`; throws std::runtime_error when a launch fails.\n"
        "  void operator()(const float* x, float* y, cudaStream_t stream = 0) const {\n"
        "    launch(x, y, 1, stream);\n  }\n\n";
  out +=
      "  int rows() const { return matrix_rows_; }\n"
      "  int cols() const { return matrix_cols_; }\n"
      "  int nnz() const { return matrix_nnz_; }\n"
      "  // Bytes of the format's arrays (and scratch buffer) on the device.\n"
      "  size_t device_bytes() const {\n    return ";
  std::string sum;
  for (const format_slot& s : format.slots)
    if (s.kind != arg_kind::i32)
      sum += (sum.empty() ? "" : " + ") + std::string(s.name) + "_.bytes()";
  out += (sum.empty() ? "0" : sum) + ";\n  }\n\n private:\n";
  out +=
      "  // The entry points in launch order, on one stream: together they write every output "
      "element.\n";
  out += "  void launch(const float* input, float* output, int k, cudaStream_t stream) const {\n";
  out += launch_code(program, op, format);
  out += "  }\n\n";
  out += "  int matrix_rows_ = 0, matrix_cols_ = 0, matrix_nnz_ = 0;\n";
  out += "  long long work_rows_ = 0, work_nnz_ = 0;\n";
  out += "  // The format's arguments, in the entry points' order.\n";
  for (const format_slot& s : format.slots)
    out += "  " + device_type(s.kind) + " " + s.name + "_" +
           (s.kind == arg_kind::i32 ? " = 0" : "") + ";\n";
  out += "};\n";
  return out;
}

}  // namespace

std::string exported_class_name(sparse_op op) { return std::string(op_name(op)) + "_kernel"; }

std::string export_header(const kernel_program& program, sparse_op op, const std::string& origin) {
  const format_info& format = find_format(program.format);
  if (program.launches.size() != format.entries.size())
    throw error("export: the program has " + std::to_string(program.launches.size()) +
                " launches for " + std::to_string(format.entries.size()) + " entry points");
  const std::vector<std::string> lines = program_header_lines(program);
  const std::string format_line = lines.at(0).substr(std::string("FORMAT: ").size());
  const std::string cls = exported_class_name(op);
  const std::string defines = parameter_defines(program);
  const bool spmm = op == sparse_op::spmm;

  std::string out;
  out += "// A " + std::string(op_name(op)) +
         " kernel exported by `sparserl export`: the program's device code, the conversion of\n"
         "// a host CSR matrix into its format and the launch of its entry points, for nvcc and "
         "the CUDA\n"
         "// runtime alone. Include it in one .cu file of a program (the entry points have C "
         "linkage):\n//\n";
  out += "//   sparserl_export::" + cls +
         " kernel(rows, cols, nnz, row_ptr, col_idx, values);  // host CSR\n";
  out += spmm ? "//   kernel(d_B, d_C, k, stream);  // device: B cols x k, C rows x k, row-major\n"
              : "//   kernel(d_x, d_y, stream);     // device: x has cols floats, y rows\n";
  out +=
      "//\n"
      "// The constructor converts and uploads once; each call only launches. Build with the "
      "program's\n"
      "// target, e.g. nvcc -std=c++17 -arch=sm_90 (the harness compiles for the GPU it runs "
      "on).\n//\n"
      "// The program (sparserl's docs/kernel-abi.md), from " +
      printable(origin) + ":\n";
  for (const std::string& line : lines) out += "//   " + line + "\n";
  out += "#pragma once\n#include <cuda_runtime.h>\n\n";
  out +=
      "#include <algorithm>\n#include <cstddef>\n#include <functional>\n#include <numeric>\n"
      "#include <stdexcept>\n#include <string>\n#include <utility>\n#include <vector>\n\n";
  out += std::string("#define SPARSERL_EXPORT_") + (spmm ? "SPMM" : "SPMV") +
         " 1  // the operation this header's class runs\n";
  out += "#define SPARSERL_EXPORT_FORMAT \"" + format_line + "\"  // its storage format\n\n";
  out += "// ---- the program's device code, after the constants the harness defines for it ----\n";
  out += defines;
  out += "// clang-format off\n";
  out += program.source;
  if (!program.source.empty() && program.source.back() != '\n') out += "\n";
  out += "// clang-format on\n";
  out += undefines(defines);
  out += "// ---- end of the program's device code ----\n\n";
  out += "namespace sparserl_export {\nnamespace detail {\n";
  out += host_helpers;
  out += "\n" + conversion_code(program, format);
  out += "\n}  // namespace detail\n\n";
  out += class_code(program, op, format, format_line);
  out += "\n}  // namespace sparserl_export\n";
  return out;
}

}  // namespace sparserl
