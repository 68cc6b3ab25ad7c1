// The Prometheus text: counters by label, cumulative histogram buckets, verdict outcomes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "serve/service_metrics.h"

namespace sparserl {
namespace {

using ::testing::HasSubstr;

TEST(service_metrics, outcomes_follow_the_reward_tiers) {
  verdict v;
  EXPECT_STREQ(verdict_outcome(v), "no_program");
  v.extracted = true;
  v.failure = "rejected: host code";
  EXPECT_STREQ(verdict_outcome(v), "rejected");
  v.failure = "NVRTC error";
  EXPECT_STREQ(verdict_outcome(v), "compile_error");
  v.compiled = true;
  EXPECT_STREQ(verdict_outcome(v), "runtime_failure");
  v.ran = true;
  EXPECT_STREQ(verdict_outcome(v), "wrong_result");
  v.correct = true;
  EXPECT_STREQ(verdict_outcome(v), "correct");
}

TEST(service_metrics, render_counts_requests_and_programs) {
  service_metrics m;
  m.record_request("/v1/evaluate", 200, 0.02);
  m.record_request("/v1/evaluate", 200, 3.0);
  m.record_request("/v1/evaluate", 429, 0.001);
  m.record_request("/etc/passwd", 404, std::nullopt);
  verdict good;
  good.extracted = good.compiled = good.ran = good.correct = true;
  m.record_program(good, 0.5);
  m.record_program(verdict{}, 1.5);
  service_gauges g;
  g.queue_depth = 3;
  g.queue_capacity = 8;
  const std::string text = m.render(g);
  EXPECT_THAT(text,
              HasSubstr("sparserl_http_requests_total{path=\"/v1/evaluate\",status=\"200\"} 2"));
  EXPECT_THAT(text,
              HasSubstr("sparserl_http_requests_total{path=\"/v1/evaluate\",status=\"429\"} 1"));
  EXPECT_THAT(text, HasSubstr("sparserl_http_requests_total{path=\"other\",status=\"404\"} 1"));
  // Cumulative buckets: 0.001 and 0.02 are under 0.025, 3.0 only under 5 and above.
  EXPECT_THAT(text, HasSubstr("sparserl_http_request_duration_seconds_bucket{path=\"/v1/evaluate\","
                              "le=\"0.025\"} 2"));
  EXPECT_THAT(text, HasSubstr("sparserl_http_request_duration_seconds_bucket{path=\"/v1/evaluate\","
                              "le=\"2.5\"} 2"));
  EXPECT_THAT(text, HasSubstr("sparserl_http_request_duration_seconds_bucket{path=\"/v1/evaluate\","
                              "le=\"5\"} 3"));
  EXPECT_THAT(text,
              HasSubstr("sparserl_http_request_duration_seconds_count{path=\"/v1/evaluate\"} 3"));
  EXPECT_THAT(text, HasSubstr("sparserl_programs_evaluated_total 2"));
  EXPECT_THAT(text, HasSubstr("sparserl_verdicts_total{outcome=\"correct\"} 1"));
  EXPECT_THAT(text, HasSubstr("sparserl_verdicts_total{outcome=\"no_program\"} 1"));
  EXPECT_THAT(text, HasSubstr("sparserl_verdicts_total{outcome=\"compile_error\"} 0"));
  EXPECT_THAT(text, HasSubstr("sparserl_program_duration_seconds_sum 2\n"));
  EXPECT_THAT(text, HasSubstr("sparserl_queue_depth 3\n"));
  EXPECT_THAT(text, HasSubstr("sparserl_queue_capacity 8\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE sparserl_program_duration_seconds histogram\n"));
  EXPECT_DOUBLE_EQ(m.mean_program_seconds(), 1.0);
}

}  // namespace
}  // namespace sparserl
