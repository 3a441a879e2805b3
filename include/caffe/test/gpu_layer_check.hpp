// GPU against CPU for one layer: the same parameters, inputs, learned blobs and top gradients
// go through Forward/Backward in CPU mode and in GPU mode, and every output (tops, bottom diffs,
// learned blobs and their diffs) must agree within a stated tolerance. Tests that use it are
// typed over float and double and skip, saying why, where no GPU can be used. Each layer's such
// cases are in its own test file, a suite named <Type>LayerGpuTest
// (src/caffe/test/layers/test_relu_layer.cpp: ReLULayerGpuTest).
#ifndef CAFFE_TEST_GPU_LAYER_CHECK_HPP_
#define CAFFE_TEST_GPU_LAYER_CHECK_HPP_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/layer.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

/// |gpu - cpu| <= abs + rel * max(|gpu|, |cpu|) for every value compared.
struct GpuTolerance {
  double abs = 1e-5;
  double rel = 1e-4;
};

/// float: GpuTolerance's defaults; double: much tighter, which double arithmetic easily meets.
template <typename Dtype>
GpuTolerance GpuDefaultTolerance() {
  GpuTolerance tolerance;
  if (sizeof(Dtype) == sizeof(double)) {
    tolerance.abs = 1e-10;
    tolerance.rel = 1e-9;
  }
  return tolerance;
}

/// For values that are sums over thousands of values (parameter gradients of element-wise
/// layers, reductions): the GPU sums in another order (a tree) than the CPU (in sequence), and
/// float rounding differences grow with the length of the sum, beyond the default absolute
/// floor near zero; hence 1e-4 in float. double keeps GpuDefaultTolerance.
template <typename Dtype>
GpuTolerance GpuSumTolerance() {
  GpuTolerance tolerance = GpuDefaultTolerance<Dtype>();
  if (sizeof(Dtype) == sizeof(float)) tolerance.abs = 1e-4;
  return tolerance;
}

/// For sums of hundreds to thousands of products (convolution and InnerProduct outputs, and above
/// all their weight and bias gradients, which sum over every image and output position): cuBLAS
/// and cuDNN block and order these sums differently from OpenBLAS and from the CPU path's
/// chunked, transposed accumulation, and float rounding differences grow with the length of the
/// sum and with cancellation (a near-zero sum of terms of size ~1); hence 1e-3 in float. double
/// keeps GpuDefaultTolerance.
template <typename Dtype>
GpuTolerance GpuLongSumTolerance() {
  GpuTolerance tolerance = GpuDefaultTolerance<Dtype>();
  if (sizeof(Dtype) == sizeof(float)) tolerance.abs = 1e-3;
  return tolerance;
}

/// One layer configuration to compare.
template <typename Dtype>
struct GpuLayerCase {
  std::string layer;                            // the LayerParameter, as prototxt text
  std::vector<std::vector<int>> bottom_shapes;  // one per bottom
  /// Fills the bottoms; the default draws N(0, 1) values.
  std::function<void(const Blobs<Dtype>&)> fill;
  /// Which bottoms get a gradient; empty: all of them.
  std::vector<bool> propagate_down;
  /// Whether to run Backward at all (layers without a backward pass set false).
  bool backward = true;
  GpuTolerance tolerance;
};

/// The case of the layer `layer` (prototxt text) on bottoms of `shapes`, within `tolerance`; the
/// other fields keep their defaults.
template <typename Dtype>
GpuLayerCase<Dtype> MakeGpuCase(const std::string& layer, std::vector<std::vector<int>> shapes,
                                const GpuTolerance& tolerance = GpuDefaultTolerance<Dtype>()) {
  GpuLayerCase<Dtype> test_case;
  test_case.layer = layer;
  test_case.bottom_shapes = std::move(shapes);
  test_case.tolerance = tolerance;
  return test_case;
}

