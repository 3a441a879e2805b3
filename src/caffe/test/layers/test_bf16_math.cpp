// The layers that compute in bf16 (Layer::HasBf16Math: Convolution on either engine,
// Deconvolution, InnerProduct), against the same layers in fp32, at the
// error bf16 allows: each factor rounded to bf16 (8 significant bits, round to nearest even) is
// off by at most u = 2^-8 of itself, so a product by at most (2u + u^2) of |x||w|, and a sum of K
// products by (2u + u^2) sum |x_k||w_k| plus fp32's own summation error (K 2^-24 each way, under
// 2^-13 for K <= 1024). The bound is per element: sum |x_k||w_k| is the same layer run in fp32
// on |x| and |w|. A bias gradient sums the rounded top gradient: u sum |dy|. The checks also
// require an error above fp32's, so a layer that silently stayed in fp32 fails. Then the master
// weights: a step too small to move a weight's bf16 copy still moves the fp32 weight.
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "caffe/kernels/bf16_gemm.hpp"
#include "caffe/layer.hpp"
#include "caffe/layers/inner_product_layer.hpp"
#include "caffe/net.hpp"
#include "caffe/sgd_solvers.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

constexpr double kProductBound = 2.0 / 256 + 1.0 / 65536 + 1.0 / 8192;  // 2u + u^2 + fp32 sums
constexpr double kSumBound = 1.0 / 256 + 1.0 / 8192;                    // u + fp32 sums
constexpr double kAboveFp32 = 1.0 / 4096;  // what fp32's reordered sums never reach

struct Pass {
  std::vector<float> top, bottom_diff, weight_diff, bias_diff;
};

std::vector<float> Values(const float* data, int count) {
  return std::vector<float>(data, data + count);
}

void Abs(Blob<float>* blob) {
  float* data = blob->mutable_cpu_data();
  for (int i = 0; i < blob->count(); ++i) data[i] = std::fabs(data[i]);
}

// One forward and backward of a fresh layer of `param` with the given arithmetic, on `bottom` and
// `top_diff`, its weights copied from `weights` (absolute values where `absolute`, bias zero).
Pass Run(const LayerParameter& param, Type math, const Blob<float>& bottom_in,
         const Blob<float>& top_diff, const std::vector<shared_ptr<Blob<float>>>& weights,
         bool absolute) {
  Blob<float> bottom, top;
  bottom.CopyFrom(bottom_in, false, true);
  if (absolute) Abs(&bottom);
  const Blobs<float> bottoms{&bottom}, tops{&top};
  shared_ptr<Layer<float>> layer = LayerRegistry<float>::CreateLayer(param);
  layer->set_math(math, math);
  layer->SetUp(bottoms, tops);
  for (size_t i = 0; i < weights.size(); ++i) {
    layer->blobs()[i]->CopyFrom(*weights[i]);
    if (absolute) {
      if (i == 0)
        Abs(layer->blobs()[i].get());
      else
        caffe_set(layer->blobs()[i]->count(), 0.f, layer->blobs()[i]->mutable_cpu_data());
    }
    caffe_set(layer->blobs()[i]->count(), 0.f, layer->blobs()[i]->mutable_cpu_diff());
  }
  layer->Forward(bottoms, tops);
  top.CopyFrom(top_diff, true, false);
  if (absolute) {
    float* diff = top.mutable_cpu_diff();
    for (int i = 0; i < top.count(); ++i) diff[i] = std::fabs(diff[i]);
  }
  layer->Backward(tops, {true}, bottoms);
  Pass pass;
  pass.top = Values(top.cpu_data(), top.count());
  pass.bottom_diff = Values(bottom.cpu_diff(), bottom.count());
  pass.weight_diff = Values(layer->blobs()[0]->cpu_diff(), layer->blobs()[0]->count());
  if (layer->blobs().size() > 1) {
    pass.bias_diff = Values(layer->blobs()[1]->cpu_diff(), layer->blobs()[1]->count());
  }
  return pass;
}

