#pragma once
// A kernel program as a self-contained CUDA header for applications (`sparserl export`): the
// program's device code, the conversion of a host CSR matrix into the program's format (each
// format's host_conversion, kernel/format_registry.h) and a class that uploads it once and
// launches the entry points as the program's LAUNCH lines say, as the harness does
// (docs/kernel-abi.md). The header needs nvcc and the CUDA runtime only.
#include <string>

#include "kernel/program.h"

namespace sparserl {

// The class the header defines in namespace sparserl_export: "spmv_kernel" or "spmm_kernel".
std::string exported_class_name(sparse_op op);

// The header's text. `program` is canonical (from parse_completion: every parameter present, one
// launch per entry point); `origin` names where it came from, for the header's first comment.
std::string export_header(const kernel_program& program, sparse_op op, const std::string& origin);

}  // namespace sparserl