/// A Convolution or Deconvolution layer (`type`) on `engine` (CAFFE, CUDNN, ...) with
/// `params` (convolution_param fields), Gaussian weights and a Gaussian bias (or none), between
/// the blobs `blobs` names.
inline std::string ConvolutionLayerText(const std::string& type, const std::string& engine,
                                        const std::string& params, bool bias = true,
                                        const std::string& blobs = "bottom: 'x' top: 'y'") {
  std::string text = "name: 'conv' type: '" + type + "' " + blobs + " convolution_param { " +
                     params + " engine: " + engine + " weight_filler { type: 'gaussian' std: 0.3 }";
  text += bias ? " bias_filler { type: 'gaussian' } }" : " bias_term: false }";
  return text;
}

// Inputs that the layers' cases share (each layer's cases are in its own test file).

/// Bottom shapes of the element-wise layers' cases. 1326 values: three 512-thread blocks, the
/// last one partial. 22755 values: 45 blocks.
inline const std::vector<int> kGpuCheckShape = {2, 3, 17, 13};
inline const std::vector<int> kGpuCheckLargeShape = {3, 5, 41, 37};

/// A GpuLayerCase::fill: every bottom U(low, high), a different seed per bottom.
template <typename Dtype>
std::function<void(const Blobs<Dtype>&)> UniformFill(double low, double high) {
  return [low, high](const Blobs<Dtype>& bottoms) {
    for (size_t i = 0; i < bottoms.size(); ++i) {
      FillUniform<Dtype>(bottoms[i], 3000 + i, Dtype(low), Dtype(high));
    }
  };
}

/// Integer labels in [0, num_classes), in a pattern that reaches every class; with ignore_every
/// > 0, every ignore_every-th label is ignore_value instead.
template <typename Dtype>
void FillLabels(Blob<Dtype>* labels, int num_classes, int ignore_every = 0, int ignore_value = -1) {
  Dtype* data = labels->mutable_cpu_data();
  for (int i = 0; i < labels->count(); ++i) {
    data[i] = Dtype((i * 7 + i / 3) % num_classes);
    if (ignore_every > 0 && i % ignore_every == 0) data[i] = Dtype(ignore_value);
  }
}

/// 0/1 values (every third one 0), e.g. similarity labels, selectors, sequence indicators.
template <typename Dtype>
void FillZeroOne(Blob<Dtype>* blob) {
  Dtype* data = blob->mutable_cpu_data();
  for (int i = 0; i < blob->count(); ++i) data[i] = Dtype(i % 3 == 1 ? 0 : 1);
}