// Every |bf16 - fp32| within factor * bound; returns the largest error relative to the bound.
double CheckWithin(const std::vector<float>& bf16, const std::vector<float>& fp32,
                   const std::vector<float>& bound, double factor, const std::string& what) {
  double worst = 0;
  for (size_t i = 0; i < bf16.size(); ++i) {
    const double error = std::fabs(double(bf16[i]) - fp32[i]);
    EXPECT_LE(error, factor * bound[i] + 1e-30)
        << what << "[" << i << "]: bf16 " << bf16[i] << ", fp32 " << fp32[i] << ", bound "
        << factor * bound[i];
    if (bound[i] > 0) worst = std::max(worst, error / bound[i]);
  }
  return worst;
}

void CheckLayer(const std::string& text, const std::vector<int>& bottom_shape) {
  if (!CpuHasBf16Math()) GTEST_SKIP() << "no bf16 arithmetic here: " << CpuBf16Explanation();
  Caffe::set_mode(Caffe::CPU);
  const LayerParameter param = ParseLayerParam(text);
  Blob<float> bottom(bottom_shape), probe, top_diff;
  FillGaussian(&bottom, 1);
  // The weights a fresh fp32 layer draws, shared by all three runs.
  shared_ptr<Layer<float>> first = LayerRegistry<float>::CreateLayer(param);
  first->SetUp({&bottom}, {&probe});
  for (auto& blob : first->blobs()) FillGaussian(blob.get(), 2);
  top_diff.ReshapeLike(probe);
  Blob<float> gaussian(probe.shape());
  FillGaussian(&gaussian, 3);
  top_diff.CopyFrom(gaussian, false, false);
  caffe_copy(top_diff.count(), gaussian.cpu_data(), top_diff.mutable_cpu_diff());

  const Pass fp32 = Run(param, FLOAT, bottom, top_diff, first->blobs(), false);
  const Pass bf16 = Run(param, BFLOAT16, bottom, top_diff, first->blobs(), false);
  const Pass bound = Run(param, FLOAT, bottom, top_diff, first->blobs(), true);
  const double top = CheckWithin(bf16.top, fp32.top, bound.top, kProductBound, "top");
  const double bottom_diff = CheckWithin(bf16.bottom_diff, fp32.bottom_diff, bound.bottom_diff,
                                         kProductBound, "bottom diff");
  const double weight_diff = CheckWithin(bf16.weight_diff, fp32.weight_diff, bound.weight_diff,
                                         kProductBound, "weight diff");
  if (!fp32.bias_diff.empty()) {
    CheckWithin(bf16.bias_diff, fp32.bias_diff, bound.bias_diff, kSumBound, "bias diff");
  }
  // Rounded factors, not fp32 ones, in each direction.
  EXPECT_GT(top, kAboveFp32) << "the forward pass looks like fp32";
  EXPECT_GT(bottom_diff, kAboveFp32) << "the bottom gradient looks like fp32";
  EXPECT_GT(weight_diff, kAboveFp32) << "the weight gradient looks like fp32";
}

}  // namespace

TEST(Bf16MathTest, InnerProductWithinBf16Rounding) {
  CheckLayer(R"(name: "ip" type: "InnerProduct"
    inner_product_param { num_output: 24 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })",
             {InnerProductLayer<float>::kBf16MinExamples, 64});
}

TEST(Bf16MathTest, TransposedInnerProductWithinBf16Rounding) {
  CheckLayer(R"(name: "ip" type: "InnerProduct"
    inner_product_param { num_output: 24 transpose: true weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })",
             {InnerProductLayer<float>::kBf16MinExamples, 4, 4, 4});
}

TEST(Bf16MathTest, ConvolutionWithinBf16Rounding) {
  CheckLayer(R"(name: "conv" type: "Convolution"
    convolution_param { num_output: 32 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })",
             {2, 16, 8, 8});
}

