#include "eval/gpu_worker/baseline.h"

#include <utility>

#include "eval/gpu_worker/timing.h"

namespace sparserl::gpu_worker {

namespace {

class sparse_matrix {
 public:
  sparse_matrix(const csr_matrix& a, const device_buffer& row_ptr, const device_buffer& col_idx,
                const device_buffer& values) {
    check(cusparseCreateCsr(&d_, a.rows, a.cols, a.nnz(), reinterpret_cast<void*>(row_ptr.get()),
                            reinterpret_cast<void*>(col_idx.get()),
                            reinterpret_cast<void*>(values.get()), CUSPARSE_INDEX_32I,
                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
          "cusparseCreateCsr");
  }
  ~sparse_matrix() { cusparseDestroySpMat(d_); }
  sparse_matrix(const sparse_matrix&) = delete;
  sparse_matrix& operator=(const sparse_matrix&) = delete;
  cusparseSpMatDescr_t get() const { return d_; }

 private:
  cusparseSpMatDescr_t d_ = nullptr;
};

class dense_vector {
 public:
  dense_vector(int64_t n, const device_buffer& b) {
    check(cusparseCreateDnVec(&d_, n, reinterpret_cast<void*>(b.get()), CUDA_R_32F),
          "cusparseCreateDnVec");
  }
  ~dense_vector() { cusparseDestroyDnVec(d_); }
  dense_vector(const dense_vector&) = delete;
  dense_vector& operator=(const dense_vector&) = delete;
  cusparseDnVecDescr_t get() const { return d_; }

 private:
  cusparseDnVecDescr_t d_ = nullptr;
};

class dense_matrix {  // row-major, as the kernel ABI lays out B and C
 public:
  dense_matrix(int64_t rows, int64_t cols, const device_buffer& b) {
    check(cusparseCreateDnMat(&d_, rows, cols, cols, reinterpret_cast<void*>(b.get()), CUDA_R_32F,
                              CUSPARSE_ORDER_ROW),
          "cusparseCreateDnMat");
  }
  ~dense_matrix() { cusparseDestroyDnMat(d_); }
  dense_matrix(const dense_matrix&) = delete;
  dense_matrix& operator=(const dense_matrix&) = delete;
  cusparseDnMatDescr_t get() const { return d_; }