namespace gpu_check_detail {

template <typename Dtype>
void ExpectClose(const std::string& what, int count, const Dtype* cpu, const Dtype* gpu,
                 const GpuTolerance& tolerance) {
  int reported = 0;
  for (int i = 0; i < count; ++i) {
    const double a = cpu[i], b = gpu[i];
    const double allowed = tolerance.abs + tolerance.rel * std::max(std::fabs(a), std::fabs(b));
    if (!(std::fabs(a - b) <= allowed)) {
      ADD_FAILURE() << what << "[" << i << "]: CPU " << a << ", GPU " << b << " (allowed "
                    << allowed << ")";
      if (++reported == 5) return;  // the first few say enough
    }
  }
}

template <typename Dtype>
std::vector<std::unique_ptr<Blob<Dtype>>> MakeBlobs(const std::vector<std::vector<int>>& shapes) {
  std::vector<std::unique_ptr<Blob<Dtype>>> blobs;
  for (const std::vector<int>& shape : shapes) {
    blobs.push_back(std::make_unique<Blob<Dtype>>(shape));
  }
  return blobs;
}

template <typename Dtype>
Blobs<Dtype> Pointers(const std::vector<std::unique_ptr<Blob<Dtype>>>& blobs) {
  Blobs<Dtype> pointers;
  for (const auto& blob : blobs) pointers.push_back(blob.get());
  return pointers;
}

/// Compares the diffs of the bottoms that `propagate_down` asks for.
template <typename Dtype>
void ExpectBottomDiffsClose(const std::string& name,
                            const std::vector<std::unique_ptr<Blob<Dtype>>>& cpu_bottom,
                            const std::vector<std::unique_ptr<Blob<Dtype>>>& gpu_bottom,
                            const std::vector<bool>& propagate_down,
                            const GpuTolerance& tolerance) {
  for (size_t i = 0; i < cpu_bottom.size(); ++i) {
    if (!propagate_down[i]) continue;
    ExpectClose(name + " bottom " + std::to_string(i) + " diff", cpu_bottom[i]->count(),
                cpu_bottom[i]->cpu_diff(), gpu_bottom[i]->cpu_diff(), tolerance);
  }
}

/// Compares the learned blobs of the two layers (as many as `cpu_layer` has), and with
/// `diffs` also their diffs where the layer propagates down to them.
template <typename Dtype>
void ExpectParamsClose(const std::string& name, Layer<Dtype>& cpu_layer, Layer<Dtype>& gpu_layer,
                       bool diffs, const GpuTolerance& tolerance) {
  for (size_t i = 0; i < cpu_layer.blobs().size(); ++i) {
    const Blob<Dtype>& cpu_param = *cpu_layer.blobs()[i];
    const Blob<Dtype>& gpu_param = *gpu_layer.blobs()[i];
    const std::string param_name = name + " param " + std::to_string(i);
    ExpectClose(param_name + " data", cpu_param.count(), cpu_param.cpu_data(), gpu_param.cpu_data(),
                tolerance);
    if (diffs && cpu_layer.param_propagate_down(i)) {
      ExpectClose(param_name + " diff", cpu_param.count(), cpu_param.cpu_diff(),
                  gpu_param.cpu_diff(), tolerance);
    }
  }
}

/// The case's bottoms, filled by its `fill` or else with N(0, 1) values (a seed per bottom).
template <typename Dtype>
std::vector<std::unique_ptr<Blob<Dtype>>> MakeInputs(const GpuLayerCase<Dtype>& test_case) {
  auto inputs = MakeBlobs<Dtype>(test_case.bottom_shapes);
  if (test_case.fill) {
    test_case.fill(Pointers(inputs));
  } else {
    for (size_t i = 0; i < inputs.size(); ++i) FillGaussian(inputs[i].get(), 1000 + i);
  }
  return inputs;
}

/// Copies of `layer`'s learned blobs (data only).
template <typename Dtype>
std::vector<std::unique_ptr<Blob<Dtype>>> CopyParams(Layer<Dtype>& layer) {
  std::vector<std::unique_ptr<Blob<Dtype>>> params;
  for (const auto& blob : layer.blobs()) {
    params.push_back(std::make_unique<Blob<Dtype>>());
    params.back()->CopyFrom(*blob, false, true);
  }
  return params;
}

}  // namespace gpu_check_detail

