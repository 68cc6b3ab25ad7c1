"""Tuned kernels in applications: `sparserl.compile(program, A)` prepares a program for the GPU
once (NVRTC compile, the matrix converted to the program's format and uploaded, the launch
geometry of every entry point) and returns a callable that runs it on device arrays:

    k = sparserl.compile(open("best.cu").read(), A)             # SpMV; op="spmm", k=64 for SpMM
    y = k(x)        # x: a CUDA torch tensor or CuPy array of A.cols float32; y: the same kind
    C = kb(B)       # SpMM: B is cols x k, row-major (C-contiguous); C is rows x k

The program runs in this process, on this process's GPU, outside the harness's sandbox: compile
what `sparserl.evaluate` (or `sparserl tune`) has judged correct. The source screen still runs.
Launches go through the CUDA driver (libcuda.so.1, by ctypes) in the device's primary context, the
one torch and CuPy use, on the caller's current stream (torch's or CuPy's) unless `stream=` says.
The program's entry points together write the whole output, as the ABI requires; there is no
verification here. A format with a scratch argument (RCSR's `work`) gets one input-sized device
buffer per kernel object: calls of one object on several streams at once would share it.
"""

from __future__ import annotations

import ctypes
from typing import Any

from . import _core
from .matrix import as_matrix

_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
_DEFAULT_SHARED_LIMIT = 48 * 1024  # dynamic shared memory a launch gets without opting in

_driver = None


def _cuda() -> ctypes.CDLL:
    global _driver
    if _driver is None:
        try:
            _driver = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise RuntimeError(f"sparserl.compile needs the CUDA driver (libcuda.so.1): {e}") from e
        _check(_driver.cuInit(0), "cuInit")
    return _driver


def _check(status: int, what: str) -> None:
    if status != 0:
        text = ctypes.c_char_p()
        _driver.cuGetErrorString(status, ctypes.byref(text))
        raise RuntimeError(f"{what}: CUDA error {status} ({(text.value or b'?').decode()})")


class _Context:
    """The device's primary context, current for the duration of a `with` block."""

    def __init__(self, device: int):
        cuda = _cuda()
        self.handle = ctypes.c_void_p()
        dev = ctypes.c_int()
        _check(cuda.cuDeviceGet(ctypes.byref(dev), device), "cuDeviceGet")
        self.device = dev
        _check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(self.handle), dev), "cuDevicePrimaryCtxRetain")

    def __enter__(self):
        _check(_cuda().cuCtxPushCurrent_v2(self.handle), "cuCtxPushCurrent")
        return self

    def __exit__(self, *exc):
        popped = ctypes.c_void_p()
        _cuda().cuCtxPopCurrent_v2(ctypes.byref(popped))

    def arch(self) -> str:
        major, minor = ctypes.c_int(), ctypes.c_int()
        cuda = _cuda()
        _check(cuda.cuDeviceGetAttribute(ctypes.byref(major),
                                         _CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device),
               "cuDeviceGetAttribute")
        _check(cuda.cuDeviceGetAttribute(ctypes.byref(minor),
                                         _CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device),
               "cuDeviceGetAttribute")
        return f"sm_{major.value}{minor.value}"


def _device_pointer(array: Any, shape: tuple, what: str) -> int:
    """The device address of a C-contiguous float32 CUDA array of `shape` (CUDA array interface:
    torch CUDA tensors, CuPy, Numba)."""
    interface = getattr(array, "__cuda_array_interface__", None)
    if interface is None:
        raise TypeError(f"{what}: expected a CUDA array (torch CUDA tensor, CuPy array), got "
                        f"{type(array).__name__}")
    if tuple(interface["shape"]) != shape:
        raise ValueError(f"{what}: shape {tuple(interface['shape'])}, expected {shape}")
    if interface["typestr"] != "<f4":
        raise ValueError(f"{what}: dtype {interface['typestr']}, expected float32 (<f4)")
    strides = interface.get("strides")
    if strides is not None and tuple(strides) != tuple(
            4 * _prod(shape[i + 1:]) for i in range(len(shape))):
        raise ValueError(f"{what}: must be C-contiguous")
    return int(interface["data"][0])


def _prod(values) -> int:
    n = 1
    for v in values:
        n *= int(v)
    return n


def _empty_like_input(x: Any, shape: tuple) -> Any:
    module = type(x).__module__.split(".")[0]
    if module == "torch":
        import torch
        return torch.empty(shape, dtype=torch.float32, device=x.device)
    if module == "cupy":
        import cupy
        with cupy.cuda.Device(x.device.id):
            return cupy.empty(shape, dtype=cupy.float32)
    raise TypeError(f"cannot allocate the output like a {type(x).__name__}: pass out=")


def _current_stream(x: Any) -> int:
    module = type(x).__module__.split(".")[0]
    if module == "torch":
        import torch
        return int(torch.cuda.current_stream(x.device).cuda_stream)
    if module == "cupy":
        import cupy
        return int(cupy.cuda.get_current_stream().ptr)
    return 0  # the legacy default stream


