#include "train/data_parallel.h"

#include <torch/version.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>

#include "sparse/error.h"

// SPARSERL_HAVE_GLOO / SPARSERL_HAVE_NCCL: set by src/train/CMakeLists.txt where the backend's
// headers and library were found.
#if defined(USE_C10D_GLOO) && defined(SPARSERL_HAVE_GLOO)
#define SPARSERL_WITH_GLOO 1
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif
#if defined(USE_C10D_NCCL) && defined(SPARSERL_HAVE_NCCL)
#define SPARSERL_WITH_NCCL 1
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace sparserl::train {
namespace {

// An integer variable in [lo, hi]; `fallback` when unset.
int env_int(const char* name, int fallback, int lo, int hi) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno || *end || v < lo || v > hi)
    throw error(std::string("environment variable ") + name + "=" + text +
                ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                "]");
  return static_cast<int>(v);
}

}  // namespace

launch_env launch_env_from_environment() {
  launch_env e;
  e.world_size = env_int("WORLD_SIZE", 1, 1, 1 << 16);
  if (e.world_size == 1) return e;
  if (!std::getenv("RANK"))
    throw error("environment variable RANK: not set, but WORLD_SIZE=" +
                std::to_string(e.world_size) + " (launch with torchrun or set RANK per process)");
  e.rank = env_int("RANK", 0, 0, e.world_size - 1);
  e.local_world_size = env_int("LOCAL_WORLD_SIZE", e.world_size, 1, e.world_size);
  e.local_rank = env_int("LOCAL_RANK", e.rank % e.local_world_size, 0, e.local_world_size - 1);
  if (const char* addr = std::getenv("MASTER_ADDR"); addr && *addr) e.master_addr = addr;
  e.master_port = env_int("MASTER_PORT", e.master_port, 1, 65535);
  return e;
}

#if defined(SPARSERL_WITH_GLOO) || defined(SPARSERL_WITH_NCCL)
// torch 2 split the backends (ProcessGroupGloo, ProcessGroupNCCL) out of ProcessGroup.
#if TORCH_VERSION_MAJOR >= 2
using c10d_backend = c10d::Backend;
#else
using c10d_backend = c10d::ProcessGroup;
#endif

struct data_parallel::group {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d_backend> backend;
  std::string name;
};

namespace {

c10::intrusive_ptr<c10d::Store> rendezvous(const launch_env& e, std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions o;
  o.port = static_cast<uint16_t>(e.master_port);
  o.isServer = e.rank == 0;
  o.numWorkers = static_cast<size_t>(e.world_size);
  o.waitWorkers = true;
  o.timeout = timeout;
  return c10::make_intrusive<c10d::TCPStore>(e.master_addr, o);
}

// torch's message without its C++ backtrace, on one line.
std::string first_line(const std::exception& ex) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&ex);
  std::string text = c10_error ? c10_error->what_without_backtrace() : ex.what();
  return text.substr(0, text.find('\n'));
}

c10::intrusive_ptr<c10d_backend> make_backend(const launch_env& e, torch::Device device,
                                              const c10::intrusive_ptr<c10d::Store>& store,
                                              std::chrono::milliseconds timeout) {
  if (device.is_cuda()) {
#if defined(SPARSERL_WITH_NCCL)
    ::setenv("NCCL_NVLS_ENABLE", "0", 1);  // never NVLink multicast (see DESIGN.md, machines)
    auto o = c10d::ProcessGroupNCCL::Options::create();
    o->timeout = timeout;
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, e.rank, e.world_size, o);
#else
    throw error("data parallel on CUDA needs NCCL, which this build is without");
#endif
  }
#if defined(SPARSERL_WITH_GLOO)
  auto o = c10d::ProcessGroupGloo::Options::create(timeout);
  o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(e.master_addr));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, e.rank, e.world_size, o);
#else
  throw error("data parallel on the CPU needs gloo, which this build is without");
#endif
}

}  // namespace

data_parallel::data_parallel() = default;

data_parallel::data_parallel(const launch_env& env, torch::Device device, double timeout_s)
    : env_(env), device_(device) {
  if (env.world_size == 1) return;
  const auto timeout =
      std::chrono::milliseconds(static_cast<int64_t>(std::max(timeout_s, 1.0) * 1000));
  group_ = std::make_unique<group>();
  try {
    group_->store = rendezvous(env, timeout);
    group_->backend = make_backend(env, device, group_->store, timeout);
  } catch (const error&) {
    throw;
  } catch (const std::exception& ex) {
    throw error("data parallel: rank " + std::to_string(env.rank) + " of " +
                std::to_string(env.world_size) + " could not meet the others at " +
                env.master_addr + ":" + std::to_string(env.master_port) + " within " +
                std::to_string(static_cast<int64_t>(timeout.count() / 1000)) +
                " s: " + first_line(ex));
  }
  group_->name = device.is_cuda() ? "nccl" : "gloo";
}

