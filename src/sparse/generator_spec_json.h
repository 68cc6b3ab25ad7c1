#pragma once
// A generator_spec as JSON, so a label file can name a large generated matrix by the recipe that
// makes it (family, parameters, seed) instead of listing millions of coordinates.
#include <string>

#include "sparse/generators.h"

namespace sparserl {

// The spec crosses library boundaries as JSON text, not as an nlohmann::json: on the GPU machine
// LibTorch's include directory bundles another nlohmann release than the system's, so a library
// that sees torch's headers (train) and one that does not (sparse) name nlohmann::json as
// different types and do not link (2026-12-07).

// Every field of the spec, by its generator_spec name: a JSON object's text.
std::string generator_spec_to_json(const generator_spec& spec);

// `text` is a JSON object. Fields absent take generator_spec's defaults (not the family's: the
// writer writes them all). Throws sparserl::error naming the field: an unknown family, a field of
// the wrong type, or a field generator_spec does not have; or saying the text is not JSON.
generator_spec generator_spec_from_json(const std::string& text);

}  // namespace sparserl
