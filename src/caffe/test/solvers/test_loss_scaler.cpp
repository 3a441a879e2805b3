// Loss scaling (solvers/loss_scaler.hpp): the scaler's rules, its settings and their errors, and a
// solver that overflows at its first scale: it skips those steps without touching the weights,
// halves the scale until the gradients are finite, then takes exactly the unscaled step, and
// grows the scale again after loss_scale_window finite steps.
#include <cmath>
#include <string>

#include "caffe/net.hpp"
#include "caffe/sgd_solvers.hpp"
#include "caffe/solvers/loss_scaler.hpp"
#include "caffe/test/log_counter.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

SolverParameter Settings(float loss_scale, bool dynamic, int window) {
  SolverParameter solver;
  solver.set_base_lr(0.01f);
  solver.set_lr_policy("fixed");
  solver.set_max_iter(100);
  solver.set_solver_mode(SolverParameter::CPU);
  solver.set_snapshot_after_train(false);
  if (loss_scale != 1.f || dynamic) {
    solver.set_loss_scale(loss_scale);
    solver.set_dynamic_loss_scale(dynamic);
    solver.set_loss_scale_window(window);
  }
  NetParameter* net = solver.mutable_net_param();
  net->set_name("scaled");
  net->mutable_state()->set_phase(TRAIN);
  // y = w x with x = 4 and w = 1: dL/dy = y = 4 and dL/dw = x dL/dy = 16, times the scale.
  *net->add_layer() = ParseLayerParam(R"(name: "data" type: "DummyData" top: "x" top: "target"
    dummy_data_param { shape { dim: 1 dim: 1 } shape { dim: 1 dim: 1 }
      data_filler { type: "constant" value: 4 } data_filler { type: "constant" value: 0 } })");
  *net->add_layer() = ParseLayerParam(R"(name: "ip" type: "InnerProduct" bottom: "x" top: "y"
    inner_product_param { num_output: 1 bias_term: false
      weight_filler { type: "constant" value: 1 } })");
  *net->add_layer() = ParseLayerParam(
      R"(name: "loss" type: "EuclideanLoss" bottom: "y" bottom: "target" top: "loss")");
  return solver;
}

float Weight(SGDSolver<float>* solver) {
  return solver->net()->layer_by_name("ip")->blobs()[0]->cpu_data()[0];
}

}  // namespace

TEST(LossScalerTest, DynamicHalvesOnOverflowAndDoublesAfterTheWindow) {
  LossScaler scaler(Settings(1024, true, 3), NetParameter());
  EXPECT_TRUE(scaler.active());
  EXPECT_FALSE(scaler.AfterGradients(false, 0));
  EXPECT_EQ(scaler.scale(), 512);
  EXPECT_TRUE(scaler.AfterGradients(true, 1));
  EXPECT_TRUE(scaler.AfterGradients(true, 2));
  EXPECT_EQ(scaler.scale(), 512);
  EXPECT_TRUE(scaler.AfterGradients(true, 3));
  EXPECT_EQ(scaler.scale(), 1024) << "the third finite step in a row doubles it";
  // An overflow restarts the count.
  EXPECT_TRUE(scaler.AfterGradients(true, 4));
  EXPECT_FALSE(scaler.AfterGradients(false, 5));
  EXPECT_TRUE(scaler.AfterGradients(true, 6));
  EXPECT_TRUE(scaler.AfterGradients(true, 7));
  EXPECT_EQ(scaler.scale(), 512);
}

TEST(LossScalerTest, StaticAppliesEveryStepAndNvcaffeFieldsStandIn) {
  LossScaler fixed(Settings(128, false, 1000), NetParameter());
  EXPECT_TRUE(fixed.AfterGradients(false, 0));
  EXPECT_EQ(fixed.scale(), 128);
  EXPECT_FALSE(LossScaler(Settings(1, false, 1000), NetParameter()).active());
  NetParameter nvcaffe;
  nvcaffe.set_global_grad_scale(256);
  nvcaffe.set_global_grad_scale_adaptive(true);
  LossScaler from_net(Settings(1, false, 1000), nvcaffe);
  EXPECT_EQ(from_net.scale(), 256);
  EXPECT_TRUE(from_net.dynamic());
}

TEST(LossScalerTest, BadSettingsNameTheField) {
  EXPECT_NE(ErrorOf([] {
              LossScaler made(Settings(0, true, 10), NetParameter());
            }).find("solver loss_scale is 0; expected a positive number"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              LossScaler made(Settings(8, true, 0), NetParameter());
            }).find("solver loss_scale_window is 0; expected at least 1"),
            std::string::npos);
  NetParameter nvcaffe;
  nvcaffe.set_global_grad_scale(-2);
  EXPECT_NE(ErrorOf([&] {
              LossScaler made(Settings(1, false, 10), nvcaffe);
            }).find("net global_grad_scale is -2"),
            std::string::npos);
}

// Scale 2^126: dL/dy = 4 * 2^126 = 2^128 overflows; at 2^125 and 2^124 dL/dw = 16 * scale still
// does; 2^123 is the first finite one. Powers of two scale exactly, so the step then taken is the
// unscaled solver's to the bit. (Each step multiplies w by 1 - 0.01 * 16.)
TEST(LossScalingSolverTest, SkipsOverflowingStepsThenTakesTheUnscaledStep) {
  Caffe::set_mode(Caffe::CPU);
  SGDSolver<float> plain(Settings(1, false, 1000));
  plain.Step(1);
  const float expected = Weight(&plain);
  EXPECT_FLOAT_EQ(expected, 1.f - 0.01f * 16);

  SGDSolver<float> scaled(Settings(std::ldexp(1.f, 126), true, 2));
  LogCounter skipped("step skipped");
  for (int step = 0; step < 3; ++step) {
    scaled.Step(1);
    EXPECT_EQ(Weight(&scaled), 1.f) << "step " << step << " overflowed and must not move w";
  }
  EXPECT_EQ(skipped.count, 3);
  EXPECT_EQ(scaled.loss_scaler().scale(), std::ldexp(1.f, 123));
  scaled.Step(1);
  EXPECT_EQ(Weight(&scaled), expected);
  EXPECT_EQ(scaled.iter(), 4);
  // The loss it reports is the unscaled one: (w x)^2 / 2 with w = 1 - 0.16.
  EXPECT_FLOAT_EQ(scaled.smoothed_loss(), 8.f);
  // The window's second finite step in a row doubles the scale, and the step is taken.
  scaled.Step(1);
  EXPECT_EQ(scaled.loss_scaler().scale(), std::ldexp(1.f, 124));
  EXPECT_FLOAT_EQ(Weight(&scaled), expected * (1.f - 0.16f));
  EXPECT_EQ(skipped.count, 3);
}

}  // namespace caffe
