// `sparserl matrix info | gen | convert`: inspect Matrix Market files, synthesise matrices and
// report what each storage format would cost for a matrix.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "kernel/abi.h"
#include "kernel/format_registry.h"
#include "sparse/error.h"
#include "sparse/features.h"
#include "sparse/formats.h"
#include "sparse/generators.h"
#include "sparse/matrix_market.h"

namespace sparserl::cli {

namespace {

// Named values in display order, printed as an aligned table or as one JSON object.
using stats = std::vector<std::pair<std::string, nlohmann::json>>;

std::string display(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", v.get<double>());
    return text;
  }
  return v.dump();
}

void print_stats(const stats& s, bool json) {
  if (json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const auto& [name, value] : s) out[name] = value;
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  size_t width = 0;
  for (const auto& entry : s) width = std::max(width, entry.first.size());
  for (const auto& [name, value] : s)
    std::printf("%-*s  %s\n", static_cast<int>(width), name.c_str(), display(value).c_str());
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// The matrix file of info and convert: a positional, or --matrix as eval, tune and generate
// take it.
struct matrix_file {
  std::string positional, option;
  std::string path() const {
    if (positional.empty() && option.empty())
      throw error("give the Matrix Market file (FILE or --matrix FILE)");
    if (!positional.empty() && !option.empty() && positional != option)
      throw error("two matrices: " + positional + " and --matrix " + option + "; give one");
    return positional.empty() ? option : positional;
  }
};

void add_matrix_file(CLI::App* cmd, matrix_file& file) {
  cmd->add_option("file", file.positional, "Matrix Market file (.mtx or .mtx.gz)");
  cmd->add_option("--matrix", file.option, "The same, as eval and tune take it");
}

// ---- info ----

struct info_options {
  matrix_file file;
  bool json = false;
};

void run_info(const info_options& o) {
  const nlohmann::json features =
      features_to_json(compute_features(read_matrix_market(o.file.path())));
  // The struct's field order reads better than JSON's alphabetical one.
  static const char* const order[] = {"rows",
                                      "cols",
                                      "nnz",
                                      "density",
                                      "row_length_mean",
                                      "row_length_std",
                                      "row_length_min",
                                      "row_length_max",
                                      "row_length_gini",
                                      "empty_rows",
                                      "bandwidth",
                                      "diagonal_count",
                                      "diagonal_fill",
                                      "block_fill_2",
                                      "block_fill_4",
                                      "block_fill_8",
                                      "ell_padding_ratio",
                                      "block_size",
                                      "block_size_fill",
                                      "row_span_max",
                                      "column_distance_mean",
                                      "renumbered_distance_mean",
                                      "hub_share"};
  stats s;
  for (const char* name : order) s.emplace_back(name, features.at(name));
  print_stats(s, o.json);
}

void add_info(CLI::App& matrix) {
  auto o = std::make_shared<info_options>();
  CLI::App* info = matrix.add_subcommand("info", "Print the structural features of a .mtx file");
  add_matrix_file(info, o->file);
  info->add_flag("--json", o->json, "Print one JSON object instead of a table");
  info->callback([o] { run_info(*o); });
}

// ---- gen ----

struct gen_options {
  generator_spec spec;
  std::string output;
  CLI::Option* points = nullptr;
};

void run_gen(gen_options& o) {
  // The family's own defaults for what the command line left unset.
  const generator_spec d = default_spec(o.spec.family);
  if (o.points->count() == 0) o.spec.points = d.points;
  const csr_matrix a = generate_matrix(o.spec);
  write_matrix_market(o.output, a);
  std::printf("wrote %s: %s, %d x %d, %lld nonzeros\n", o.output.c_str(), o.spec.family.c_str(),
              a.rows, a.cols, static_cast<long long>(a.nnz()));
}

void add_gen(CLI::App& matrix) {
  auto o = std::make_shared<gen_options>();
  generator_spec& s = o->spec;
  CLI::App* gen =
      matrix.add_subcommand("gen", "Generate a seeded synthetic matrix into a .mtx file");
  gen->add_option("family", s.family, "One of: " + join(generator_families()))->required();
  gen->add_option("--rows", s.rows, "Rows (stencils: grid side = round(sqrt|cbrt(rows)))")
      ->required();
  gen->add_option("--cols", s.cols, "Columns, 0 = square (random, banded, lp)")
      ->capture_default_str();
  gen->add_option("--seed", s.seed, "Random seed; same seed, same matrix")->capture_default_str();
  o->points = gen->add_option("--points", s.points, "Stencil points: 5 or 9 (2D), 7 or 27 (3D)");
  gen->add_option("--bandwidth", s.bandwidth, "banded: half-width of the band")
      ->capture_default_str();
  gen->add_option("--block", s.block, "block_diagonal / fem: dense block size")
      ->capture_default_str();
  gen->add_option("--density", s.density, "random: fraction of nonzeros; lp: long-row fill")
      ->capture_default_str();
  gen->add_option("--avg-degree", s.avg_degree, "rmat / circuit / lp: mean nonzeros per row")
      ->capture_default_str();
  gen->add_option("--rmat-a", s.rmat_a, "rmat: top-left quadrant probability")
      ->capture_default_str();
  gen->add_option("--rmat-b", s.rmat_b, "rmat: top-right quadrant probability")
      ->capture_default_str();
  gen->add_option("--rmat-c", s.rmat_c,
                  "rmat: bottom-left quadrant probability (d = 1 - a - b - c)")
      ->capture_default_str();
  gen->add_option("--dense-rows", s.dense_rows, "circuit: number of dense rows and columns")
      ->capture_default_str();
  gen->add_option("--order", s.order, "graph families and fem: node order natural, random or rcm")
      ->capture_default_str();
  gen->add_option("--dims", s.dims, "fem_mesh / knn: space dimension, 2 or 3")
      ->capture_default_str();
  gen->add_option("--dof", s.dof, "fem_mesh: degrees of freedom per node, 1..6")
      ->capture_default_str();
  gen->add_option("--neighbors", s.neighbors, "knn: neighbours per point")->capture_default_str();
  gen->add_option("--exponent", s.exponent, "powerlaw: degree distribution exponent (> 2)")
      ->capture_default_str();
  gen->add_option("-o,--output", o->output, "Output .mtx (or .mtx.gz) path")->required();
  gen->callback([o] { run_gen(*o); });
}

void add_families(CLI::App& matrix) {
  CLI::App* cmd = matrix.add_subcommand("families", "List the generator families");
  cmd->callback([] {
    for (const family_info& f : family_registry())
      std::printf("%-15s %-9s %s; like %s (parameters: %s)\n", f.name,
                  f.graph ? "realistic" : "classic", f.description, f.counterpart, f.parameters);
  });
}

// ---- convert ----

// One --<key> option per FORMAT-line parameter key of the format registry (SELL's --C and
// --sigma, BSR's --r and --c, HYB's --width, RCSR's --hubs_first), so a format's parameters reach
// the CLI from its registry row alone.
struct convert_options {
  matrix_file file;
  std::string format, output;
  std::map<std::string, int64_t> values;           // by key; read only when given
  std::map<std::string, CLI::Option*> param_opts;  // by key
  bool json = false;
};

bool takes_param(const format_info& format, const std::string& key) {
  return std::any_of(format.params.begin(), format.params.end(),
                     [&](const format_param_rule& p) { return key == p.key; });
}

// The format's parameters from the options given; the others take the ABI's defaults (HYB's
// width 0: the automatic width, so the layout shown is the one run).
std::map<std::string, int64_t> format_params(const convert_options& o, const format_info& format) {
  std::map<std::string, int64_t> out;
  for (const format_param_rule& p : format.params)
    if (o.param_opts.at(p.key)->count() > 0) out[p.key] = o.values.at(p.key);
  const std::string bad = normalize_format_params(format.kind, out);
  if (!bad.empty()) throw error(std::string(format.name) + ": " + bad);
  return out;
}

std::vector<std::string> format_names() {
  std::vector<std::string> names;
  for (const format_info& f : format_registry()) names.emplace_back(f.name);
  return names;
}

// What every layout reports (stored elements: the float slots; bytes: every format array, and a
// scratch buffer as SpMV has it, cols floats: the footprint_bytes of an SpMV program), then the
// layout's own numbers.
stats layout_stats(const format_info& format, const csr_matrix& a, const format_data& d) {
  int64_t stored = 0, bytes = 0;
  for (const kernel_arg& arg : d.args) {
    stored += static_cast<int64_t>(arg.floats.size());
    bytes += arg.kind == arg_kind::scratch ? int64_t{a.cols} * 4
                                           : static_cast<int64_t>(arg.array_bytes());
  }
  stats s = {{"format", format.name},
             {"rows", a.rows},
             {"cols", a.cols},
             {"nnz", a.nnz()},
             {"stored_elements", stored},
             {"padding_ratio", a.nnz() ? static_cast<double>(stored) / a.nnz() : 1.0},
             {"bytes", bytes}};
  for (const auto& [name, value] : d.facts) s.emplace_back(name, value);
  return s;
}

// Options that only some formats read are refused with any other, rather than silently ignored.
void check_format_options(const convert_options& o, const format_info& format) {
  for (const auto& [key, opt] : o.param_opts) {
    if (opt->count() == 0 || takes_param(format, key)) continue;
    std::string owners;
    for (const format_info& f : format_registry())
      if (takes_param(f, key)) owners += (owners.empty() ? "" : ", ") + std::string(f.name);
    throw error(opt->get_name() + " applies to --format " + owners + " only, not " + o.format);
  }
}

// The converted layout as one JSON object (documented in --output's help and README):
// {"format", "parameters": {key: value}, "rows", "cols", "nnz",
//  "arguments": {name: int | [numbers] | null}} with the arguments between (rows, cols[, k]) and
// the dense operands of the format's entry points, in their order (docs/kernel-abi.md); a scratch
// buffer (RCSR's work) is null: the runner allocates it.
void write_layout(const std::string& path, const format_info& format,
                  const std::map<std::string, int64_t>& params, const csr_matrix& a,
                  const format_data& d) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  out["format"] = format.name;
  out["parameters"] = nlohmann::ordered_json::object();
  for (const format_param_rule& p : format.params) out["parameters"][p.key] = params.at(p.key);
  out["rows"] = a.rows;
  out["cols"] = a.cols;
  out["nnz"] = a.nnz();
  nlohmann::ordered_json& args = out["arguments"] = nlohmann::ordered_json::object();
  for (const kernel_arg& arg : d.args) {
    switch (arg.kind) {
      case arg_kind::i32:
        args[arg.name] = arg.scalar;
        break;
      case arg_kind::i32_array:
        args[arg.name] = arg.ints;
        break;
      case arg_kind::f32_array:
        args[arg.name] = arg.floats;
        break;
      case arg_kind::u16_array:
        args[arg.name] = arg.shorts;
        break;
      case arg_kind::scratch:
        args[arg.name] = nullptr;  // the runner allocates it (input-sized); nothing to show
        break;
      default:
        break;  // converters give format arguments only
    }
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw error(path + ": cannot write the converted matrix");
  file << out.dump() << '\n';
  file.close();
  if (!file) {
    std::remove(path.c_str());
    throw error(path + ": writing the converted matrix failed");
  }
}

void run_convert(convert_options& o) {
  std::transform(o.format.begin(), o.format.end(), o.format.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  const std::optional<format_kind> kind = parse_format(o.format);
  if (!kind)
    throw error("unknown format '" + o.format + "': expected one of " + join(format_names()));
  const format_info& format = find_format(*kind);
  check_format_options(o, format);
  const csr_matrix a = read_matrix_market(o.file.path());
  const std::map<std::string, int64_t> params = format_params(o, format);
  const format_data d = format.convert(a, params, default_max_padded_elements);
  if (!o.output.empty()) write_layout(o.output, format, params, a, d);
  print_stats(layout_stats(format, a, d), o.json);
  if (!o.output.empty() && !o.json)
    std::printf("wrote %s: the %s arrays as JSON\n", o.output.c_str(), format.name);
}

void add_convert(CLI::App& matrix) {
  auto o = std::make_shared<convert_options>();
  CLI::App* convert = matrix.add_subcommand(
      "convert", "Convert a .mtx file to a storage format and print what the layout stores");
  add_matrix_file(convert, o->file);
  convert->add_option("--format", o->format, "One of: " + join(format_names()))->required();
  // Keys shared by several formats get one option (none today; C and c differ in case).
  for (const format_info& f : format_registry())
    for (const format_param_rule& p : f.params) {
      if (o->param_opts.count(p.key)) continue;
      const std::string help =
          std::string(f.name) + ": " + p.meaning + " (default " + std::to_string(p.fallback) + ")";
      o->param_opts[p.key] = convert->add_option("--" + std::string(p.key), o->values[p.key], help);
    }
  convert->add_flag("--json", o->json, "Print one JSON object instead of a table");
  convert->add_option(
      "-o,--output", o->output,
      "Also write the converted arrays, as one JSON object: {\"format\", \"parameters\": "
      "{KEY: value}, \"rows\", \"cols\", \"nnz\", \"arguments\": {NAME: int or array}}, the "
      "arguments of the format's entry points between rows, cols and the dense operands, in "
      "their order and layout (docs/kernel-abi.md)");
  convert->callback([o] { run_convert(*o); });
}

}  // namespace

void add_matrix_command(CLI::App& app) {
  CLI::App* matrix = app.add_subcommand("matrix", "Inspect, generate and convert sparse matrices");
  matrix->require_subcommand(1);
  add_info(*matrix);
  add_gen(*matrix);
  add_families(*matrix);
  add_convert(*matrix);
}

}  // namespace sparserl::cli
