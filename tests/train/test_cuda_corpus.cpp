// The pre-training corpus: which toolkit files it takes, in what order, the licence headers it
// drops, the size cap, the split by document, and that two builds are byte-identical.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "kernel/expert_library.h"
#include "scratch_dir.h"
#include "sparse/error.h"
#include "train/cuda_corpus.h"
#include "train/data_split.h"

namespace sparserl::train {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A toolkit in miniature: CUDA 13's layout with device headers, host-only ones and CCCL.
void fake_toolkit(const testing::scratch_dir& root) {
  const std::string licence =
      "/*\n * Copyright 2024 NVIDIA Corporation.  All rights reserved.\n */\n\n";
  testing::write_text(root / "include/cuda_fp16.hpp", licence + "__device__ half h();\n");
  testing::write_text(root / "include/sm_61_intrinsics.hpp", "__device__ int dp4a();\n");
  testing::write_text(root / "include/cublas_v2.h", "host only\n");
  testing::write_text(root / "include/cudnn.h", "host only\n");
  testing::write_text(root / "include/crt/sm_90_rt.hpp", "__device__ void cluster();\n");
  testing::write_text(root / "include/cccl/cub/block/block_reduce.cuh",
                      "// SPDX-License-Identifier: Apache-2.0\n//\n\nstruct BlockReduce {};\n");
  testing::write_text(root / "include/cccl/cuda/std/atomic", "namespace cuda::std {}\n");
  testing::write_text(root / "include/cccl/thrust/sort.h", "thrust::sort\n");
  testing::write_text(root / "include/cccl/thrust/CMakeLists.txt", "not code\n");
  testing::write_text(root / "include/cccl/cub/table.bin.h", std::string("a\0b", 3));
  testing::write_text(root / "include/cccl/cub/huge.cuh", std::string(2 << 20, 'x'));
}

corpus_options toolkit_only(const testing::scratch_dir& root) {
  corpus_options o;
  o.cuda_root = root.path().string();
  o.expert_programs = false;
  return o;
}

TEST(cuda_corpus, takes_the_device_headers_and_cccl_in_a_fixed_order) {
  testing::scratch_dir root;
  fake_toolkit(root);
  EXPECT_THAT(toolkit_corpus_files(root.path().string()),
              ElementsAre("include/cuda_fp16.hpp", "include/sm_61_intrinsics.hpp",
                          "include/crt/sm_90_rt.hpp", "include/cccl/cub/block/block_reduce.cuh",
                          "include/cccl/cub/huge.cuh", "include/cccl/cub/table.bin.h",
                          "include/cccl/thrust/sort.h", "include/cccl/cuda/std/atomic"));
  corpus_stats s;
  const std::vector<corpus_document> docs = build_cuda_corpus(toolkit_only(root), &s);
  ASSERT_EQ(docs.size(), 6u);
  EXPECT_EQ(docs[0].source, "cuda/include/cuda_fp16.hpp");
  EXPECT_EQ(docs[0].text, "__device__ half h();\n");  // the licence comment is gone
  EXPECT_EQ(docs[3].text, "struct BlockReduce {};\n");
  EXPECT_EQ(s.skipped_large, 1);
  EXPECT_EQ(s.skipped_binary, 1);
  EXPECT_EQ(s.toolkit_documents, 6);
}

TEST(cuda_corpus, cuda_12_keeps_cccl_directly_under_include) {
  testing::scratch_dir root;
  testing::write_text(root / "include/cub/cub.cuh", "cub\n");
  testing::write_text(root / "include/thrust/version.h", "thrust\n");
  EXPECT_THAT(toolkit_corpus_files(root.path().string()),
              ElementsAre("include/cub/cub.cuh", "include/thrust/version.h"));
}

TEST(cuda_corpus, licence_headers_go_and_code_comments_stay) {
  EXPECT_EQ(strip_licence_header("/* Copyright x */\n// SPDX-License: MIT\n\nint a;\n"),
            "int a;\n");
  EXPECT_EQ(strip_licence_header("/* Licensed under Apache */ /* a note */ int a;"),
            "/* a note */ int a;");
  EXPECT_EQ(strip_licence_header("// helpers for warps\nint a;\n"),
            "// helpers for warps\nint a;\n");
  EXPECT_EQ(strip_licence_header("int a; /* Copyright */"), "int a; /* Copyright */");
  EXPECT_EQ(strip_licence_header("/* Copyright, unterminated"), "/* Copyright, unterminated");
}

TEST(cuda_corpus, the_cap_keeps_documents_in_order_while_they_fit) {
  testing::scratch_dir root;
  fake_toolkit(root);
  corpus_options o = toolkit_only(root);
  o.max_bytes = 50;  // fp16 (21 bytes) and sm_61 (23) fit, nothing after them does
  corpus_stats s;
  const std::vector<corpus_document> docs = build_cuda_corpus(o, &s);
  int64_t total = 0;
  for (const corpus_document& d : docs) total += static_cast<int64_t>(d.text.size());
  EXPECT_LE(total, 50);
  EXPECT_EQ(total, s.bytes);
  ASSERT_GE(docs.size(), 2u);
  EXPECT_EQ(docs[0].source, "cuda/include/cuda_fp16.hpp");
  EXPECT_EQ(docs[1].source, "cuda/include/sm_61_intrinsics.hpp");
  EXPECT_GT(s.skipped_over_cap, 0);
}

TEST(cuda_corpus, expert_programs_cover_every_template_and_come_first) {
  corpus_options o;
  o.toolkit = false;
  corpus_stats s;
  const std::vector<corpus_document> docs = build_cuda_corpus(o, &s);
  std::set<std::string> names;
  for (const corpus_document& d : docs) {
    ASSERT_EQ(d.source.rfind("expert/", 0), 0u);
    EXPECT_EQ(d.text.rfind("FORMAT: ", 0), 0u);
    names.insert(d.source.substr(7, d.source.find(' ') - 7));
  }
  for (const expert_template& t : expert_templates()) EXPECT_TRUE(names.count(t.name)) << t.name;
  // The block shape detected on the 3-dof FEM mesh, and the 16-bit column format.
  EXPECT_TRUE(std::any_of(docs.begin(), docs.end(), [](const corpus_document& d) {
    return d.text.rfind("FORMAT: BSR r=3 c=3\n", 0) == 0;
  }));
  EXPECT_TRUE(std::any_of(docs.begin(), docs.end(), [](const corpus_document& d) {
    return d.text.rfind("FORMAT: CSR16\n", 0) == 0;
  }));
  // The reordered format, with its two entry points (the gather first).
  EXPECT_TRUE(std::any_of(docs.begin(), docs.end(), [](const corpus_document& d) {
    return d.text.rfind("FORMAT: RCSR\nLAUNCH spmv_rcsr_gather: ", 0) == 0;
  }));
  EXPECT_EQ(s.expert_documents, static_cast<int64_t>(docs.size()));
}

// Under the CPU quickstart's 256 KB cap the programs are interleaved by template, so every
// template keeps at least one (in matrix order the cap was spent on the first matrices' long
// templates and no BSR program was left).
TEST(cuda_corpus, a_byte_cap_keeps_every_template) {
  corpus_options o;
  o.toolkit = false;
  o.max_bytes = 256 << 10;
  corpus_stats s;
  const std::vector<corpus_document> docs = build_cuda_corpus(o, &s);
  EXPECT_GT(s.skipped_over_cap, 0);
  std::set<std::string> names;
  for (const corpus_document& d : docs) names.insert(d.source.substr(7, d.source.find(' ') - 7));
  for (const expert_template& t : expert_templates()) EXPECT_TRUE(names.count(t.name)) << t.name;
}

TEST(cuda_corpus, builds_are_identical_and_split_by_document) {
  testing::scratch_dir root;
  fake_toolkit(root);
  corpus_options o = toolkit_only(root);
  o.expert_programs = true;
  o.val_fraction = 0.3;
  write_corpus_jsonl(root / "a.jsonl", build_cuda_corpus(o));
  write_corpus_jsonl(root / "b.jsonl", build_cuda_corpus(o));
  EXPECT_EQ(testing::read_text(root / "a.jsonl"), testing::read_text(root / "b.jsonl"));
  const std::vector<corpus_document> docs = read_corpus_jsonl(root / "a.jsonl");
  std::map<std::string, int> per_split;
  for (const corpus_document& d : docs) {
    EXPECT_EQ(d.split, split_of(stable_hash(d.source), 0.3)) << d.source;
    ++per_split[d.split];
  }
  EXPECT_GT(per_split["val"], 0);
  EXPECT_GT(per_split["train"], per_split["val"]);
  // A document keeps its split when the corpus around it changes.
  o.max_bytes = 4000;
  for (const corpus_document& d : build_cuda_corpus(o))
    EXPECT_EQ(d.split, split_of(stable_hash(d.source), 0.3));
}

TEST(cuda_corpus, the_installed_toolkit_gives_fp16_cub_thrust_and_libcudacxx) {
  const std::string root = "/usr/local/cuda";
  if (!std::filesystem::is_directory(root + "/include")) GTEST_SKIP() << "no toolkit at " << root;
  const std::vector<std::string> files = toolkit_corpus_files(root);
  auto has = [&](const std::string& part) {
    return std::any_of(files.begin(), files.end(),
                       [&](const std::string& f) { return f.find(part) != std::string::npos; });
  };
  EXPECT_TRUE(has("include/cuda_fp16.hpp"));
  EXPECT_TRUE(has("cub/block/block_reduce.cuh"));
  EXPECT_TRUE(has("thrust/"));
  EXPECT_TRUE(has("cuda/std/"));
  EXPECT_FALSE(has("cublas"));
  EXPECT_FALSE(has("cudnn"));
}

TEST(cuda_corpus, bad_inputs_are_errors) {
  testing::scratch_dir root;
  corpus_options o;
  o.cuda_root = root / "nowhere";
  EXPECT_THROW(build_cuda_corpus(o), error);
  o.toolkit = false;
  o.max_bytes = -1;
  EXPECT_THROW(build_cuda_corpus(o), error);
  testing::write_text(root / "c.jsonl",
                      "{\"source\": \"a\", \"text\": \"x\"}\n{\"source\": \"b\"}\n");
  try {
    read_corpus_jsonl(root / "c.jsonl");
    ADD_FAILURE() << "no error";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("c.jsonl:2: expected a string field \"text\""));
  }
}

}  // namespace
}  // namespace sparserl::train
