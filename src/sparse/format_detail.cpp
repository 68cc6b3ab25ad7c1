#include "sparse/format_detail.h"

#include "sparse/error.h"

namespace sparserl::detail {

void check_stored_elements(const char* format, const std::string& shape, int64_t elements,
                           int64_t max_elements) {
  if (elements > max_elements)
    throw error(std::string(format) + ": " + shape + " would store " + std::to_string(elements) +
                " elements, above the limit of " + std::to_string(max_elements));
  if (elements > abi_max_elements)
    throw error(std::string(format) + ": " + shape + " would store " + std::to_string(elements) +
                " elements, beyond the 32-bit indices of the kernel ABI");
}

std::string describe(const csr_matrix& a) {
  return std::to_string(a.rows) + " x " + std::to_string(a.cols) + " matrix with " +
         std::to_string(a.nnz()) + " nonzeros";
}

}  // namespace sparserl::detail
