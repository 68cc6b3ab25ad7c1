#include "train/cuda_corpus.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "kernel/expert_library.h"
#include "kernel/heuristic.h"
#include "sparse/error.h"
#include "sparse/features.h"
#include "sparse/generators.h"
#include "train/data_split.h"
#include "train/jsonl_file.h"

namespace sparserl::train {

namespace fs = std::filesystem;

namespace {

// Device-side headers directly under include/, most useful first; each entry is a name prefix.
const char* const device_header_prefixes[] = {
    "cuda_fp16.",
    "cuda_bf16.",
    "cuda_fp8.",
    "cuda_fp6.",
    "cuda_fp4.",
    "sm_",
    "device_atomic_functions.",
    "device_double_functions.",
    "device_functions.",
    "cooperative_groups.h",
    "mma.h",
    "cuda_pipeline",
    "cuda_awbarrier",
    "math_constants.h",
    "vector_functions.",
    "vector_types.h",
    "texture_indirect_functions.",
    "surface_indirect_functions.",
};
// Device-side folders under include/, whole.
const char* const device_header_dirs[] = {"crt", "cooperative_groups"};
// CCCL's libraries, under include/cccl/ (CUDA 13) or include/ (CUDA 12).
const char* const cccl_dirs[] = {"cub", "thrust", "cuda", "nv"};

bool code_file(const fs::path& p) {
  const std::string ext = p.extension().string();
  // libc++-style headers (<cuda/std/atomic>) have no extension.
  return ext.empty() || ext == ".h" || ext == ".hpp" || ext == ".cuh" || ext == ".inl";
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::vector<std::string> sorted_tree(const fs::path& root, const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file() && code_file(it->path()))
      out.push_back(fs::relative(it->path(), root).generic_string());
  if (ec) throw error(dir.string() + ": cannot list: " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

bool mentions_licence(const std::string& comment) {
  const std::string l = lower(comment);
  return l.find("copyright") != std::string::npos || l.find("licen") != std::string::npos ||
         l.find("spdx") != std::string::npos;
}

// The end of the leading comment at `pos` (a /* */ block or a run of // lines), or npos.
size_t comment_end(const std::string& text, size_t pos) {
  if (text.compare(pos, 2, "/*") == 0) {
    const size_t close = text.find("*/", pos + 2);
    return close == std::string::npos ? std::string::npos : close + 2;
  }
  if (text.compare(pos, 2, "//") != 0) return std::string::npos;
  size_t end = pos;
  while (end < text.size()) {
    const size_t start = text.find_first_not_of(" \t", end);
    if (start == std::string::npos || text.compare(start, 2, "//") != 0) break;
    const size_t nl = text.find('\n', start);
    end = nl == std::string::npos ? text.size() : nl + 1;
  }
  return end;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error(path.string() + ": cannot read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The fixed matrices whose expert spaces give the corpus its programs: one per classic generator
// family at a small size, so every template and its structure-dependent parameters appear, and a
// 3-dof FEM mesh for the BSR block shape detected from the structure (3x3).
std::vector<csr_matrix> expert_matrices() {
  std::vector<csr_matrix> out;
  for (const std::string& family : classic_families()) {
    generator_spec spec = default_spec(family);
    spec.rows = 729;  // a square and a cube: the stencils keep their size
    spec.block = 4;
    spec.avg_degree = 12;
    spec.density = 0.02;
    out.push_back(generate_matrix(spec));
  }
  generator_spec fem = default_spec("fem_mesh");
  fem.rows = 729;
  fem.dof = 3;
  out.push_back(generate_matrix(fem));
  return out;
}

// Every distinct program, interleaved by template (each template's first program, then each
// one's second, ...), so that a byte cap keeps every template: in matrix order, a 256 KB cap (the
// CPU quickstart's) held no BSR program and 11 of csr_merge, and each template added to the
// library pushed out programs of the ones before it.
void add_expert_programs(std::vector<corpus_document>& docs) {
  std::set<std::string> seen;
  std::vector<std::string> templates;  // in order of first appearance
  std::map<std::string, std::vector<corpus_document>> by_template;
  auto add = [&](const expert_config& config) {
    const std::string name = config.describe();
    if (!seen.insert(name).second) return;
    const std::string key = config.name + (config.op == sparse_op::spmv ? " spmv" : " spmm");
    if (by_template.count(key) == 0) templates.push_back(key);
    by_template[key].push_back({"expert/" + name, emit_program(config).to_text(), ""});
  };
  for (const csr_matrix& m : expert_matrices()) {
    const matrix_features f = compute_features(m);
    for (const auto& [op, k] :
         {std::pair{sparse_op::spmv, 1}, {sparse_op::spmm, 8}, {sparse_op::spmm, 64}}) {
      add(pick_heuristic(op, f, k));
      for (const expert_config& c : expert_space(op, f, k)) add(c);
    }
  }
  for (size_t round = 0, added = 1; added > 0; ++round) {
    added = 0;
    for (const std::string& key : templates) {
      std::vector<corpus_document>& programs = by_template[key];
      if (round >= programs.size()) continue;
      docs.push_back(std::move(programs[round]));
      ++added;
    }
  }
}

}  // namespace

std::vector<std::string> toolkit_corpus_files(const std::string& cuda_root) {
  const fs::path root(cuda_root), include = root / "include";
  std::error_code ec;
  if (!fs::is_directory(include, ec))
    throw error(cuda_root + ": no include/ directory (expected a CUDA toolkit; see --cuda-root)");
  std::vector<std::string> top;
  for (const fs::directory_entry& e : fs::directory_iterator(include, ec))
    if (e.is_regular_file()) top.push_back(e.path().filename().string());
  std::sort(top.begin(), top.end());
  std::vector<std::string> out;
  for (const char* prefix : device_header_prefixes)
    for (const std::string& name : top)
      if (starts_with(name, prefix)) out.push_back("include/" + name);
  for (const char* dir : device_header_dirs) {
    const std::vector<std::string> files = sorted_tree(root, include / dir);
    out.insert(out.end(), files.begin(), files.end());
  }
  const fs::path cccl = fs::is_directory(include / "cccl", ec) ? include / "cccl" : include;
  for (const char* dir : cccl_dirs) {
    const std::vector<std::string> files = sorted_tree(root, cccl / dir);
    out.insert(out.end(), files.begin(), files.end());
  }
  // No file twice, should the lists above ever overlap.
  std::set<std::string> seen;
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const std::string& p) { return !seen.insert(p).second; }),
            out.end());
  return out;
}

std::string strip_licence_header(const std::string& text) {
  size_t pos = 0;
  while (true) {
    const size_t start = text.find_first_not_of(" \t\r\n", pos);
    if (start == std::string::npos) return pos == 0 ? text : "";
    const size_t end = comment_end(text, start);
    if (end == std::string::npos || !mentions_licence(text.substr(start, end - start)))
      return pos == 0 ? text : text.substr(start);
    pos = end;
  }
}

std::vector<corpus_document> build_cuda_corpus(const corpus_options& o, corpus_stats* stats) {
  if (o.max_bytes < 0)
    throw error("--max-bytes " + std::to_string(o.max_bytes) + ": expected >= 0");
  split_of(0, o.val_fraction);  // checks the fraction
  corpus_stats s;
  std::vector<corpus_document> candidates;
  if (o.expert_programs) add_expert_programs(candidates);
  const size_t experts = candidates.size();
  if (o.toolkit) {
    for (const std::string& rel : toolkit_corpus_files(o.cuda_root)) {
      const fs::path path = fs::path(o.cuda_root) / rel;
      std::error_code ec;
      const uintmax_t size = fs::file_size(path, ec);
      if (ec) throw error(path.string() + ": " + ec.message());
      if (static_cast<int64_t>(size) > o.max_document_bytes) {
        ++s.skipped_large;
        continue;
      }
      std::string text = read_text(path);
      if (text.find('\0') != std::string::npos) {
        ++s.skipped_binary;
        continue;
      }
      candidates.push_back({"cuda/" + rel, strip_licence_header(text), ""});
    }
  }
  std::vector<corpus_document> docs;
  for (size_t i = 0; i < candidates.size(); ++i) {
    corpus_document& d = candidates[i];
    if (d.text.empty()) continue;
    const int64_t size = static_cast<int64_t>(d.text.size());
    if (s.bytes + size > o.max_bytes) {
      ++s.skipped_over_cap;
      continue;
    }
    s.bytes += size;
    ++(i < experts ? s.expert_documents : s.toolkit_documents);
    d.split = split_of(stable_hash(d.source), o.val_fraction);
    docs.push_back(std::move(d));
  }
  if (stats) *stats = s;
  return docs;
}

void write_corpus_jsonl(const std::string& path, const std::vector<corpus_document>& docs) {
  jsonl_writer out(path);
  for (const corpus_document& d : docs)
    out.add(nlohmann::ordered_json{{"source", d.source}, {"text", d.text}, {"split", d.split}});
  out.commit();
}

std::vector<corpus_document> read_corpus_jsonl(const std::string& path) {
  std::vector<corpus_document> docs;
  read_jsonl(path, [&](const nlohmann::json& j, int64_t) {
    corpus_document d;
    const auto text = j.find("text");
    if (text == j.end() || !text->is_string()) throw error("expected a string field \"text\"");
    d.text = text->get<std::string>();
    d.source = j.value("source", std::string());
    d.split = j.value("split", std::string("train"));
    docs.push_back(std::move(d));
  });
  return docs;
}

}  // namespace sparserl::train
