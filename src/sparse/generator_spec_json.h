#pragma once
// A generator_spec as JSON, so a label file can name a large generated matrix by the recipe that
// makes it (family, parameters, seed) instead of listing millions of coordinates.
#include <nlohmann/json.hpp>

#include "sparse/generators.h"

namespace sparserl {

// Every field of the spec, by its generator_spec name.
nlohmann::json generator_spec_to_json(const generator_spec& spec);

// Fields absent take generator_spec's defaults (not the family's: the writer writes them all).
// Throws sparserl::error naming the field: an unknown family, a field of the wrong type, or a
// field generator_spec does not have.
generator_spec generator_spec_from_json(const nlohmann::json& j);

}  // namespace sparserl
