#include "train/dataset_build.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "eval/autotune.h"
#include "kernel/expert_library.h"
#include "kernel/heuristic.h"
#include "sparse/error.h"
#include "sparse/features.h"
#include "sparse/matrix_market.h"
#include "train/data_split.h"
#include "train/parallel_for.h"
#include "train/progress_bar.h"

namespace sparserl::train {

namespace fs = std::filesystem;

namespace {

bool is_matrix_market(const fs::path& p) {
  const std::string name = p.filename().string();
  auto ends = [&](const std::string& s) {
    return name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".mtx") || ends(".mtx.gz");
}

// Draws from a fixed generator by modulo, not <random>'s distributions: those differ between
// standard libraries, and the same --seed must give the same matrices everywhere.
struct draw {
  std::mt19937_64 rng;
  int64_t in(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  }
  double real(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
  }
};

generator_spec random_spec(const std::string& family, draw& d, int32_t min_rows, int32_t max_rows,
                           const std::vector<int32_t>& block_sizes) {
  generator_spec s;
  s.family = family;
  s.rows = static_cast<int32_t>(d.in(min_rows, std::max(min_rows, max_rows)));
  s.seed = d.rng();
  find_family(family).vary(s, [&d](int64_t lo, int64_t hi) { return d.in(lo, hi); });
  s.avg_degree = d.real(2, 16);
  s.density = std::min(1.0, d.real(2, 16) / s.rows);
  s.dense_rows = static_cast<int32_t>(d.in(1, 4));
  // Drawn last, so that the option changes nothing else about the matrix.
  if (!block_sizes.empty() && family_reads(find_family(family), "block"))
    s.block =
        block_sizes[static_cast<size_t>(d.in(0, static_cast<int64_t>(block_sizes.size()) - 1))];
  return s;
}

bool same_structure(const csr_matrix& a, const csr_matrix& b) {
  return a.rows == b.rows && a.cols == b.cols && a.row_ptr == b.row_ptr && a.col_idx == b.col_idx;
}

sft_candidate candidate_of(const std::string& program, const verdict& v) {
  sft_candidate c;
  c.program = program;
  c.time_ms = v.kernel_ms;
  c.speedup = v.speedup;
  c.correct = v.correct;
  return c;
}

void set_code(sft_sample& s, const kernel_program& program) {
  s.code = program.to_text();
  s.format = format_name(program.format);
}

// One matrix's outcome: a sample, or why it was left out.
struct outcome {
  std::optional<sft_sample> sample;
  uint64_t hash = 0;
  std::string warning;
  enum { labelled, too_large, unlabelled, already_labelled } kind = labelled;
};

class labelling {
 public:
  labelling(program_runner* runner, const eval_options& eval, const dataset_build_options& o)
      : options_(o) {
    tune_ = o.label == labeller::autotune ||
            (o.label == labeller::automatic && runner && std::string(runner->name()) == "gpu");
    if (tune_ && !runner) throw error("dataset build: autotune labels need a runner");
    if (runner && (tune_ || o.verify)) evaluator_.emplace(*runner, eval);
    if (tune_)
      method_ = std::string("autotune on ") + runner->name();
    else if (evaluator_)
      method_ = std::string("heuristic verified on ") + runner->name();
    else
      method_ = "heuristic (unverified)";
  }

  const std::string& method() const { return method_; }

