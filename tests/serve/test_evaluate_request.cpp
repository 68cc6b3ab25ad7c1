// Parsing POST /v1/evaluate bodies: the SFT layout, defaults, and one clear error per mistake.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "serve/evaluate_request.h"
#include "sparse/error.h"
#include "sparse/pattern_values.h"

namespace sparserl {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json good_body() {
  return {{"id", "r1"},
          {"matrix", {{"rows", {0, 1, 2, 2}}, {"cols", {0, 1, 0, 2}}, {"shape", {3, 3}}}},
          {"programs", {"FORMAT: CSR"}}};
}

std::string message_for(const json& body, request_limits limits = {}) {
  try {
    parse_evaluate_request(body.dump(), limits);
  } catch (const error& e) {
    return e.what();
  }
  return "no error";
}

TEST(evaluate_request, sft_layout_with_defaults) {
  const evaluate_request r = parse_evaluate_request(good_body().dump(), {});
  EXPECT_EQ(r.id, "r1");
  EXPECT_EQ(r.op, sparse_op::spmv);
  EXPECT_EQ(r.k, 1);
  EXPECT_TRUE(r.matrix_name.empty());
  EXPECT_EQ(r.matrix.rows, 3);
  EXPECT_EQ(r.matrix.cols, 3);
  EXPECT_EQ(r.matrix.row_idx, (std::vector<int32_t>{0, 1, 2, 2}));
  EXPECT_FALSE(r.matrix.values.has_value());
  ASSERT_EQ(r.programs.size(), 1u);
}

TEST(evaluate_request, spmm_k_defaults_to_64_and_is_bounded) {
  json body = good_body();
  body["op"] = "SpMM";
  EXPECT_EQ(parse_evaluate_request(body.dump(), {}).k, 64);
  body["k"] = 8;
  EXPECT_EQ(parse_evaluate_request(body.dump(), {}).k, 8);
  body["k"] = 0;
  EXPECT_THAT(message_for(body), HasSubstr("k: 0 is outside [1, 4096]"));
  body["k"] = 9000;
  EXPECT_THAT(message_for(body), HasSubstr("k: 9000 is outside"));
}

TEST(evaluate_request, a_pattern_matrix_gets_the_pattern_rule_and_valued_duplicates_add_up) {
  inline_matrix m;
  m.rows = 2;
  m.cols = 2;
  m.row_idx = {1, 0, 1};
  m.col_idx = {1, 0, 1};
  const csr_matrix pattern = build_csr(m);
  // The rule training and pattern .mtx files use (not all ones); (1,1) given twice counts once.
  EXPECT_EQ(pattern.values, (std::vector<float>{pattern_value(0, 0), pattern_value(1, 1)}));
  EXPECT_NE(pattern.values[0], pattern.values[1]);
  m.values = std::vector<float>{0.5f, -3.0f, 0.25f};
  const csr_matrix valued = build_csr(m);
  EXPECT_EQ(valued.values, (std::vector<float>{-3.0f, 0.75f}));
  EXPECT_EQ(valued.row_ptr, (std::vector<int32_t>{0, 1, 2}));
}

TEST(evaluate_request, values_when_given_must_match_the_entries) {
  json body = good_body();
  body["matrix"]["values"] = {1.5, 2, -1, 0.25};
  const evaluate_request r = parse_evaluate_request(body.dump(), {});
  ASSERT_TRUE(r.matrix.values.has_value());
  EXPECT_EQ(*r.matrix.values, (std::vector<float>{1.5f, 2.0f, -1.0f, 0.25f}));
  body["matrix"]["values"] = {1, 2};
  EXPECT_THAT(message_for(body), HasSubstr("matrix.values: 2 values for 4 entries"));
  body["matrix"]["values"] = {1, 2, "x", 4};
  EXPECT_THAT(message_for(body), HasSubstr("matrix.values[2]: expected a number"));
  body["matrix"]["values"] = {1, 2, 1e300, 4};
  EXPECT_THAT(message_for(body), HasSubstr("matrix.values[2]: 1e+300 is not a finite float"));
}

TEST(evaluate_request, content_key_follows_the_content) {
  const evaluate_request a = parse_evaluate_request(good_body().dump(), {});
  json other = good_body();
  other["id"] = "another id, same matrix";
  EXPECT_EQ(content_key(a.matrix), content_key(parse_evaluate_request(other.dump(), {}).matrix));
  other["matrix"]["cols"][3] = 1;
  EXPECT_NE(content_key(a.matrix), content_key(parse_evaluate_request(other.dump(), {}).matrix));
  other = good_body();
  other["matrix"]["values"] = {1, 1, 1, 1};  // same numbers, but given: a different key
  EXPECT_NE(content_key(a.matrix), content_key(parse_evaluate_request(other.dump(), {}).matrix));
  EXPECT_EQ(content_key(a.matrix).rfind("sha256:", 0), 0u);
}

TEST(evaluate_request, a_registered_name) {
  json body = good_body();
  body["matrix"] = {{"name", "cant"}};
  EXPECT_EQ(parse_evaluate_request(body.dump(), {}).matrix_name, "cant");
  body["matrix"] = {{"name", "cant"}, {"rows", {0}}};
  EXPECT_THAT(message_for(body), HasSubstr("unknown field \"rows\""));
  body["matrix"] = {{"name", ""}};
  EXPECT_THAT(message_for(body), HasSubstr("matrix.name: expected a non-empty string"));
}

TEST(evaluate_request, malformed_bodies_get_one_clear_message) {
  EXPECT_THAT(message_for(json::array()), HasSubstr("expected a JSON object"));
  json body = good_body();
  body["matrix"]["cols"][1] = 3;
  EXPECT_THAT(message_for(body), HasSubstr("matrix.cols[1]: 3 is outside [0, 3) (shape[1] = 3)"));
  body = good_body();
  body["matrix"]["rows"][0] = -1;
  EXPECT_THAT(message_for(body), HasSubstr("matrix.rows[0]: -1 is outside [0, 3)"));
  body = good_body();
  body["matrix"]["rows"][0] = 1.5;
  EXPECT_THAT(message_for(body), HasSubstr("matrix.rows[0]: expected an integer index"));
  body = good_body();
  body["matrix"]["cols"] = {0, 1};
  EXPECT_THAT(message_for(body), HasSubstr("rows has 4 entries but cols has 2"));
  body = good_body();
  body["matrix"]["shape"] = {3};
  EXPECT_THAT(message_for(body), HasSubstr("matrix.shape: expected [rows, cols]"));
  body = good_body();
  body["matrix"]["shape"] = {0, 3};
  EXPECT_THAT(message_for(body), HasSubstr("matrix.shape[0]: 0 is outside"));
  body = good_body();
  body["matrix"].erase("shape");
  EXPECT_THAT(message_for(body), HasSubstr("missing \"matrix.shape\""));
  body = good_body();
  body.erase("matrix");
  EXPECT_THAT(message_for(body), HasSubstr("missing \"matrix\""));
  body = good_body();
  body["programs"] = json::array();
  EXPECT_THAT(message_for(body), HasSubstr("programs: empty"));
  body["programs"] = {"a", 3};
  EXPECT_THAT(message_for(body), HasSubstr("programs[1]: expected a string"));
  body = good_body();
  body["program"] = "typo";
  EXPECT_THAT(message_for(body), HasSubstr("unknown field \"program\""));
  body = good_body();
  body["op"] = "spmx";
  EXPECT_THAT(message_for(body), HasSubstr("op: \"spmx\": expected spmv or spmm"));
  body = good_body();
  body["id"] = json::object();
  EXPECT_THAT(message_for(body), HasSubstr("id: expected a string or an integer"));
  try {
    parse_evaluate_request("{\"id\": ", {});
    FAIL() << "no error";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("request body is not valid JSON: parse error"));
    EXPECT_THAT(e.what(), ::testing::Not(HasSubstr("[json.exception")));
  }
}

TEST(evaluate_request, limits_on_programs_and_dense_sizes) {
  request_limits limits;
  limits.max_programs = 2;
  json body = good_body();
  body["programs"] = {"a", "b", "c"};
  EXPECT_THAT(message_for(body, limits), HasSubstr("3 programs, at most 2 per request"));
  limits.max_dense_elements = 1000;
  body = good_body();
  body["matrix"]["shape"] = {2000, 3};
  EXPECT_THAT(message_for(body, limits), HasSubstr("above the limit of 1000"));
  body["matrix"]["shape"] = {300, 3};
  body["op"] = "spmm";
  body["k"] = 4;  // 300 rows x 4 columns of C
  EXPECT_THAT(message_for(body, limits), HasSubstr("with k = 4"));
}

}  // namespace
}  // namespace sparserl