def _device_of(x: Any) -> int | None:
    module = type(x).__module__.split(".")[0]
    if module == "torch":
        return x.device.index or 0
    if module == "cupy":
        return int(x.device.id)
    return None


class DeviceKernel:
    """A program bound to one matrix on one GPU; call it on x (SpMV) or B (SpMM)."""

    def __init__(self, prepared: dict, context: _Context, device_index: int):
        self.device_index = device_index
        self.op, self.format = prepared["op"], prepared["format"]
        self.rows, self.cols, self.k = prepared["rows"], prepared["cols"], prepared["k"]
        self.footprint_bytes = prepared["footprint_bytes"]
        self._context = context
        self._buffers: list[ctypes.c_uint64] = []
        self._args = prepared["args"]
        cuda = _cuda()
        with context:
            self._module = ctypes.c_void_p()
            image = prepared["cubin"]
            _check(cuda.cuModuleLoadData(ctypes.byref(self._module), image), "cuModuleLoadData")
            self._launches = []
            for entry in prepared["entries"]:
                function = ctypes.c_void_p()
                _check(cuda.cuModuleGetFunction(ctypes.byref(function), self._module,
                                                entry["name"].encode()), "cuModuleGetFunction")
                if entry["shared"] > _DEFAULT_SHARED_LIMIT:
                    _check(cuda.cuFuncSetAttribute(function,
                                                   _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                   entry["shared"]), "cuFuncSetAttribute")
                self._launches.append((function, entry))
            # The format arrays, uploaded once.
            self._values = []
            for arg in self._args:
                if arg["kind"].endswith("_array"):  # i32, f32, u16 (CSR16's column deltas)
                    host = arg["value"]
                    pointer = ctypes.c_uint64(0)
                    size = max(1, host.nbytes)  # a zero-length array still gets an address
                    _check(cuda.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(size)),
                           "cuMemAlloc")
                    self._buffers.append(pointer)
                    if host.nbytes:
                        _check(cuda.cuMemcpyHtoD_v2(pointer, host.ctypes.data_as(ctypes.c_void_p),
                                                    ctypes.c_size_t(host.nbytes)), "cuMemcpyHtoD")
                    self._values.append(pointer)
                elif arg["kind"] == "scratch":  # the program's workspace: input-sized, unset
                    floats = prepared["cols"] * (prepared["k"] if prepared["op"] == "spmm" else 1)
                    pointer = ctypes.c_uint64(0)
                    _check(cuda.cuMemAlloc_v2(ctypes.byref(pointer),
                                              ctypes.c_size_t(max(1, 4 * floats))), "cuMemAlloc")
                    self._buffers.append(pointer)
                    self._values.append(pointer)
                elif arg["kind"] == "i32":
                    self._values.append(ctypes.c_int32(arg["value"]))
                else:
                    self._values.append(None)  # x / B and y / C, per call

    def __call__(self, x: Any, out: Any = None, stream: int | None = None) -> Any:
        spmm = self.op == "spmm"
        in_shape = (self.cols, self.k) if spmm else (self.cols,)
        out_shape = (self.rows, self.k) if spmm else (self.rows,)
        device = _device_of(x)
        if device is not None and device != self.device_index:
            raise ValueError(f"input on CUDA device {device}, kernel compiled for "
                             f"{self.device_index}")
        x_pointer = ctypes.c_uint64(_device_pointer(x, in_shape, "B" if spmm else "x"))
        if out is None:
            out = _empty_like_input(x, out_shape)
        y_pointer = ctypes.c_uint64(_device_pointer(out, out_shape, "C" if spmm else "y"))
        values = []
        for arg, value in zip(self._args, self._values):
            values.append(x_pointer if arg["kind"] == "input" else
                          y_pointer if arg["kind"] == "output" else value)
        # cuLaunchKernel takes the address of each argument's value (`values` keeps them alive).
        params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        handle = ctypes.c_void_p(_current_stream(x) if stream is None else stream)
        cuda = _cuda()
        with self._context:
            for function, entry in self._launches:
                gx, gy, gz = entry["grid"]
                _check(cuda.cuLaunchKernel(function, gx, gy, gz, entry["block"], 1, 1,
                                           entry["shared"], handle, params, None),
                       f"cuLaunchKernel {entry['name']}")
        return out

    def __del__(self):
        if _driver is None or not getattr(self, "_buffers", None):
            return
        try:
            with self._context:
                for pointer in self._buffers:
                    _driver.cuMemFree_v2(pointer)
                _driver.cuModuleUnload(self._module)
        except Exception:  # interpreter shutdown: the driver may be gone already
            pass


def compile(program: str, matrix: Any, op: str = "spmv", k: int = 64, device: int = 0,
            arch: str | None = None) -> DeviceKernel:
    """Prepares `program` (program text or raw model output) for `matrix` (anything
    sparserl.as_matrix takes) on CUDA device `device`; see this module's docstring."""
    context = _Context(device)
    prepared = _core.prepare_device_kernel(as_matrix(matrix), str(program), op, int(k),
                                           arch or context.arch())
    return DeviceKernel(prepared, context, device)
