#include "sparse/generator_spec_json.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "sparse/error.h"

namespace sparserl {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw error("generator." + field + ": " + why);
}

template <class T>
void read_integer(const json& j, const char* field, T& out) {
  const auto it = j.find(field);
  if (it == j.end()) return;
  if (!it->is_number_integer()) bad(field, "expected an integer, got " + it->dump());
  out = it->get<T>();
}

void read_real(const json& j, const char* field, double& out) {
  const auto it = j.find(field);
  if (it == j.end()) return;
  if (!it->is_number()) bad(field, "expected a number, got " + it->dump());
  out = it->get<double>();
}

void read_text(const json& j, const char* field, std::string& out) {
  const auto it = j.find(field);
  if (it == j.end()) return;
  if (!it->is_string()) bad(field, std::string("expected a string, got ") + it->type_name());
  out = it->get<std::string>();
}

const char* const fields[] = {"family",    "rows",      "cols",       "seed",       "points",
                              "bandwidth", "block",     "density",    "avg_degree", "rmat_a",
                              "rmat_b",    "rmat_c",    "dense_rows", "order",      "dims",
                              "dof",       "neighbors", "exponent"};

}  // namespace

std::string generator_spec_to_json(const generator_spec& s) {
  return json{{"family", s.family},
              {"rows", s.rows},
              {"cols", s.cols},
              {"seed", s.seed},
              {"points", s.points},
              {"bandwidth", s.bandwidth},
              {"block", s.block},
              {"density", s.density},
              {"avg_degree", s.avg_degree},
              {"rmat_a", s.rmat_a},
              {"rmat_b", s.rmat_b},
              {"rmat_c", s.rmat_c},
              {"dense_rows", s.dense_rows},
              {"order", s.order},
              {"dims", s.dims},
              {"dof", s.dof},
              {"neighbors", s.neighbors},
              {"exponent", s.exponent}}
      .dump();
}

generator_spec generator_spec_from_json(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw error("generator: not JSON: " + text.substr(0, 80));
  if (!j.is_object())
    throw error(std::string("generator: expected an object, got ") + j.type_name());
  for (const auto& [key, value] : j.items())
    if (std::find(std::begin(fields), std::end(fields), key) == std::end(fields))
      bad(key, "not a generator parameter");
  generator_spec s;
  if (!j.contains("family")) bad("family", "missing");
  read_text(j, "family", s.family);
  find_family(s.family);  // one clear error naming the known families
  read_integer(j, "rows", s.rows);
  read_integer(j, "cols", s.cols);
  read_integer(j, "seed", s.seed);
  read_integer(j, "points", s.points);
  read_integer(j, "bandwidth", s.bandwidth);
  read_integer(j, "block", s.block);
  read_real(j, "density", s.density);
  read_real(j, "avg_degree", s.avg_degree);
  read_real(j, "rmat_a", s.rmat_a);
  read_real(j, "rmat_b", s.rmat_b);
  read_real(j, "rmat_c", s.rmat_c);
  read_integer(j, "dense_rows", s.dense_rows);
  read_text(j, "order", s.order);
  read_integer(j, "dims", s.dims);
  read_integer(j, "dof", s.dof);
  read_integer(j, "neighbors", s.neighbors);
  read_real(j, "exponent", s.exponent);
  return s;
}

}  // namespace sparserl