  outcome label(const matrix_item& item) {
    outcome out;
    const csr_matrix m = item.load();
    if (m.nnz() > options_.max_nnz && !item.spec) {
      out.kind = outcome::too_large;
      out.warning = item.name + ": " + std::to_string(m.nnz()) +
                    " nonzeros, more than --max-matrix-nnz " + std::to_string(options_.max_nnz) +
                    "; left out";
      return out;
    }
    out.hash = matrix_structure_hash(m);
    if (options_.already_labelled.count(out.hash)) {
      out.kind = outcome::already_labelled;
      return out;
    }
    sft_sample s = sft_pattern_of(m);
    s.name = item.name;
    s.split = split_of(out.hash, options_.val_fraction);
    s.op = options_.op;
    s.k = options_.op == sparse_op::spmm ? options_.k : 1;
    if (item.spec) s.extra["family"] = item.family();
    if (item.spec) {
      s.generator = item.spec;
      if (m.nnz() > options_.max_nnz) store_by_generator(s, *item.spec, m);
    }
    const eval_task task{s.op, &m, s.k, "dataset:" + item.name};
    const std::string failure = tune_ ? tuned(task, s) : heuristic(task, m, s);
    if (!failure.empty()) {
      out.kind = outcome::unlabelled;
      out.warning = item.name + ": " + failure + "; left out";
      return out;
    }
    out.sample = std::move(s);
    return out;
  }

 private:
  std::string tuned(const eval_task& task, sft_sample& s) {
    const tune_result r = autotune(*evaluator_, task, 1);
    const tuned_candidate* best = r.best();
    if (!best) return "no expert candidate was correct";
    set_code(s, best->program);
    s.label = "autotune";
    for (const tuned_candidate& c : r.ranked)
      s.candidates.push_back(candidate_of(c.config.describe(), c.result));
    return "";
  }

  std::string heuristic(const eval_task& task, const csr_matrix& m, sft_sample& s) {
    const expert_config config = pick_heuristic(task.op, compute_features(m), task.k);
    const kernel_program program = emit_program(config);
    set_code(s, program);
    s.label = "heuristic";
    if (!evaluator_) return "";
    const verdict v = evaluator_->evaluate_program(task, program);
    if (!v.correct) return "the heuristic's " + config.describe() + " failed: " + v.failure;
    s.candidates.push_back(candidate_of(config.describe(), v));
    return "";
  }

  dataset_build_options options_;
  bool tune_ = false;
  std::optional<evaluator> evaluator_;
  std::string method_;
};

}  // namespace

csr_matrix matrix_item::load() const {
  if (matrix) return *matrix;
  if (spec && path.empty()) return generate_matrix(*spec);  // the generators are deterministic
  return read_matrix_market(path);
}

std::vector<matrix_item> matrix_files(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw error(dir + ": not a directory");
  std::vector<fs::path> paths;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file() && is_matrix_market(it->path())) paths.push_back(it->path());
  if (ec) throw error(dir + ": cannot list: " + ec.message());
  if (paths.empty()) throw error(dir + ": no .mtx or .mtx.gz files");
  std::sort(paths.begin(), paths.end());
  std::vector<matrix_item> items;
  for (const fs::path& p : paths)
    items.push_back({fs::relative(p, dir).generic_string(), p.string(), nullptr, std::nullopt});
  return items;
}