data_parallel::~data_parallel() = default;

const char* data_parallel::backend() const { return group_ ? group_->name.c_str() : "none"; }

void data_parallel::sum_gradients(const std::vector<torch::Tensor>& params, int64_t bucket_bytes) {
  if (!group_) return;
  torch::NoGradGuard no_grad;
  // A rank whose share had nothing to learn from has no gradient yet: zeros, so that every rank
  // reduces the same buckets.
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : params) {
    if (!p.requires_grad()) continue;
    if (!p.grad().defined()) const_cast<torch::Tensor&>(p).mutable_grad() = torch::zeros_like(p);
    grads.push_back(p.grad());
  }
  size_t begin = 0;
  while (begin < grads.size()) {
    // A bucket: consecutive gradients of one dtype and device, up to bucket_bytes.
    size_t end = begin;
    int64_t bytes = 0;
    while (end < grads.size() && grads[end].scalar_type() == grads[begin].scalar_type() &&
           grads[end].device() == grads[begin].device() &&
           (end == begin || bytes + grads[end].nbytes() <= static_cast<size_t>(bucket_bytes)))
      bytes += static_cast<int64_t>(grads[end++].nbytes());
    std::vector<torch::Tensor> flat_parts;
    for (size_t i = begin; i < end; ++i) flat_parts.push_back(grads[i].reshape({-1}));
    std::vector<torch::Tensor> bucket = {torch::cat(flat_parts)};
    group_->backend->allreduce(bucket)->wait();
    int64_t offset = 0;
    for (size_t i = begin; i < end; ++i) {
      const int64_t n = grads[i].numel();
      grads[i].copy_(bucket[0].narrow(0, offset, n).view_as(grads[i]));
      offset += n;
    }
    begin = end;
  }
}

std::vector<double> data_parallel::sum(std::vector<double> values) {
  if (!group_ || values.empty()) return values;
  std::vector<torch::Tensor> t = {torch::tensor(values, torch::dtype(torch::kDouble)).to(device_)};
  group_->backend->allreduce(t)->wait();
  const torch::Tensor back = t[0].cpu();
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = back[static_cast<int64_t>(i)].item<double>();
  return values;
}

void data_parallel::broadcast_from_main(const std::vector<torch::Tensor>& tensors) {
  if (!group_) return;
  torch::NoGradGuard no_grad;
  for (const torch::Tensor& t : tensors) {
    std::vector<torch::Tensor> one = {t.detach()};
    group_->backend->broadcast(one)->wait();
  }
}

void data_parallel::barrier() {
  if (group_) group_->backend->barrier()->wait();
}

#else  // a libtorch without c10d backends: a single process only

struct data_parallel::group {};

data_parallel::data_parallel() = default;

data_parallel::data_parallel(const launch_env& env, torch::Device device, double)
    : env_(env), device_(device) {
  if (env.world_size > 1)
    throw error("WORLD_SIZE=" + std::to_string(env.world_size) +
                ": this build has no c10d backend (gloo or NCCL); run one process");
}

data_parallel::~data_parallel() = default;
const char* data_parallel::backend() const { return "none"; }
void data_parallel::sum_gradients(const std::vector<torch::Tensor>&, int64_t) {}
std::vector<double> data_parallel::sum(std::vector<double> values) { return values; }
void data_parallel::broadcast_from_main(const std::vector<torch::Tensor>&) {}
void data_parallel::barrier() {}

#endif

bool data_parallel::has_backend(torch::Device device) {
#if defined(SPARSERL_WITH_NCCL)
  if (device.is_cuda()) return true;
#endif
#if defined(SPARSERL_WITH_GLOO)
  if (device.is_cpu()) return true;
#endif
  (void)device;
  return false;
}

std::vector<int64_t> data_parallel::shard(const std::vector<int64_t>& batch) const {
  std::vector<int64_t> out;
  for (size_t i = static_cast<size_t>(env_.rank); i < batch.size();
       i += static_cast<size_t>(env_.world_size))
    out.push_back(batch[i]);
  return out;
}

}  // namespace sparserl::train
