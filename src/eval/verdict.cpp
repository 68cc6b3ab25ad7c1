#include "eval/verdict.h"

#include <nlohmann/json.hpp>

namespace sparserl {

namespace {

template <typename T>
nlohmann::json optional_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json verdict_to_json(const verdict& v) {
  return {
      {"extracted", v.extracted},
      {"compiled", v.compiled},
      {"ran", v.ran},
      {"correct", v.correct},
      {"failure", v.failure},
      {"compile_log", v.compile_log},
      {"executor", v.executor},
      {"trials", v.trials},
      {"checked_timed_runs", v.checked_timed_runs},
      {"max_error_ratio", v.max_error_ratio},
      {"compile_ms", v.compile_ms},
      {"prepare_ms", v.prepare_ms},
      {"run_ms", v.run_ms},
      {"check_ms", v.check_ms},
      {"kernel_ms", optional_json(v.kernel_ms)},
      {"baseline_ms", optional_json(v.baseline_ms)},
      {"baseline", v.baseline_name},
      {"baseline_algorithm", v.baseline_algorithm},
      {"baseline_skipped", v.baseline_skipped},
      {"timing_method", v.timing_method},
      {"speedup", optional_json(v.speedup)},
      {"bytes_moved", v.bytes_moved},
      {"achieved_gbps", optional_json(v.achieved_gbps)},
      {"footprint_bytes", v.footprint_bytes},
      {"reward", v.reward},
      {"speed_modelled", v.speed_modelled},
  };
}

}  // namespace sparserl