 private:
  cusparseDnMatDescr_t d_ = nullptr;
};

struct device_problem {
  device_buffer row_ptr, col_idx, values, input, output;
  int64_t bytes = 0;
};

device_problem upload(const gpu_protocol::baseline_request& q) {
  const csr_matrix& a = q.matrix;
  device_problem p{device_buffer(a.row_ptr.size() * 4), device_buffer(a.col_idx.size() * 4),
                   device_buffer(a.values.size() * 4), device_buffer(q.input.size() * 4),
                   device_buffer(static_cast<size_t>(a.rows) * q.k * 4)};
  p.row_ptr.upload(a.row_ptr.data(), "row_ptr");
  p.col_idx.upload(a.col_idx.data(), "col_idx");
  p.values.upload(a.values.data(), "values");
  p.input.upload(q.input.data(), "input");
  p.bytes = static_cast<int64_t>(p.row_ptr.bytes() + p.col_idx.bytes() + p.values.bytes() +
                                 p.input.bytes() + p.output.bytes());
  return p;
}

// Times `work` (after `setup` sized and preprocessed it) and keeps one more run's output.
void measure(device_context& device, const gpu_protocol::baseline_request& q, device_problem& p,
             const enqueue_fn& work, cusparse_algorithm& a) {
  const size_t out_n = p.output.bytes() / 4;
  auto clear = [&](CUstream s) { check(cuMemsetD32Async(p.output.get(), 0, out_n, s), "clear"); };
  const bool flush = should_flush_l2(q.timing, p.bytes, device.info().l2_bytes);
  a.timing = time_on_gpu(device.stream(), q.timing, flush ? &device.l2_flush_buffer() : nullptr,
                         clear, work);
  check(cuMemsetD32Async(p.output.get(), 0x7fc0dead, out_n, device.stream()), "poison");
  work(device.stream());
  check(cuStreamSynchronize(device.stream()), "synchronize");
  a.output.resize(out_n);
  p.output.download(a.output.data(), "output");
  a.ok = true;
}

void spmv(device_context& device, const gpu_protocol::baseline_request& q, device_problem& p,
          cusparseSpMVAlg_t alg, cusparse_algorithm& a) {
  const float alpha = 1, beta = 0;
  const cusparseHandle_t h = device.cusparse();
  const sparse_matrix A(q.matrix, p.row_ptr, p.col_idx, p.values);  // fresh: preprocess binds to it
  const dense_vector x(q.matrix.cols, p.input), y(q.matrix.rows, p.output);
  const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  size_t size = 0;
  check(cusparseSpMV_bufferSize(h, op, &alpha, A.get(), x.get(), &beta, y.get(), CUDA_R_32F, alg,
                                &size),
        "cusparseSpMV_bufferSize");
  const device_buffer buffer(size);
  void* ws = reinterpret_cast<void*>(buffer.get());
  check(
      cusparseSpMV_preprocess(h, op, &alpha, A.get(), x.get(), &beta, y.get(), CUDA_R_32F, alg, ws),
      "cusparseSpMV_preprocess");
  measure(
      device, q, p,
      [&](CUstream) {
        check(cusparseSpMV(h, op, &alpha, A.get(), x.get(), &beta, y.get(), CUDA_R_32F, alg, ws),
              "cusparseSpMV");
      },
      a);
}

void spmm(device_context& device, const gpu_protocol::baseline_request& q, device_problem& p,
          cusparseSpMMAlg_t alg, cusparse_algorithm& a) {
  const float alpha = 1, beta = 0;
  const cusparseHandle_t h = device.cusparse();
  const sparse_matrix A(q.matrix, p.row_ptr, p.col_idx, p.values);
  const dense_matrix B(q.matrix.cols, q.k, p.input), C(q.matrix.rows, q.k, p.output);
  const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  size_t size = 0;
  check(cusparseSpMM_bufferSize(h, op, op, &alpha, A.get(), B.get(), &beta, C.get(), CUDA_R_32F,
                                alg, &size),
        "cusparseSpMM_bufferSize");
  const device_buffer buffer(size);
  void* ws = reinterpret_cast<void*>(buffer.get());
  check(cusparseSpMM_preprocess(h, op, op, &alpha, A.get(), B.get(), &beta, C.get(), CUDA_R_32F,
                                alg, ws),
        "cusparseSpMM_preprocess");
  measure(
      device, q, p,
      [&](CUstream) {
        check(
            cusparseSpMM(h, op, op, &alpha, A.get(), B.get(), &beta, C.get(), CUDA_R_32F, alg, ws),
            "cusparseSpMM");
      },
      a);
}

}  // namespace

std::vector<cusparse_algorithm> run_baseline(device_context& device,
                                             const gpu_protocol::baseline_request& q) {
  validate_csr(q.matrix);
  const int64_t k = q.op == sparse_op::spmm ? q.k : 1;
  if (k < 1 || static_cast<int64_t>(q.input.size()) != int64_t{q.matrix.cols} * k)
    throw error("baseline: input of " + std::to_string(q.input.size()) + " values for " +
                std::to_string(q.matrix.cols) + " columns and k = " + std::to_string(k));
  device_problem p = upload(q);
  std::vector<cusparse_algorithm> out;
  auto attempt = [&](const std::string& name, auto&& body) {
    cusparse_algorithm a;
    a.name = name;
    try {
      body(a);
    } catch (const cuda_failure& e) {
      if (context_lost()) throw;
      a = cusparse_algorithm{name, false, e.what(), {}, {}};
    }
    out.push_back(std::move(a));
  };
  if (q.op == sparse_op::spmv) {
    for (auto [alg, name] : {std::pair{CUSPARSE_SPMV_CSR_ALG1, "CSR_ALG1"},
                             std::pair{CUSPARSE_SPMV_CSR_ALG2, "CSR_ALG2"}})
      attempt(std::string("cusparseSpMV ") + name,
              [&](cusparse_algorithm& a) { spmv(device, q, p, alg, a); });
  } else {
    for (auto [alg, name] : {std::pair{CUSPARSE_SPMM_CSR_ALG1, "CSR_ALG1"},
                             std::pair{CUSPARSE_SPMM_CSR_ALG2, "CSR_ALG2"},
                             std::pair{CUSPARSE_SPMM_CSR_ALG3, "CSR_ALG3"}})
      attempt(std::string("cusparseSpMM ") + name,
              [&](cusparse_algorithm& a) { spmm(device, q, p, alg, a); });
  }
  return out;
}

timing_summary run_copy_bandwidth(device_context& device,
                                  const gpu_protocol::copy_bandwidth_request& q) {
  if (q.bytes <= 0 || q.bytes % 4 != 0)
    throw error("copy bandwidth: size must be a positive multiple of 4, got " +
                std::to_string(q.bytes));
  const device_buffer src(static_cast<size_t>(q.bytes)), dst(static_cast<size_t>(q.bytes));
  check(cuMemsetD32(src.get(), 0x3f800000, static_cast<size_t>(q.bytes) / 4), "cuMemsetD32");
  const bool flush = should_flush_l2(q.timing, 2 * q.bytes, device.info().l2_bytes);
  return time_on_gpu(
      device.stream(), q.timing, flush ? &device.l2_flush_buffer() : nullptr, [](CUstream) {},
      [&](CUstream s) {
        check(cuMemcpyDtoDAsync(dst.get(), src.get(), static_cast<size_t>(q.bytes), s),
              "cuMemcpyDtoDAsync");
      });
}

}  // namespace sparserl::gpu_worker
