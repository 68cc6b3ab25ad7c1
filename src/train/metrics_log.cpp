#include "train/metrics_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "sparse/error.h"
#include "sparse/gzip_file.h"
#include "train/jsonl_file.h"

namespace sparserl::train {

namespace {

using nlohmann::json;

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

metrics_record record_from_json(const json& j) {
  metrics_record r;
  const auto step = j.find("step");
  if (step == j.end() || !step->is_number_integer()) throw error("expected an integer \"step\"");
  r.step = step->get<int64_t>();
  const auto time = j.find("time");
  if (time != j.end() && !time->is_null()) {
    if (!time->is_number()) throw error("\"time\" is not a number");
    r.time = time->get<double>();
  }
  for (const auto& [key, value] : j.items())
    if (key != "step" && key != "time") r.values[key] = value;
  return r;
}

json checked_scalars(const json& scalars) {
  if (!scalars.is_object())
    throw error(std::string("metrics: expected an object of scalars, got ") + scalars.type_name());
  json out = json::object();
  for (const auto& [key, value] : scalars.items()) {
    if (key == "step" || key == "time") throw error("metrics: \"" + key + "\" is a reserved name");
    if (value.is_structured()) throw error("metrics: \"" + key + "\" is not a scalar");
    const bool nonfinite = value.is_number_float() && !std::isfinite(value.get<double>());
    out[key] = nonfinite ? json(nullptr) : value;
  }
  return out;
}

}  // namespace

std::vector<metrics_record> read_metrics(const std::string& path) {
  std::vector<metrics_record> records;
  jsonl_read_options options;
  options.skip_unterminated_last_line = true;
  read_jsonl(
      path, [&](const json& j, int64_t) { records.push_back(record_from_json(j)); }, options);
  return records;
}

void truncate_metrics(const std::string& path, int64_t last_step) {
  if (!std::filesystem::exists(path)) return;
  const std::string text = read_file_decompressed(path, size_t{1} << 34);
  std::vector<std::string_view> lines;  // the raw lines, so kept ones stay byte for byte
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    lines.push_back(std::string_view(text).substr(pos, end - pos));
    pos = end + 1;
  }
  std::string kept;
  jsonl_read_options options;
  options.skip_unterminated_last_line = true;
  parse_jsonl(
      text, path,
      [&](const json& j, int64_t line) {
        if (record_from_json(j).step <= last_step)
          kept.append(lines[static_cast<size_t>(line - 1)]).push_back('\n');
      },
      options);
  if (kept == text) return;  // nothing to drop: leave the file alone
  write_file_atomic(path, {kept});
}

metrics_log::metrics_log(std::string path, int64_t resume_step) : path_(std::move(path)) {
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) throw error(path_ + ": cannot create its directory: " + ec.message());
  if (resume_step > 0)
    truncate_metrics(path_, resume_step);
  else
    write_file_atomic(path_, {});  // a fresh run starts a fresh log
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) throw error(path_ + ": cannot open for appending: " + std::strerror(errno));
}

metrics_log::~metrics_log() {
  if (fd_ >= 0) ::close(fd_);
}

void metrics_log::append(int64_t step, const json& scalars) {
  json line = {{"step", step}, {"time", unix_now()}};
  line.update(checked_scalars(scalars));
  const std::string text = jsonl_line(line);
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw error(path_ + ": cannot append metrics: " + std::strerror(errno));
    written += static_cast<size_t>(n);
  }
}

}  // namespace sparserl::train
