#pragma once
// One error type for every bad input: the message says what, where and why in one line.
#include <stdexcept>
#include <string>

namespace sparserl {

struct error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace sparserl