/// Runs `test_case` on the CPU and on the GPU and compares everything the layer produced.
template <typename Dtype>
void ExpectGpuMatchesCpu(const GpuLayerCase<Dtype>& test_case) {
  using gpu_check_detail::ExpectClose;
  using gpu_check_detail::MakeBlobs;
  using gpu_check_detail::Pointers;
  const LayerParameter param = ParseLayerParam(test_case.layer);
  const std::string name = param.type() + " '" + param.name() + "'";

  // Inputs, shared by both runs through copies.
  const auto inputs = gpu_check_detail::MakeInputs(test_case);

  struct Run {
    std::shared_ptr<Layer<Dtype>> layer;
    std::vector<std::unique_ptr<Blob<Dtype>>> bottom, top;
  };
  auto make_run = [&](Caffe::Brew mode) {
    Caffe::set_mode(mode);
    Run run;
    run.bottom = MakeBlobs<Dtype>(test_case.bottom_shapes);
    for (size_t i = 0; i < inputs.size(); ++i) run.bottom[i]->CopyFrom(*inputs[i]);
    run.layer = LayerRegistry<Dtype>::CreateLayer(param);
    return run;
  };

  Run cpu = make_run(Caffe::CPU);
  const int num_tops = std::max(param.top_size(), 1);
  for (int i = 0; i < num_tops; ++i) cpu.top.push_back(std::make_unique<Blob<Dtype>>());
  cpu.layer->SetUp(Pointers(cpu.bottom), Pointers(cpu.top));
  // Learned blobs as set up on the CPU, before any pass changes them (BatchNorm's statistics).
  const auto params = gpu_check_detail::CopyParams(*cpu.layer);

  Run gpu = make_run(Caffe::GPU);
  for (int i = 0; i < num_tops; ++i) gpu.top.push_back(std::make_unique<Blob<Dtype>>());
  gpu.layer->SetUp(Pointers(gpu.bottom), Pointers(gpu.top));
  ASSERT_EQ(gpu.layer->blobs().size(), params.size()) << name;
  for (size_t i = 0; i < params.size(); ++i) gpu.layer->blobs()[i]->CopyFrom(*params[i]);

  std::vector<bool> propagate_down = test_case.propagate_down;
  if (propagate_down.empty()) propagate_down.assign(inputs.size(), true);
  Caffe::set_mode(Caffe::CPU);
  cpu.layer->Forward(Pointers(cpu.bottom), Pointers(cpu.top));
  Caffe::set_mode(Caffe::GPU);
  gpu.layer->Forward(Pointers(gpu.bottom), Pointers(gpu.top));
  Caffe::set_mode(Caffe::CPU);
  ASSERT_EQ(cpu.top.size(), gpu.top.size()) << name;
  for (size_t t = 0; t < cpu.top.size(); ++t) {
    ASSERT_EQ(cpu.top[t]->shape(), gpu.top[t]->shape()) << name << " top " << t;
    ExpectClose(name + " top " + std::to_string(t), cpu.top[t]->count(), cpu.top[t]->cpu_data(),
                gpu.top[t]->cpu_data(), test_case.tolerance);
  }

  if (test_case.backward) {
    // The same top gradients for both; a loss top keeps its loss weight, which Backward reads.
    for (size_t t = 0; t < cpu.top.size(); ++t) {
      if (cpu.layer->loss(t) != 0) continue;
      Blob<Dtype> gradient(cpu.top[t]->shape());
      FillGaussian(&gradient, 2000 + t);
      caffe_copy(gradient.count(), gradient.cpu_data(), cpu.top[t]->mutable_cpu_diff());
      caffe_copy(gradient.count(), gradient.cpu_data(), gpu.top[t]->mutable_cpu_diff());
    }
    Caffe::set_mode(Caffe::CPU);
    cpu.layer->Backward(Pointers(cpu.top), propagate_down, Pointers(cpu.bottom));
    Caffe::set_mode(Caffe::GPU);
    gpu.layer->Backward(Pointers(gpu.top), propagate_down, Pointers(gpu.bottom));
    Caffe::set_mode(Caffe::CPU);
    gpu_check_detail::ExpectBottomDiffsClose(name, cpu.bottom, gpu.bottom, propagate_down,
                                             test_case.tolerance);
  }
  // The learned blobs' data too, which a pass may update (BatchNorm's running statistics).
  gpu_check_detail::ExpectParamsClose(name, *cpu.layer, *gpu.layer, test_case.backward,
                                      test_case.tolerance);
}

