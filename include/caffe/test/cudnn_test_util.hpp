// Helpers shared by the tests of the cuDNN engines (src/caffe/test/layers/test_cudnn_*_layer.cpp
// and src/caffe/test/util/test_cudnn.cpp), beyond the GPU-against-CPU harness of
// gpu_layer_check.hpp: a tolerance for cuDNN's transcendental functions, prototxt for layers that
// ask for an engine, and checks of which class a layer creator builds. Everything here compiles
// in every build: without cuDNN the creators build Caffe's layers (IsCuDNNLayer is then always
// false), and without a GPU the tests that use a GpuLayerTest fixture skip.
#ifndef CAFFE_TEST_CUDNN_TEST_UTIL_HPP_
#define CAFFE_TEST_CUDNN_TEST_UTIL_HPP_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/layer.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/layers/cudnn/cudnn.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/test_caffe_main.hpp"
#ifdef USE_CUDNN
#include "caffe/layers/cudnn/cudnn_convolution_layer.hpp"
#include "caffe/layers/cudnn/cudnn_deconvolution_layer.hpp"
#include "caffe/layers/cudnn/cudnn_lrn_layer.hpp"
#include "caffe/layers/cudnn/cudnn_pooling_layer.hpp"
#include "caffe/layers/cudnn/cudnn_relu_layer.hpp"
#include "caffe/layers/cudnn/cudnn_sigmoid_layer.hpp"
#include "caffe/layers/cudnn/cudnn_softmax_layer.hpp"
#include "caffe/layers/cudnn/cudnn_tanh_layer.hpp"
#endif

namespace caffe {

/// cuDNN's float transcendental functions (exp, pow) may differ from the CPU's by a few ulps.
template <typename Dtype>
GpuTolerance CuDNNTranscendentalTolerance() {
  GpuTolerance tolerance = GpuDefaultTolerance<Dtype>();
  if (sizeof(Dtype) == sizeof(float)) {
    tolerance.abs = 2e-5;
    tolerance.rel = 2e-4;
  }
  return tolerance;
}

/// The layer types that have a cuDNN engine.
inline const std::vector<std::string>& CuDNNEngineLayerTypes() {
  static const std::vector<std::string> types = {
      "Convolution", "Deconvolution", "Pooling", "LRN", "ReLU", "Sigmoid", "TanH", "Softmax"};
  return types;
}

/// A small layer of `type` (one of CuDNNEngineLayerTypes()) asking for `engine` ("DEFAULT",
/// "CAFFE", "CUDNN") in its own parameter message.
inline std::string EngineLayerText(const std::string& type, const std::string& engine) {
  const std::string e = " engine: " + engine + " ";
  if (type == "Convolution" || type == "Deconvolution") {
    return "name: 'c' type: '" + type + "' convolution_param { num_output: 2 kernel_size: 3" + e +
           "}";
  }
  if (type == "Pooling") {
    return "name: 'p' type: 'Pooling' pooling_param { pool: MAX kernel_size: 2" + e + "}";
  }
  if (type == "LRN") return "name: 'l' type: 'LRN' lrn_param { local_size: 3" + e + "}";
  if (type == "ReLU") return "name: 'r' type: 'ReLU' relu_param {" + e + "}";
  if (type == "Sigmoid") return "name: 's' type: 'Sigmoid' sigmoid_param {" + e + "}";
  if (type == "TanH") return "name: 't' type: 'TanH' tanh_param {" + e + "}";
  if (type == "Softmax") return "name: 'm' type: 'Softmax' softmax_param {" + e + "}";
  ADD_FAILURE() << "no cuDNN engine for layer type " << type;
  return "";
}

/// Whether `layer` is one of the cuDNN classes (always false without cuDNN).
template <typename Dtype>
bool IsCuDNNLayer(Layer<Dtype>* layer) {
#ifdef USE_CUDNN
  return dynamic_cast<CuDNNConvolutionLayer<Dtype>*>(layer) != nullptr ||
         dynamic_cast<CuDNNDeconvolutionLayer<Dtype>*>(layer) != nullptr ||
         dynamic_cast<CuDNNPoolingLayer<Dtype>*>(layer) != nullptr ||
         dynamic_cast<CuDNNLRNLayer<Dtype>*>(layer) != nullptr ||
         dynamic_cast<CuDNNReLULayer<Dtype>*>(layer) != nullptr ||
         dynamic_cast<CuDNNSigmoidLayer<Dtype>*>(layer) != nullptr ||
         dynamic_cast<CuDNNTanHLayer<Dtype>*>(layer) != nullptr ||
         dynamic_cast<CuDNNSoftmaxLayer<Dtype>*>(layer) != nullptr;
#else
  (void)layer;
  return false;
#endif
}

/// In CPU mode the creator of `type` builds Caffe's layer whatever engine is asked.
template <typename Dtype>
void ExpectCpuModeNeverBuildsCuDNN(const std::string& type) {
  Caffe::set_mode(Caffe::CPU);
  for (const std::string engine : {"DEFAULT", "CAFFE", "CUDNN"}) {
    const std::string text = EngineLayerText(type, engine);
    const LayerParameter param = ParseLayerParam(text);
    std::shared_ptr<Layer<Dtype>> layer = LayerRegistry<Dtype>::CreateLayer(param);
    EXPECT_FALSE(IsCuDNNLayer(layer.get())) << text;
    EXPECT_EQ(param.type(), layer->type()) << text;
  }
}

/// In GPU mode the creator of `type` builds the cuDNN layer for DEFAULT and CUDNN where this
/// build has cuDNN, and Caffe's layer for CAFFE (and for everything without cuDNN).
template <typename Dtype>
void ExpectGpuModeBuildsCuDNNUnlessCaffeIsAsked(const std::string& type) {
  Caffe::set_mode(Caffe::GPU);
  for (const std::string engine : {"DEFAULT", "CAFFE", "CUDNN"}) {
    const std::string text = EngineLayerText(type, engine);
    const LayerParameter param = ParseLayerParam(text);
    std::shared_ptr<Layer<Dtype>> layer = LayerRegistry<Dtype>::CreateLayer(param);
    EXPECT_EQ(param.type(), layer->type()) << text;
    EXPECT_EQ(CuDNNBuilt() && engine != "CAFFE", IsCuDNNLayer(layer.get())) << text;
  }
}

/// In GPU mode the creator builds Caffe's layer for `text` although it asks for engine CUDNN
/// (a configuration cuDNN cannot compute as Caffe does).
template <typename Dtype>
void ExpectGpuModeKeepsCaffe(const std::string& text) {
  Caffe::set_mode(Caffe::GPU);
  std::shared_ptr<Layer<Dtype>> layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam(text));
  EXPECT_FALSE(IsCuDNNLayer(layer.get())) << text;
}

