// Drives `sparserl plot RUN_DIR` through the real binary: PNGs of every metric, clear errors.
#include <cmath>

#include "cli/cli_testing.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;

using ::testing::HasSubstr;
using testing::run_result;

bool have_matplotlib() {
  return std::system("python3 -c 'import matplotlib' >/dev/null 2>&1") == 0 ||
         std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") == 0;
}

class PlotCli : public testing::cli_test {
 protected:
  void write_metrics(const std::string& dir, int steps) {
    fs::create_directories(path(dir));
    std::ofstream out(path(dir + "/metrics.jsonl"));
    out << "{\"step\": 0, \"time\": 1, \"val_loss\": 3.5}\n";
    for (int s = 1; s <= steps; ++s)
      out << "{\"step\": " << s << ", \"time\": " << 1 + s
          << ", \"loss\": " << 3 * std::exp(-s / 20.0) << ", \"reward/mean\": " << 0.01 * s
          << ", \"kind\": \"ppo\", \"kl\": null}\n";
    out << "{\"step\": " << steps + 1 << ", \"lo";  // a line being written: ignored
  }
};

TEST_F(PlotCli, DrawsEveryNumericMetricIntoPlots) {
  if (!have_matplotlib()) GTEST_SKIP() << "no python3 with matplotlib";
  write_metrics("run", 60);
  const run_result r = run("plot " + path("run"));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* name : {"loss.png", "val_loss.png", "reward_mean.png", "all_metrics.png"}) {
    const fs::path png = path("run/plots/") + name;
    EXPECT_TRUE(fs::exists(png)) << png;
    EXPECT_THAT(r.out, HasSubstr(png.string()));
    EXPECT_EQ(testing::slurp(png).substr(1, 3), "PNG");
  }
  EXPECT_FALSE(fs::exists(path("run/plots/kind.png")));  // strings are not curves
  EXPECT_FALSE(fs::exists(path("run/plots/kl.png")));
  ASSERT_EQ(run("plot " + path("run") + " -o " + path("elsewhere")).code, 0);
  EXPECT_TRUE(fs::exists(path("elsewhere/loss.png")));
}

TEST_F(PlotCli, BadRunsAreOneLineErrors) {
  expect_one_line_error("plot " + path("missing"), "missing: not a directory");
  fs::create_directories(path("empty"));
  expect_one_line_error("plot " + path("empty"), "metrics.jsonl: not found");
  fs::create_directories(path("bad"));
  std::ofstream(path("bad/metrics.jsonl")) << "{\"step\": 1}\n{\"loss\": 1}\n";
  expect_one_line_error("plot " + path("bad"), "metrics.jsonl:2: expected an integer \"step\"");
}

}  // namespace
}  // namespace sparserl
