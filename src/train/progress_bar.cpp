#include "train/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace sparserl::train {

namespace {

constexpr int bar_width = 24;

std::string format_rate(double rate, const std::string& unit) {
  char buf[48];
  if (rate >= 100)
    std::snprintf(buf, sizeof buf, "%.0f %s/s", rate, unit.c_str());
  else if (rate >= 1 || rate == 0)
    std::snprintf(buf, sizeof buf, "%.2f %s/s", rate, unit.c_str());
  else  // slow loops (a PPO step per minute) read better as seconds per item
    std::snprintf(buf, sizeof buf, "%.1f s/%s", 1 / rate, unit.c_str());
  return buf;
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const int64_t s = static_cast<int64_t>(std::llround(seconds));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  return buf;
}

progress_bar::progress_bar(std::string label, int64_t total, bool enabled, progress_options options)
    : label_(std::move(label)),
      total_(std::max<int64_t>(0, total)),
      enabled_(enabled),
      options_(std::move(options)) {
  if (!options_.out) enabled_ = false;
  terminal_ = options_.terminal ? *options_.terminal
                                : (options_.out && ::isatty(::fileno(options_.out)) == 1);
  base_time_ = now();
}

progress_bar::~progress_bar() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (line_open_) std::fputc('\n', options_.out);
}

double progress_bar::now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void progress_bar::update(int64_t done, const std::string& note) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!started_) {
    started_ = true;
    base_done_ = done;
    base_time_ = now();
  }
  done_ = done;
  if (!note.empty()) note_ = note;
  maybe_draw(false);
}

void progress_bar::advance(int64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  started_ = true;
  done_ += n;
  maybe_draw(false);
}

void progress_bar::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  maybe_draw(true);
  if (line_open_) std::fputc('\n', options_.out);
  line_open_ = false;
  std::fflush(options_.out);
}

std::string progress_bar::render(double now) const {
  const double elapsed = std::max(0.0, now - base_time_);
  const double rate = elapsed > 0 ? static_cast<double>(done_ - base_done_) / elapsed : 0;
  std::string line = label_ + "  " + std::to_string(done_);
  if (total_ > 0) {
    const double fraction = std::clamp(static_cast<double>(done_) / total_, 0.0, 1.0);
    const int filled = static_cast<int>(fraction * bar_width);
    char pct[16];
    std::snprintf(pct, sizeof pct, "%3d%%", static_cast<int>(fraction * 100));
    line += "/" + std::to_string(total_) + "  " + pct + " [" + std::string(filled, '#') +
            std::string(bar_width - filled, '.') + "]";
  }
  line += "  " + format_rate(rate, options_.unit);
  if (finished_)
    line += "  in " + format_duration(elapsed);
  else if (total_ > 0 && rate > 0)
    line += "  ETA " +
            format_duration(static_cast<double>(std::max<int64_t>(0, total_ - done_)) / rate);
  if (!note_.empty()) line += "  " + note_;
  return line;
}

void progress_bar::maybe_draw(bool force) {
  if (!enabled_ || (finished_ && !force)) return;
  const double t = now();
  const double interval = terminal_ ? options_.redraw_interval_s : options_.line_interval_s;
  if (!force && t - last_draw_ < interval) return;
  last_draw_ = t;
  const std::string line = render(t);
  if (terminal_) {
    std::fprintf(options_.out, "\r%s\x1b[K", line.c_str());  // clear what a longer line left
    line_open_ = true;
  } else {
    std::fprintf(options_.out, "%s\n", line.c_str());
  }
  std::fflush(options_.out);
}

}  // namespace sparserl::train
