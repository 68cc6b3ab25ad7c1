// A generator spec as JSON text (sparse/generator_spec_json.h): every field survives the round
// trip and makes the same matrix; bad text, unknown fields and families and wrong types are
// refused with the field named.
#include <gtest/gtest.h>

#include <string>

#include "sparse/error.h"
#include "sparse/generator_spec_json.h"
#include "sparse/generators.h"

namespace sparserl {
namespace {

std::string refusal(const std::string& text) {
  try {
    generator_spec_from_json(text);
  } catch (const error& e) {
    return e.what();
  }
  return "";
}

TEST(GeneratorSpecJson, RoundTripKeepsEveryFieldAndTheMatrix) {
  generator_spec s = default_spec("knn");
  s.rows = 300;
  s.seed = 17;
  s.neighbors = 6;
  s.order = "rcm";
  const generator_spec back = generator_spec_from_json(generator_spec_to_json(s));
  EXPECT_EQ(generator_spec_to_json(back), generator_spec_to_json(s));
  const csr_matrix a = generate_matrix(s), b = generate_matrix(back);
  EXPECT_EQ(a.row_ptr, b.row_ptr);
  EXPECT_EQ(a.col_idx, b.col_idx);
  EXPECT_EQ(a.values, b.values);
}

TEST(GeneratorSpecJson, RefusesBadTextAndNamesTheField) {
  EXPECT_NE(refusal("{\"family\": \"knn\"").find("not JSON"), std::string::npos);
  EXPECT_NE(refusal("[1, 2]").find("expected an object"), std::string::npos);
  EXPECT_NE(refusal("{\"rows\": 5}").find("generator.family"), std::string::npos);
  EXPECT_NE(refusal("{\"family\": \"no_such_family\"}"), "");
  EXPECT_NE(refusal("{\"family\": \"knn\", \"rows\": \"many\"}").find("generator.rows"),
            std::string::npos);
  EXPECT_NE(refusal("{\"family\": \"knn\", \"colour\": 3}").find("generator.colour"),
            std::string::npos);
}

}  // namespace
}  // namespace sparserl