#ifdef USE_CUDNN

/// In GPU mode the creator of `type` builds a CuDNNClass for engines DEFAULT and CUDNN.
template <template <typename> class CuDNNClass, typename Dtype>
void ExpectGpuModeBuildsCuDNNClass(const std::string& type) {
  Caffe::set_mode(Caffe::GPU);
  for (const std::string engine : {"DEFAULT", "CUDNN"}) {
    const std::string text = EngineLayerText(type, engine);
    std::shared_ptr<Layer<Dtype>> layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam(text));
    EXPECT_NE(dynamic_cast<CuDNNClass<Dtype>*>(layer.get()), nullptr) << text;
  }
}

/// Sets `text` up in GPU mode on a bottom of `shape` and returns the layer.
template <typename Dtype>
std::shared_ptr<Layer<Dtype>> SetUpOnGpu(const std::string& text, const std::vector<int>& shape,
                                         Blob<Dtype>* bottom, Blob<Dtype>* top) {
  Caffe::set_mode(Caffe::GPU);
  bottom->Reshape(shape);
  std::shared_ptr<Layer<Dtype>> layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam(text));
  layer->SetUp({bottom}, {top});
  return layer;
}

/// Whether the layer `text` describes, set up in GPU mode on a bottom of `shape`, runs on cuDNN
/// (CuDNNClass::runs_on_cudnn()); a failure where the creator did not build a CuDNNClass.
template <template <typename> class CuDNNClass, typename Dtype>
bool RunsOnCuDNN(const std::string& text, const std::vector<int>& shape) {
  Blob<Dtype> bottom, top;
  std::shared_ptr<Layer<Dtype>> layer = SetUpOnGpu(text, shape, &bottom, &top);
  auto* cudnn_layer = dynamic_cast<CuDNNClass<Dtype>*>(layer.get());
  if (cudnn_layer == nullptr) {
    ADD_FAILURE() << "not the expected cuDNN layer: " << text;
    return false;
  }
  return cudnn_layer->runs_on_cudnn();
}

#endif  // USE_CUDNN

}  // namespace caffe

#endif  // CAFFE_TEST_CUDNN_TEST_UTIL_HPP_
