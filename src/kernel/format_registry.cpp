#include "kernel/format_registry.h"

#include "sparse/error.h"

namespace sparserl {

const std::vector<format_info>& format_registry() {
  static const std::vector<format_info> all = [] {
    std::vector<format_info> out = {
        format_files::csr(),  format_files::coo(), format_files::ell(), format_files::sell(),
        format_files::bsr(),  format_files::dia(), format_files::hyb(), format_files::csr16(),
        format_files::rcsr(), format_files::hcoo()};
    for (size_t i = 0; i < out.size(); ++i) {
      if (static_cast<size_t>(out[i].kind) != i)
        throw error(std::string("format registry: ") + out[i].name +
                    " is out of format_kind order");
      // The GPU worker hands every scratch slot the same buffer: a format has at most one.
      int scratch = 0;
      for (const format_slot& s : out[i].slots) scratch += s.kind == arg_kind::scratch;
      if (scratch > 1)
        throw error(std::string("format registry: ") + out[i].name + " has " +
                    std::to_string(scratch) + " scratch slots; the runners give one buffer");
    }
    return out;
  }();
  return all;
}

const format_info& find_format(format_kind kind) {
  const std::vector<format_info>& all = format_registry();
  const size_t i = static_cast<size_t>(kind);
  if (i >= all.size()) throw error("format registry: unknown format_kind " + std::to_string(i));
  return all[i];
}

kernel_arg scalar_arg(const char* name, int64_t value) {
  if (value < INT32_MIN || value > INT32_MAX)
    throw error(std::string("kernel ABI: argument ") + name + " = " + std::to_string(value) +
                " does not fit in int");
  kernel_arg a;
  a.kind = arg_kind::i32;
  a.name = name;
  a.scalar = static_cast<int32_t>(value);
  return a;
}

kernel_arg int_array(const char* name, std::vector<int32_t> values) {
  kernel_arg a;
  a.kind = arg_kind::i32_array;
  a.name = name;
  a.ints = std::move(values);
  return a;
}

kernel_arg float_array(const char* name, std::vector<float> values) {
  kernel_arg a;
  a.kind = arg_kind::f32_array;
  a.name = name;
  a.floats = std::move(values);
  return a;
}

kernel_arg short_array(const char* name, std::vector<uint16_t> values) {
  kernel_arg a;
  a.kind = arg_kind::u16_array;
  a.name = name;
  a.shorts = std::move(values);
  return a;
}

kernel_arg scratch_arg(const char* name) {
  kernel_arg a;
  a.kind = arg_kind::scratch;
  a.name = name;
  return a;
}

}  // namespace sparserl
