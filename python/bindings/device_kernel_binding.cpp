// A program prepared to run in the caller's own process on its GPU (sparserl.compile): the steps
// the evaluator takes before it hands a run to a GPU worker (parse, screen, NVRTC compile, the
// matrix converted to the program's format, every entry point's launch geometry), once. Nothing
// runs here: python/sparserl/device_kernel.py loads the image and launches it through the CUDA
// driver, so this module still imports on machines without one.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <algorithm>

#include "bindings.h"
#include "eval/compiler.h"
#include "eval/source_screen.h"
#include "kernel/abi.h"
#include "kernel/completion.h"
#include "numpy_copy.h"
#include "python_evaluator.h"
#include "sparse/error.h"

namespace nb = nanobind;

namespace sparserl::python {
namespace {

const char* kind_name(arg_kind kind) {
  switch (kind) {
    case arg_kind::i32:
      return "i32";
    case arg_kind::i32_array:
      return "i32_array";
    case arg_kind::f32_array:
      return "f32_array";
    case arg_kind::input:
      return "input";
    case arg_kind::output:
      return "output";
    case arg_kind::u16_array:
      return "u16_array";
    case arg_kind::scratch:
      return "scratch";
  }
  return "?";
}

// The same launch line lookup as the evaluator: the entry's named line, else the single one.
const launch_spec& launch_for(const kernel_program& p, const std::string& entry) {
  for (const launch_spec& spec : p.launches)
    if (spec.entry == entry) return spec;
  if (p.launches.size() == 1 && p.launches[0].entry.empty()) return p.launches[0];
  throw error("no LAUNCH line for entry point " + entry);
}

// {"cubin": bytes, "entries": [{"name", "grid": (x, y, z), "block", "shared"}], "args": [{"kind",
// "name", "value"}] in signature order (value: int, numpy array, or None for x/B and y/C),
// "rows", "cols", "k", "op", "format", "footprint_bytes"}. Throws sparserl::error naming the
// stage that refused the program.
nb::dict prepare(const csr_matrix& matrix, const std::string& completion, const std::string& op,
                 int32_t k, const std::string& arch) {
  const eval_task task = python_task(matrix, op, k);
  kernel_program program;
  format_arguments args;
  compile_result compiled;
  std::vector<std::pair<std::string, launch_geometry>> launches;
  {
    nb::gil_scoped_release no_gil;  // NVRTC and the conversion take a while
    parse_result parsed = parse_completion(completion, task.op);
    if (!parsed.program) throw error("no program: " + parsed.error);
    program = *parsed.program;
    const screen_result screened = screen_device_source(program.source);
    if (!screened.ok) throw error("rejected: " + screened.reason);
    compile_options options;
    options.arch = arch;
    compiled = compile_device_source(parameter_defines(program) + program.source, options);
    if (!compiled.ok) throw error(compiled.error + "\n" + compiled.log);
    args = build_arguments(task.op, matrix, program, task.k);
    for (const entry_point& entry : entry_points(task.op, program.format))
      launches.emplace_back(entry.name, compute_geometry(launch_for(program, entry.name), entry,
                                                         args, task.k, launch_limits{}));
  }
  nb::dict out;
  out["cubin"] = nb::bytes(compiled.cubin.data(), compiled.cubin.size());
  nb::list entries;
  for (const auto& [name, g] : launches) {
    nb::dict e;
    e["name"] = name;
    e["grid"] = nb::make_tuple(g.grid_x, g.grid_y, g.grid_z);
    e["block"] = g.block_x;
    e["shared"] = g.shared_bytes;
    entries.append(e);
  }
  out["entries"] = entries;
  nb::list arg_list;
  for (const kernel_arg& a : args.args) {
    nb::dict d;
    d["kind"] = kind_name(a.kind);
    d["name"] = a.name;
    if (a.kind == arg_kind::i32)
      d["value"] = a.scalar;
    else if (a.kind == arg_kind::i32_array)
      d["value"] = numpy_copy(a.ints);
    else if (a.kind == arg_kind::f32_array)
      d["value"] = numpy_copy(a.floats);
    else if (a.kind == arg_kind::u16_array)
      d["value"] = numpy_copy(a.shorts);
    else
      d["value"] = nb::none();
    arg_list.append(d);
  }
  out["args"] = arg_list;
  out["rows"] = matrix.rows;
  out["cols"] = matrix.cols;
  out["k"] = task.k;
  out["op"] = op_name(task.op);
  out["format"] = format_name(program.format);
  out["footprint_bytes"] = args.footprint_bytes;
  return out;
}

}  // namespace

void bind_device_kernel(nb::module_& m) {
  m.def("prepare_device_kernel", &prepare, nb::arg("matrix"), nb::arg("completion"),
        nb::arg("op") = "spmv", nb::arg("k") = 64, nb::arg("arch") = "sm_90",
        "Parses, screens and NVRTC-compiles a program and converts the matrix to its format, "
        "for sparserl.compile; nothing runs");
}

}  // namespace sparserl::python