// LeNet's shapes (1 -> 20 channels), which in fp32 stay on Caffe's engine: in bf16 on oneDNN's.
TEST(Bf16MathTest, ConvolutionOfFewChannelsWithinBf16Rounding) {
  CheckLayer(R"(name: "conv" type: "Convolution"
    convolution_param { num_output: 20 kernel_size: 5 stride: 1 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })",
             {4, 1, 12, 12});
}

// Caffe's own engine (im2col + GEMM), grouped, and Deconvolution, which runs the same GEMMs.
TEST(Bf16MathTest, ConvolutionOnCaffesEngineWithinBf16Rounding) {
  CheckLayer(R"(name: "conv" type: "Convolution"
    convolution_param { num_output: 12 kernel_size: 3 pad: 1 group: 2 engine: CAFFE
      weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } })",
             {2, 8, 7, 7});
}

TEST(Bf16MathTest, DeconvolutionWithinBf16Rounding) {
  CheckLayer(R"(name: "deconv" type: "Deconvolution"
    convolution_param { num_output: 6 kernel_size: 4 stride: 2 pad: 1
      weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } })",
             {2, 16, 5, 5});
}

// A weight of 1 moved by 1e-3 a step (a batch of kBf16MinExamples ones, the mean gradient 1):
// bf16's neighbours of 1 are 1 - 2^-8 and 1 + 2^-7, so the bf16 copy the layer computes with stays
// 1 until the fp32 master weight passes the midpoint 1 - 2^-9, after the second step. Had the
// weight itself been kept in bf16, every step would round back to 1 and training would stand still.
TEST(Bf16MathTest, MasterWeightsTakeStepsTooSmallForBf16) {
  if (!CpuHasBf16Math()) GTEST_SKIP() << "no bf16 arithmetic here: " << CpuBf16Explanation();
  Caffe::set_mode(Caffe::CPU);
  SolverParameter solver;
  solver.set_base_lr(1e-3f);
  solver.set_lr_policy("fixed");
  solver.set_max_iter(10);
  solver.set_solver_mode(SolverParameter::CPU);
  solver.set_snapshot_after_train(false);
  NetParameter* net = solver.mutable_net_param();
  net->set_name("master");
  net->set_default_forward_type(BFLOAT16);
  net->set_default_backward_type(BFLOAT16);
  net->mutable_state()->set_phase(TRAIN);
  *net->add_layer() = ParseLayerParam(R"(name: "data" type: "DummyData" top: "x" top: "target"
    dummy_data_param { shape { dim: 64 dim: 1 } shape { dim: 64 dim: 1 }
      data_filler { type: "constant" value: 1 } data_filler { type: "constant" value: 0 } })");
  *net->add_layer() = ParseLayerParam(R"(name: "ip" type: "InnerProduct" bottom: "x" top: "y"
    inner_product_param { num_output: 1 bias_term: false
      weight_filler { type: "constant" value: 1 } })");
  *net->add_layer() = ParseLayerParam(
      R"(name: "loss" type: "EuclideanLoss" bottom: "y" bottom: "target" top: "loss")");
  SGDSolver<float> sgd(solver);
  Net<float>& train = *sgd.net();
  ASSERT_EQ(train.layer_by_name("ip")->forward_math(), BFLOAT16);
  const Blob<float>& weight = *train.layer_by_name("ip")->blobs()[0];
  const Blob<float>& y = *train.blob_by_name("y");
  ASSERT_EQ(InnerProductLayer<float>::kBf16MinExamples, 64);
  sgd.Step(1);  // dL/dw = mean of x * y = 1
  EXPECT_NEAR(weight.cpu_data()[0], 0.999f, 1e-6);
  train.Forward();
  EXPECT_EQ(y.cpu_data()[0], 1.f) << "the bf16 copy of 0.999 is 1";
  sgd.Step(1);
  EXPECT_NEAR(weight.cpu_data()[0], 0.998f, 1e-6);
  train.Forward();
  EXPECT_EQ(y.cpu_data()[0], 1.f - 1.f / 256) << "0.998 is past the midpoint 1 - 2^-9";
}

}  // namespace caffe
