// The translation unit that precompiles the torch headers (cmake/sparserl_module.cmake,
// sparserl_torch_pch_owner); it defines nothing.
