#pragma once
// A numpy array that owns a copy of a vector's elements (freed with the array, not tied to the
// C++ object the vector belongs to).
#include <nanobind/ndarray.h>

#include <algorithm>
#include <vector>

namespace sparserl::python {

template <typename T>
nanobind::ndarray<nanobind::numpy, T, nanobind::ndim<1>> numpy_copy(const std::vector<T>& v) {
  T* data = new T[v.size()];
  std::copy(v.begin(), v.end(), data);
  nanobind::capsule owner(data, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  return nanobind::ndarray<nanobind::numpy, T, nanobind::ndim<1>>(data, {v.size()}, owner);
}

}  // namespace sparserl::python