/// Runs `test_case` in place on the GPU (top[0] is bottom[0]; further bottoms stay separate) and
/// out of place on the CPU (top[0] a blob of its own: the reference path), with the same inputs,
/// learned blobs and top gradient, `passes` times in a row (restoring the input before each
/// forward, which an in-place pass overwrites), and compares the output, every bottom gradient
/// asked for, and the learned blobs and their diffs, which accumulate over the passes. For layers
/// with one top.
template <typename Dtype>
void ExpectInPlaceGpuMatchesCpu(const GpuLayerCase<Dtype>& test_case, int passes = 2) {
  using gpu_check_detail::ExpectClose;
  using gpu_check_detail::MakeBlobs;
  using gpu_check_detail::Pointers;
  const LayerParameter param = ParseLayerParam(test_case.layer);
  const std::string name = param.type() + " '" + param.name() + "' in place";

  const auto inputs = gpu_check_detail::MakeInputs(test_case);
  Blob<Dtype> top_gradient(test_case.bottom_shapes[0]);
  FillGaussian(&top_gradient, 2000);
  std::vector<bool> propagate_down = test_case.propagate_down;
  if (propagate_down.empty()) propagate_down.assign(inputs.size(), true);

  struct Run {
    std::shared_ptr<Layer<Dtype>> layer;
    std::vector<std::unique_ptr<Blob<Dtype>>> bottom;
    bool in_place = false;
    Blob<Dtype> separate_top;  // top[0] where not in place
    Blob<Dtype>* top() { return in_place ? bottom[0].get() : &separate_top; }
  };
  std::vector<std::unique_ptr<Blob<Dtype>>> initial_params;  // as the CPU layer set them up
  // Fills `run` (not returned: a Blob cannot be moved) for `mode`, in place on the GPU.
  auto run_in = [&](Caffe::Brew mode, Run* run) {
    Caffe::set_mode(mode);
    run->in_place = mode == Caffe::GPU;
    run->bottom = MakeBlobs<Dtype>(test_case.bottom_shapes);
    for (size_t i = 0; i < inputs.size(); ++i) run->bottom[i]->CopyFrom(*inputs[i]);
    const Blobs<Dtype> bottom = Pointers(run->bottom);
    const Blobs<Dtype> top{run->top()};
    run->layer = LayerRegistry<Dtype>::CreateLayer(param);
    run->layer->SetUp(bottom, top);
    if (mode == Caffe::CPU) {
      initial_params = gpu_check_detail::CopyParams(*run->layer);
    } else {
      ASSERT_EQ(run->layer->blobs().size(), initial_params.size()) << name;
      for (size_t i = 0; i < initial_params.size(); ++i) {
        run->layer->blobs()[i]->CopyFrom(*initial_params[i]);
      }
    }
    const int count = bottom[0]->count();
    for (int pass = 0; pass < passes; ++pass) {
      // In place, the previous pass overwrote the input with its output.
      caffe_copy(count, inputs[0]->cpu_data(), bottom[0]->mutable_cpu_data());
      run->layer->Forward(bottom, top);
      if (!test_case.backward) continue;
      caffe_copy(count, top_gradient.cpu_data(), top[0]->mutable_cpu_diff());
      run->layer->Backward(top, propagate_down, bottom);
    }
  };
  Run cpu, gpu;
  run_in(Caffe::CPU, &cpu);
  run_in(Caffe::GPU, &gpu);
  Caffe::set_mode(Caffe::CPU);
  if (gpu.layer->blobs().size() != initial_params.size()) return;  // reported above

  ASSERT_EQ(cpu.top()->shape(), gpu.top()->shape()) << name;
  ExpectClose(name + " top", cpu.top()->count(), cpu.top()->cpu_data(), gpu.top()->cpu_data(),
              test_case.tolerance);
  if (test_case.backward) {
    gpu_check_detail::ExpectBottomDiffsClose(name, cpu.bottom, gpu.bottom, propagate_down,
                                             test_case.tolerance);
  }
  gpu_check_detail::ExpectParamsClose(name, *cpu.layer, *gpu.layer, test_case.backward,
                                      test_case.tolerance);
}

/// Base fixture: skips where no GPU can be used (a CPU-only build, or no device).
template <typename Dtype>
class GpuLayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
    Caffe::set_random_seed(1701);
  }
  void TearDown() override { Caffe::set_mode(Caffe::CPU); }
};

}  // namespace caffe

#endif  // CAFFE_TEST_GPU_LAYER_CHECK_HPP_
