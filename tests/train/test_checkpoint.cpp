#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <filesystem>
#include <fstream>

#include "sparse/error.h"
#include "train/checkpoint.h"
#include "train/trainer_common.h"

namespace fs = std::filesystem;

namespace sparserl::train {
namespace {

struct toy_problem {
  torch::Tensor w = torch::zeros({4}, torch::requires_grad());
  optimizer_state opt;
  toy_problem() {
    optimizer_options o;
    o.lr = 0.1;
    opt = make_optimizer({{"w", w}}, o);
  }
  // One noisy step: the noise comes from torch's global generator, which the checkpoint restores.
  double step() {
    opt.adamw->zero_grad();
    torch::Tensor target = torch::randn({4});
    torch::Tensor loss = (w - target).pow(2).sum();
    loss.backward();
    opt.adamw->step();
    return loss.item<double>();
  }
};

class checkpoint_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sparserl_ckpt_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(checkpoint_test, resumed_training_is_bit_identical) {
  torch::manual_seed(11);
  toy_problem straight;
  std::vector<double> expected;
  for (int i = 0; i < 6; ++i) expected.push_back(straight.step());

  torch::manual_seed(11);
  toy_problem first;
  checkpoint_store store(dir_.string(), 0);
  for (int i = 0; i < 3; ++i) first.step();
  save_checkpoint(store, 3, first.opt, {{"note", "x"}});
  first.step();  // work after the checkpoint is lost, as in a kill

  toy_problem second;  // a fresh process: fresh tensors and optimizer
  run_options run;
  run.resume = true;
  resume_point at = resume_if_asked(run, store, second.opt);
  EXPECT_EQ(at.step, 3);
  EXPECT_EQ(at.state.value("note", ""), "x");
  for (int i = 3; i < 6; ++i) EXPECT_EQ(second.step(), expected[static_cast<size_t>(i)]) << i;
}

TEST_F(checkpoint_test, keeps_the_last_k_and_ignores_interrupted_saves) {
  toy_problem t;
  checkpoint_store store(dir_.string(), 2);
  for (int s = 1; s <= 4; ++s) save_checkpoint(store, s, t.opt, {});
  fs::create_directories(dir_ / "step-000000009.tmp-123");  // a save killed half-way
  std::vector<std::string> all = store.list();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_NE(all[0].find("step-000000003"), std::string::npos);
  EXPECT_NE(store.latest()->find("step-000000004"), std::string::npos);
}

TEST_F(checkpoint_test, a_corrupt_or_truncated_checkpoint_is_refused_before_loading) {
  toy_problem t;
  checkpoint_store store(dir_.string(), 0);
  const std::string path = store.save({5, {{"w", t.w}}, {}}, *t.opt.adamw);
  toy_problem fresh;
  {
    std::fstream f(path + "/tensors.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-2, std::ios::end);
    f.put('\x7f');
  }
  try {
    load_checkpoint(path, *fresh.opt.adamw);
    FAIL() << "corruption not detected";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("tensors.safetensors fails its CRC-32"), std::string::npos)
        << e.what();
  }
  fs::resize_file(path + "/optimizer.pt", 10);
  EXPECT_THROW(load_checkpoint(path, *fresh.opt.adamw), error);
  fs::remove(path + "/manifest.json");
  try {
    load_checkpoint(path, *fresh.opt.adamw);
    FAIL();
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("incomplete checkpoint"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(torch::equal(fresh.w, torch::zeros({4})));  // nothing was half-loaded
}

}  // namespace
}  // namespace sparserl::train
