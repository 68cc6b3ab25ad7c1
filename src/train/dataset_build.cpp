#include "train/dataset_build.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "eval/autotune.h"
#include "kernel/expert_library.h"
#include "kernel/heuristic.h"
#include "sparse/error.h"
#include "sparse/features.h"
#include "sparse/matrix_market.h"
#include "train/data_split.h"
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

generator_spec random_spec(const std::string& family, draw& d, int32_t max_rows) {
  generator_spec s;
  s.family = family;
  s.rows = static_cast<int32_t>(d.in(16, std::max<int32_t>(16, max_rows)));
  s.seed = d.rng();
  find_family(family).vary(s, [&d](int64_t lo, int64_t hi) { return d.in(lo, hi); });
  s.avg_degree = d.real(2, 16);
  s.density = std::min(1.0, d.real(2, 16) / s.rows);
  s.dense_rows = static_cast<int32_t>(d.in(1, 4));
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
    if (m.nnz() > options_.max_nnz) {
      out.kind = outcome::too_large;
      out.warning = item.name + ": " + std::to_string(m.nnz()) + " nonzeros, more than --max-nnz " +
                    std::to_string(options_.max_nnz) + "; left out";
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
    if (!item.family.empty()) s.extra["family"] = item.family;
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
    items.push_back({fs::relative(p, dir).generic_string(), p.string(), nullptr, ""});
  return items;
}

std::vector<matrix_item> generated_matrices(int64_t count, uint64_t seed, int32_t max_rows,
                                            std::vector<std::string> families) {
  if (count < 0) throw error("--generate " + std::to_string(count) + ": expected >= 0");
  if (max_rows < 16) throw error("--max-rows " + std::to_string(max_rows) + ": expected >= 16");
  if (families.empty()) families = classic_families();
  for (const std::string& f : families) find_family(f);  // one clear error for a typo
  std::vector<matrix_item> items;
  std::set<uint64_t> seen;
  // Small grids repeat (a stencil has no randomness): draw again, up to a bound, so the set has
  // `count` distinct matrices whenever the families can give them.
  for (int64_t attempt = 0;
       static_cast<int64_t>(items.size()) < count && attempt < 20 * count + 100; ++attempt) {
    const std::string& family = families[static_cast<size_t>(attempt) % families.size()];
    draw d{std::mt19937_64(seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(attempt))};
    const generator_spec spec = random_spec(family, d, max_rows);
    auto m = std::make_shared<csr_matrix>(generate_matrix(spec));
    if (!seen.insert(matrix_structure_hash(*m)).second) continue;
    char name[96];
    std::snprintf(name, sizeof name, "gen-%05zu-%s-%dx%d", items.size(), family.c_str(), m->rows,
                  m->cols);
    items.push_back({name, "", std::move(m), family});
  }
  if (static_cast<int64_t>(items.size()) < count)
    throw error("--generate " + std::to_string(count) + ": only " + std::to_string(items.size()) +
                " distinct matrices with --max-rows " + std::to_string(max_rows));
  return items;
}

dataset_build_result build_sft_dataset(const std::vector<matrix_item>& items,
                                       program_runner* runner, const eval_options& eval,
                                       const dataset_build_options& options) {
  split_of(0, options.val_fraction);  // checks the fraction before any work
  labelling labeller(runner, eval, options);
  std::vector<outcome> outcomes(items.size());
  progress_bar bar("labelling", static_cast<int64_t>(items.size()), options.progress);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto work = [&] {
    for (size_t i = next++; i < items.size() && !failed; i = next++) {
      try {
        outcomes[i] = labeller.label(items[i]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        failed = true;
      }
      bar.advance();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(1, options.threads); ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (first_error) std::rethrow_exception(first_error);
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