std::vector<matrix_item> generated_matrices(int64_t count, uint64_t seed, int32_t max_rows,
                                            std::vector<std::string> families, int32_t min_rows,
                                            int threads, const std::vector<int32_t>& block_sizes) {
  for (int32_t b : block_sizes)
    if (b < 1 || b > 64)
      throw error("--block-sizes " + std::to_string(b) + ": expected 1..64 (BSR's block shapes)");
  if (count < 0) throw error("--generate " + std::to_string(count) + ": expected >= 0");
  if (min_rows < 16) throw error("--min-rows " + std::to_string(min_rows) + ": expected >= 16");
  if (max_rows < min_rows)
    throw error("--max-rows " + std::to_string(max_rows) + ": expected >= --min-rows " +
                std::to_string(min_rows));
  if (families.empty()) families = classic_families();
  for (const std::string& f : families) find_family(f);  // one clear error for a typo
  if (threads <= 0) threads = hardware_threads();
  // Attempt a's spec depends only on (seed, a), so the matrices can be made in parallel, a round
  // of attempts at a time, and still come out the same on every machine, thread count and round
  // size. A round is a few matrices per thread: only its matrices are in memory at once.
  std::vector<matrix_item> items;
  std::set<uint64_t> seen;
  const int64_t max_attempts = 20 * count + 100;
  for (int64_t first = 0; static_cast<int64_t>(items.size()) < count && first < max_attempts;) {
    const int64_t round = std::min<int64_t>({count - static_cast<int64_t>(items.size()) + threads,
                                             4 * int64_t{threads}, max_attempts - first});
    std::vector<generator_spec> specs(static_cast<size_t>(round));
    struct made_matrix {
      uint64_t hash = 0;
      int32_t rows = 0, cols = 0;
    };
    std::vector<made_matrix> made(specs.size());
    for (int64_t i = 0; i < round; ++i) {
      const int64_t attempt = first + i;
      const std::string& family = families[static_cast<size_t>(attempt) % families.size()];
      draw d{std::mt19937_64(seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(attempt))};
      specs[static_cast<size_t>(i)] = random_spec(family, d, min_rows, max_rows, block_sizes);
    }
    parallel_for(specs.size(), threads, [&](size_t i) {
      const csr_matrix m = generate_matrix(specs[i]);
      made[i] = {matrix_structure_hash(m), m.rows, m.cols};
    });
    for (size_t i = 0; i < made.size() && static_cast<int64_t>(items.size()) < count; ++i) {
      // Small grids repeat (a stencil has no randomness): such a draw is skipped, up to a bound,
      // so the set has `count` distinct matrices whenever the families can give them.
      if (!seen.insert(made[i].hash).second) continue;
      char name[96];
      std::snprintf(name, sizeof name, "gen-%05zu-%s-%dx%d", items.size(), specs[i].family.c_str(),
                    made[i].rows, made[i].cols);
      items.push_back({name, "", nullptr, specs[i]});  // made again from the spec when labelled
    }
    first += round;
  }
  if (static_cast<int64_t>(items.size()) < count)
    throw error("--generate " + std::to_string(count) + ": only " + std::to_string(items.size()) +
                " distinct matrices with --max-rows " + std::to_string(max_rows));
  return items;
}

std::set<uint64_t> structure_hashes(const std::vector<sft_sample>& samples, int threads) {
  std::vector<uint64_t> hashes(samples.size());
  parallel_for(samples.size(), threads,
               [&](size_t i) { hashes[i] = matrix_structure_hash(to_matrix(samples[i])); });
  return {hashes.begin(), hashes.end()};
}

dataset_build_result build_sft_dataset(const std::vector<matrix_item>& items,
                                       program_runner* runner, const eval_options& eval,
                                       const dataset_build_options& options) {
  split_of(0, options.val_fraction);  // checks the fraction before any work
  labelling labeller(runner, eval, options);
  std::vector<outcome> outcomes(items.size());
  progress_bar bar("labelling", static_cast<int64_t>(items.size()), options.progress);
  parallel_for(items.size(), options.threads, [&](size_t i) {
    outcomes[i] = labeller.label(items[i]);
    bar.advance();
  });
  bar.finish();

  dataset_build_result result;
  result.method = labeller.method();
  std::map<uint64_t, std::vector<size_t>> kept_by_hash;  // hash -> indices of kept samples
  for (size_t i = 0; i < outcomes.size(); ++i) {
    outcome& o = outcomes[i];
    if (!o.warning.empty()) result.warnings.push_back(o.warning);
    if (o.kind == outcome::too_large) ++result.too_large;
    if (o.kind == outcome::unlabelled) ++result.unlabelled;
    if (o.kind == outcome::already_labelled) ++result.already_labelled;
    if (!o.sample) continue;
    std::vector<size_t>& same_hash = kept_by_hash[o.hash];
    const auto twin = std::find_if(same_hash.begin(), same_hash.end(), [&](size_t j) {
      return same_structure(to_matrix(result.samples[j]), to_matrix(*o.sample));
    });
    if (twin != same_hash.end()) {
      ++result.duplicates;
      result.warnings.push_back(items[i].name + ": same structure as " +
                                result.samples[*twin].name + "; left out");
      continue;
    }
    same_hash.push_back(result.samples.size());
    result.samples.push_back(std::move(*o.sample));
  }
  return result;
}

}  // namespace sparserl::train
