#pragma once
// The pre-training corpus: CUDA code that ships on the machine, as JSONL documents
//   {"source": "cuda/include/cuda_fp16.hpp", "text": "...", "split": "train"}
// in a fixed order, most relevant first (what a size cap keeps):
//   1. every program the expert kernel library emits for a fixed set of small generated matrices
//      (SpMV and SpMM spaces and the heuristic's picks), "expert/<config>";
//   2. the toolkit's device headers: include/cuda_fp16.hpp, cuda_bf16.hpp, cuda_fp8/6/4,
//      sm_*_intrinsics, sm_*_atomic_functions, device_*_functions, crt/ (device math, sm_*_rt),
//      cooperative_groups, mma.h, cuda_pipeline, cuda_awbarrier, vector_*; "cuda/include/...";
//   3. CCCL: CUB, Thrust, libcu++ (cuda/std, cuda/ptx, ...) and nv/, under include/cccl/ (CUDA 13)
//      or include/ (CUDA 12).
// Host-only libraries (cuBLAS, cuDNN, cuSOLVER, CUPTI, NCCL, ...) are left out. Each file's
// leading licence comment is dropped (the same boilerplate a thousand times teaches nothing).
// Each document's split comes from a hash of its source: split by document.
#include <cstdint>
#include <string>
#include <vector>

namespace sparserl::train {

struct corpus_document {
  std::string source;
  std::string text;
  std::string split;  // "train" or "val"
};

struct corpus_options {
  std::string cuda_root = "/usr/local/cuda";
  int64_t max_bytes = int64_t{64} << 20;          // total text; documents beyond it are skipped
  int64_t max_document_bytes = int64_t{1} << 20;  // larger files are skipped (generated tables)
  double val_fraction = 0.05;
  bool expert_programs = true;
  bool toolkit = true;
};

struct corpus_stats {
  int64_t expert_documents = 0, toolkit_documents = 0;
  int64_t bytes = 0;
  int64_t skipped_over_cap = 0, skipped_large = 0, skipped_binary = 0;
};

// Throws sparserl::error when the toolkit is asked for and cuda_root has no include/ directory,
// or a file cannot be read.
std::vector<corpus_document> build_cuda_corpus(const corpus_options& options,
                                               corpus_stats* stats = nullptr);

// The relative paths (under cuda_root) of the toolkit files the corpus takes, in corpus order.
std::vector<std::string> toolkit_corpus_files(const std::string& cuda_root);
// The text without its leading licence comment(s): /* ... */ blocks and runs of // lines that
// mention a copyright, licence or SPDX tag, with the blank lines after them.
std::string strip_licence_header(const std::string& text);

// Atomic (temp file + rename); read errors are "<path>:<line>: <why>".
void write_corpus_jsonl(const std::string& path, const std::vector<corpus_document>& docs);
std::vector<corpus_document> read_corpus_jsonl(const std::string& path);

}  // namespace sparserl::train
