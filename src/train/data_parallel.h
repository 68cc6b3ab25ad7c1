#pragma once
// Data parallelism over torch's c10d, launched torchrun-style (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), on one host or many. Every rank draws the same
// global batches and trains on its share (sample i of a batch goes to rank i % world); each rank
// scales its loss by its share of the batch's tokens and the gradients are summed across ranks in
// buckets, so a step equals the single-process step on the whole batch up to summation order.
// Rank 0 writes checkpoints and metrics; every rank resumes from them, so the world size may
// change between runs. Backends: gloo for CPU tensors, NCCL for CUDA ones where the libtorch has
// it (NVLink multicast kept off: NCCL_NVLS_ENABLE=0).
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sparserl::train {

struct launch_env {
  int rank = 0, world_size = 1;
  int local_rank = 0, local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
};

// Reads the launcher's variables. None set (or WORLD_SIZE=1): a single process. Throws
// sparserl::error naming the variable when one is malformed, out of range or missing.
launch_env launch_env_from_environment();

class data_parallel {
 public:
  data_parallel();  // a single process: every collective is the identity
  // Joins the group (rank 0 hosts the rendezvous store); gloo when `device` is the CPU, NCCL
  // when it is CUDA. Waits at most timeout_s for the other ranks. Throws sparserl::error when
  // this libtorch has no such backend or the rendezvous fails.
  data_parallel(const launch_env& env, torch::Device device, double timeout_s = 300);
  ~data_parallel();
  data_parallel(const data_parallel&) = delete;
  data_parallel& operator=(const data_parallel&) = delete;

  // Whether this build can form a group for tensors on `device` (gloo: CPU, NCCL: CUDA).
  static bool has_backend(torch::Device device);

  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }
  bool is_main() const { return env_.rank == 0; }
  const char* backend() const;  // "none", "gloo", "nccl"

  // The samples of a global batch this rank takes: those at positions rank, rank + world, ...
  std::vector<int64_t> shard(const std::vector<int64_t>& batch) const;

  // Sums every trainable parameter's gradient across ranks, in buckets of at most bucket_bytes
  // (one all-reduce per bucket of same-dtype gradients); a missing gradient counts as zeros. All
  // ranks must hold the same parameters in the same order.
  void sum_gradients(const std::vector<torch::Tensor>& params, int64_t bucket_bytes = 25 << 20);
  // Element-wise sum of `values` across ranks (the same length on every rank).
  std::vector<double> sum(std::vector<double> values);
  // Copies rank 0's tensors into every rank's (in place, without autograd history).
  void broadcast_from_main(const std::vector<torch::Tensor>& tensors);
  void barrier();

 private:
  struct group;
  launch_env env_;
  torch::Device device_{torch::kCPU};
  std::unique_ptr<group> group_;
};

}  // namespace sparserl::train
