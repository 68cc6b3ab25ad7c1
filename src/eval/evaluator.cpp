#include "eval/evaluator.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <random>

#include "eval/source_screen.h"
#include "kernel/completion.h"
#include "sparse/content_hash.h"
#include "sparse/error.h"

namespace sparserl {

namespace {

std::string params_key(const kernel_program& p) {
  std::string key = format_name(p.format);
  for (const auto& [name, value] : p.format_params) key += " " + name + "=" + std::to_string(value);
  return key;
}

// Names what a task's inputs, references, uploads and baseline depend on: the matrix's content
// (SHA-256 of its CSR arrays), the op and k, never the caller's id, so an id reused for another
// matrix cannot reach this one's cached reference. Hashing reads the matrix once per evaluation
// (about 0.1 s for 16M nonzeros), small beside compiling and running the program.
std::string task_key(const eval_task& t) {
  return csr_content_id(*t.matrix) + "|" + op_name(t.op) +
         "|k=" + std::to_string(t.op == sparse_op::spmm ? t.k : 1);
}

int64_t input_length(const eval_task& t) {
  return static_cast<int64_t>(t.matrix->cols) * (t.op == sparse_op::spmm ? t.k : 1);
}

int64_t output_length(const eval_task& t) {
  return static_cast<int64_t>(t.matrix->rows) * (t.op == sparse_op::spmm ? t.k : 1);
}

// Fresh inputs per trial, uniform in [-1, 1], seeded by (seed, task key, trial) so runs repeat.
std::vector<std::vector<float>> make_inputs(const eval_task& t, const std::string& key,
                                            uint64_t seed, int trials) {
  std::vector<std::vector<float>> inputs(static_cast<size_t>(trials));
  for (int i = 0; i < trials; ++i) {
    std::mt19937_64 rng(seed ^ std::hash<std::string>{}(key) ^ (0x9e3779b97f4a7c15ull * (i + 1)));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    inputs[i].resize(static_cast<size_t>(input_length(t)));
    for (float& v : inputs[i]) v = dist(rng);
  }
  return inputs;
}

// The LAUNCH line of `entry`: its named line, else the single unnamed one.
const launch_spec& launch_for(const kernel_program& p, const std::string& entry) {
  for (const launch_spec& spec : p.launches)
    if (spec.entry == entry) return spec;
  if (p.launches.size() == 1 && p.launches[0].entry.empty()) return p.launches[0];
  throw error("no LAUNCH line for entry point " + entry);
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

int64_t csr_footprint(const csr_matrix& a) {
  return static_cast<int64_t>(a.row_ptr.size() + a.col_idx.size() + a.values.size()) * 4;
}

}  // namespace

evaluator::evaluator(program_runner& runner, eval_options options)
    : runner_(runner), options_(std::move(options)) {}

verdict evaluator::evaluate(const eval_task& task, const std::string& completion) {
  parse_result parsed = parse_completion(completion, task.op);
  if (!parsed.program) {
    verdict v;
    v.executor = runner_.name();
    v.failure = "no program: " + parsed.error;
    finish(task, v);
    return v;
  }
  return evaluate_program(task, *parsed.program);
}

verdict evaluator::evaluate_program(const eval_task& task, const kernel_program& program) {
  verdict v;
  v.executor = runner_.name();
  v.extracted = true;
  const screen_result screened = screen_device_source(program.source);
  if (!screened.ok) {
    v.failure = "rejected: " + screened.reason;
    finish(task, v);
    return v;
  }
  const std::string device_source = parameter_defines(program) + program.source;
  const auto t0 = std::chrono::steady_clock::now();
  const std::shared_ptr<const compile_result> compiled =
      compiled_.compile(device_source, options_.compile);
  v.compile_ms = elapsed_ms(t0);
  v.compile_log = compiled->log;
  if (!compiled->ok) {
    v.failure = compiled->error;
    finish(task, v);
    return v;
  }
  run_and_verify(task, task_key(task), program, *compiled, device_source, v);
  finish(task, v);
  return v;
}

std::shared_ptr<const format_arguments> evaluator::arguments_for(const eval_task& task,
                                                                 const std::string& key,
                                                                 const kernel_program& program,
                                                                 std::string& data_id) {
  data_id = key + "|" + params_key(program);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = arguments_.find(data_id);
    if (it != arguments_.end()) return it->second;
  }
  auto args = std::make_shared<const format_arguments>(
      build_arguments(task.op, *task.matrix, program, task.k));
  std::lock_guard<std::mutex> lock(mutex_);
  if (arguments_.size() >= 64) arguments_.clear();  // bounded: a trainer cycles through tasks
  return arguments_.emplace(data_id, args).first->second;
}

void evaluator::run_and_verify(const eval_task& task, const std::string& key,
                               const kernel_program& program, const compile_result& compiled,
                               const std::string& device_source, verdict& v) {
  std::string data_id;
  std::shared_ptr<const format_arguments> args;
  auto t0 = std::chrono::steady_clock::now();
  try {
    args = arguments_for(task, key, program, data_id);
  } catch (const error& e) {
    v.failure = std::string("format: ") + e.what();
    return;
  }
  v.prepare_ms = elapsed_ms(t0);
  v.compiled = true;
  v.footprint_bytes = args->footprint_bytes;

  run_request request;
  request.op = task.op;
  request.rows = task.matrix->rows;
  request.cols = task.matrix->cols;
  request.k = task.op == sparse_op::spmm ? task.k : 1;
  request.program = &program;
  request.args = args.get();
  request.data_id = data_id;
  request.cubin = &compiled.cubin;
  request.device_source = device_source;
  std::memcpy(&request.poison, &output_poison_bits, sizeof(float));
  request.measure_time = options_.measure_time;
  // Timed inputs differ per evaluation too: nothing a program could carry from an earlier
  // evaluation of the same task would match.
  request.timed_input_seed =
      options_.seed ^ std::hash<std::string>{}(key) ^ (0x9e3779b97f4a7c15ull * ++evaluations_);
  request.checked_timed_runs = std::max(2, options_.checked_timed_runs);
  try {
    for (const entry_point& entry : entry_points(task.op, program.format)) {
      const launch_spec& spec = launch_for(program, entry.name);
      request.geometry.push_back(compute_geometry(spec, entry, *args, request.k, options_.launch));
      request.entries.push_back(entry.name);
    }
  } catch (const error& e) {
    v.failure = std::string("launch: ") + e.what();
    return;
  }
  const std::shared_ptr<const trial_set> trials = trials_for(task, key);
  request.inputs = trials->inputs;

  t0 = std::chrono::steady_clock::now();
  const run_result result = runner_.run(request, options_.limits);
  v.run_ms = elapsed_ms(t0);
  t0 = std::chrono::steady_clock::now();
  struct check_timer {  // every return below counts the checks' time, the baseline's not
    verdict& v;
    std::chrono::steady_clock::time_point t0;
    bool stopped = false;
    void stop() {
      if (!stopped) v.check_ms = elapsed_ms(t0);
      stopped = true;
    }
    ~check_timer() { stop(); }
  } check_time{v, t0};
  if (!result.ok) {
    v.failure = "runtime: " + result.failure;
    return;
  }
  v.ran = true;
  if (result.trials.size() != request.inputs.size()) {
    v.failure = "runtime: runner returned " + std::to_string(result.trials.size()) + " of " +
                std::to_string(request.inputs.size()) + " trials";
    return;
  }
  for (size_t i = 0; i < result.trials.size(); ++i) {
    const trial_result& trial = result.trials[i];
    const std::string which = "trial " + std::to_string(i + 1) + ": ";
    if (!trial.input_unchanged) {
      v.failure =
          which + "the program modified its input " + (task.op == sparse_op::spmv ? "x" : "B");
      return;
    }
    if (!trial.format_unchanged) {
      v.failure = which + "the program modified the matrix arrays";
      return;
    }
    const check_result check = check_output(trials->references[i], trial.output);
    v.max_error_ratio = std::max(v.max_error_ratio, check.max_error_ratio);
    ++v.trials;
    if (!check.ok) {
      v.failure = which + "wrong result: " + check.describe(task.op, task.k);
      return;
    }
  }
  if (result.kernel_ms) {
    if (std::string why = verify_timed_runs(task, result, v); !why.empty()) {
      v.failure = std::move(why);
      return;
    }
  }
  v.correct = true;
  check_time.stop();
  if (!result.kernel_ms) return;
  v.kernel_ms = result.kernel_ms;
  v.timing_method = result.timing_method;
  const int64_t io_bytes = (input_length(task) + output_length(task)) * 4;
  v.bytes_moved = v.footprint_bytes + io_bytes;
  if (*v.kernel_ms > 0) v.achieved_gbps = v.bytes_moved / (*v.kernel_ms * 1e6);
  const std::optional<baseline_result> base = baseline_for(task, key);
  if (base && base->ok && *v.kernel_ms > 0) {
    v.baseline_ms = base->ms;
    v.baseline_name = base->name;
    v.baseline_algorithm = base->algorithm;
    v.baseline_skipped = base->skipped;
    v.speedup = base->ms / *v.kernel_ms;
  }
}

std::string evaluator::verify_timed_runs(const eval_task& task, const run_result& result,
                                         verdict& v) const {
  if (result.checked_runs.size() < 2)
    return "runtime: the runner returned " + std::to_string(result.checked_runs.size()) +
           " timed runs to verify, at least 2 are needed";
  const int32_t k = task.op == sparse_op::spmm ? task.k : 1;
  for (const timed_run_check& c : result.checked_runs) {
    const std::string which = "timed run " + std::to_string(c.run) + ": ";
    if (static_cast<int64_t>(c.input.size()) != input_length(task) ||
        static_cast<int64_t>(c.output.size()) != output_length(task))
      return "runtime: " + which + "the runner returned arrays of the wrong length";
    if (!c.input_unchanged)
      return which + "the program modified its input " + (task.op == sparse_op::spmv ? "x" : "B");
    const reference_output ref =
        compute_reference(task.op, *task.matrix, c.input, k, options_.eps_factor);
    const check_result check = check_output(ref, c.output);
    v.max_error_ratio = std::max(v.max_error_ratio, check.max_error_ratio);
    ++v.checked_timed_runs;
    if (!check.ok) return which + "wrong result: " + check.describe(task.op, task.k);
  }
  return "";
}

std::shared_ptr<const evaluator::trial_set> evaluator::trials_for(const eval_task& task,
                                                                  const std::string& key) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = trial_sets_.find(key);
    if (it != trial_sets_.end()) return it->second;
  }
  auto set = std::make_shared<trial_set>();
  set->inputs = make_inputs(task, key, options_.seed, options_.trials);
  for (const std::vector<float>& input : set->inputs)
    set->references.push_back(
        compute_reference(task.op, *task.matrix, input, task.k, options_.eps_factor));
  std::lock_guard<std::mutex> lock(mutex_);
  if (trial_sets_.size() >= 16) trial_sets_.clear();  // bounded, like the argument cache
  return trial_sets_.emplace(key, std::move(set)).first->second;
}

std::optional<baseline_result> evaluator::baseline_for(const eval_task& task,
                                                       const std::string& key) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = baselines_.find(key);
    if (it != baselines_.end()) return it->second;
  }
  baseline_request request;
  request.op = task.op;
  request.matrix = task.matrix;
  request.k = task.k;
  request.data_id = key;
  std::optional<baseline_result> result = runner_.baseline(request);
  std::lock_guard<std::mutex> lock(mutex_);
  baselines_[key] = result;
  return result;
}

void evaluator::finish(const eval_task& task, verdict& v) const {
  v.reward = compute_reward(v, csr_footprint(*task.matrix), options_.reward);
}

}  // namespace sparserl
