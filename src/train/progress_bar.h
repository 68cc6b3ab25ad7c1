#pragma once
// A progress bar on stderr for long loops: "label  37/100  37% [#######.............]  12.3 it/s
// ETA 0:05  <note>". On a terminal it redraws one line in place, at most ~10 times a second; when
// stderr is not a terminal (CI logs, files) it prints a plain line at most every 5 s, and always
// a last one at finish(). Rate and ETA count only this process's work: the first update() marks
// where it starts (a resumed run's step), so a resumed loop does not claim the earlier steps.
// Thread-safe.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace sparserl::train {

struct progress_options {
  std::FILE* out = stderr;
  std::optional<bool> terminal;    // default: isatty(out)
  std::string unit = "it";         // rate unit: "12.3 it/s"
  double redraw_interval_s = 0.1;  // on a terminal
  double line_interval_s = 5.0;    // otherwise
  std::function<double()> clock;   // seconds, monotonic; default steady_clock (tests inject)
};

class progress_bar {
 public:
  // total 0: unknown (no percentage, bar or ETA). Disabled bars print nothing.
  progress_bar(std::string label, int64_t total, bool enabled = true,
               progress_options options = {});
  ~progress_bar();  // ends a half-drawn terminal line (an exception unwinding), prints nothing else
  progress_bar(const progress_bar&) = delete;
  progress_bar& operator=(const progress_bar&) = delete;

  // Sets the count done so far; `note` (e.g. "loss 1.23") is shown after the ETA until replaced.
  void update(int64_t done, const std::string& note = "");
  void advance(int64_t n = 1);  // done += n, note kept
  // Draws the final state (count, mean rate, elapsed time) and ends the line. Idempotent.
  void finish();

  // The text of one line for the given state, no terminal control codes (exposed for tests).
  std::string render(double now) const;

 private:
  void maybe_draw(bool force);
  double now() const;

  std::string label_;
  int64_t total_;
  bool enabled_;
  progress_options options_;
  bool terminal_ = false;
  mutable std::mutex mutex_;
  int64_t done_ = 0;
  std::string note_;
  bool started_ = false;  // the first update() rebases the rate
  int64_t base_done_ = 0;
  double base_time_ = 0;
  double last_draw_ = -1e300;
  bool line_open_ = false;  // a terminal line drawn without its newline yet
  bool finished_ = false;
};

// "0:05", "12:34", "1:02:03".
std::string format_duration(double seconds);

}  // namespace sparserl::train
