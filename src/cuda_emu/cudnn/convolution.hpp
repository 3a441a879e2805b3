// The emulated cuDNN's convolution, what its parts share: the convolution descriptor, the plan a
// call checks its descriptors into, and the passes. The parts: convolution_descriptor.cpp (the
// descriptor, the output size, the plan), convolution_passes.cpp (forward, backward data, filter
// and bias), convolution_algorithms.cpp (the algorithms each pass offers: what each runs, its
// workspace and modelled time) and convolution_algorithm_queries.cpp (the getters and the Find
// calls). Internal to the emulator.
//
// Legend: N images, C channels of x, K filters (channels of y), G groups, x input, y output,
// w filters (K, C / G, spatial...), dx/dy/dw gradients. Tensors are read into row-major (packed)
// arrays of double, whatever their strides, and written back through the strides.
#ifndef CAFFE_CUDA_EMU_CUDNN_CONVOLUTION_HPP_
#define CAFFE_CUDA_EMU_CUDNN_CONVOLUTION_HPP_

#include <cudnn.h>

#include <array>
#include <cstddef>
#include <vector>

#include "cudnn/internal.hpp"

struct cudnnConvolutionStruct {
  bool set = false;
  std::vector<int> pad, stride, dilation;  // one per spatial axis
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  cudnnDataType_t compute_type = CUDNN_DATA_FLOAT;
  int groups = 1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

namespace CAFFE_EMU_HIDDEN caffe_emu {

// A convolution as cuDNN checks it, with every shape in row-major order and 2-D convolutions
// given a leading unit axis, so that the loops always run over three spatial axes.
struct ConvPlan {
  Layout x, w, y;
  int spatial_axes = 0;  // 2 or 3, as given
  int num = 0, x_channels = 0, y_channels = 0, groups = 1;
  int in[3], out[3], kernel[3], pad[3], stride[3], dilation[3];
  bool flip = false;  // CUDNN_CONVOLUTION mirrors the filter; cross-correlation does not
  bool tf32 = false;  // float operands rounded to TF32 (tensor cores)
};

enum class Pass { kForward, kBackwardData, kBackwardFilter };

/// The checks of a convolution's descriptors (x, w, the convolution, y) as cuDNN makes them; the
/// convolution they describe, in `plan` (convolution_descriptor.cpp).
cudnnStatus_t PlanConvolution(const char* call, cudnnTensorDescriptor_t x,
                              cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
                              cudnnTensorDescriptor_t y, ConvPlan* plan);

/// One pass over a convolution's x, w and y (`data`, named `names` as the call names them): the
/// tensor the pass writes (y forward, x backward data, w backward filter) gets, at each tap, the
/// product of the other two, then alpha and beta; first the checks of its descriptors, algorithm
/// and operands (convolution_passes.cpp).
cudnnStatus_t RunConvolutionPass(const char* call, Pass pass, cudnnHandle_t handle, int algo,
                                 cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                                 cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y,
                                 void* workspace, size_t workspace_bytes, const void* alpha,
                                 const void* beta, const std::array<const char*, 3>& names,
                                 const std::array<const void*, 3>& data);

}  // namespace caffe_emu

#endif  // CAFFE_CUDA_EMU_CUDNN_CONVOLUTION_HPP_
