// The emulated cuDNN's convolution descriptor (padding, strides, dilation, mode, compute type,
// groups, math type), the output size it gives, and the plan every convolution call checks its
// descriptors into.
#include <cudnn.h>

#include <algorithm>
#include <vector>

#include "cudnn/convolution.hpp"
#include "cudnn/internal.hpp"

namespace caffe_emu {
namespace {

// A filter is packed: NCHW is (K, C, spatial...) row-major, NHWC keeps C innermost.
Layout FilterLayout(cudnnFilterDescriptor_t filter) {
  Layout layout{filter->type, filter->dims, std::vector<long>(filter->dims.size())};
  std::vector<int> order(filter->dims.size());  // axes from outermost to innermost
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  if (filter->format == CUDNN_TENSOR_NHWC)
    std::rotate(order.begin() + 1, order.begin() + 2, order.end());
  long stride = 1;
  for (int i = static_cast<int>(order.size()) - 1; i >= 0; --i) {
    layout.strides[order[i]] = stride;
    stride *= filter->dims[order[i]];
  }
  return layout;
}

// y's dims for x and w (cudnnGetConvolutionNdForwardOutputDim), after cuDNN's checks of the
// three descriptors.
cudnnStatus_t ForwardOutputDims(const char* call, cudnnConvolutionDescriptor_t conv,
                                cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                                std::vector<int>* dims) {
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "the convolution descriptor", conv && conv->set));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "x's descriptor", x && x->set));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "the filter descriptor", w && w->set));
  const int rank = static_cast<int>(x->dims.size());
  if (static_cast<int>(w->dims.size()) != rank) {
    return Reject(kBadParam, call, "x is %s but the filter is %s: not the same number of dims",
                  Dims(x->dims).c_str(), Dims(w->dims).c_str());
  }
  if (static_cast<int>(conv->pad.size()) != rank - 2) {
    return Reject(kBadParam, call, "the convolution has %zu spatial axes but x is %s",
                  conv->pad.size(), Dims(x->dims).c_str());
  }
  if (x->type != w->type) {
    return Reject(kBadParam, call, "x is %s but the filter is %s", TypeName(x->type),
                  TypeName(w->type));
  }
  if (w->dims[1] * conv->groups != x->dims[1]) {
    return Reject(kBadParam, call,
                  "the filter has %d input channels x %d groups = %d, but x has %d channels",
                  w->dims[1], conv->groups, w->dims[1] * conv->groups, x->dims[1]);
  }
  if (w->dims[0] % conv->groups != 0) {
    return Reject(kBadParam, call, "%d filters do not divide into %d groups", w->dims[0],
                  conv->groups);
  }
  *dims = {x->dims[0], w->dims[0]};
  for (int axis = 0; axis < rank - 2; ++axis) {
    const int extent = (w->dims[2 + axis] - 1) * conv->dilation[axis] + 1;
    const int padded = x->dims[2 + axis] + 2 * conv->pad[axis];
    if (extent > padded) {
      return Reject(kBadParam, call,
                    "spatial axis %d: the dilated filter spans %d, more than the padded input's %d",
                    axis, extent, padded);
    }
    dims->push_back(1 + (padded - extent) / conv->stride[axis]);
  }
  return kSuccess;
}

}  // namespace

cudnnStatus_t PlanConvolution(const char* call, cudnnTensorDescriptor_t x,
                              cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
                              cudnnTensorDescriptor_t y, ConvPlan* plan) {
  std::vector<int> y_dims;
  CAFFE_EMU_RETURN_IF_FAILED(ForwardOutputDims(call, conv, x, w, &y_dims));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "y's descriptor", y && y->set));
  const int rank = static_cast<int>(x->dims.size());
  if (y->dims.size() != x->dims.size() || y->type != x->type) {
    return Reject(kBadParam, call, "x is %s %s but y is %s %s", TypeName(x->type),
                  Dims(x->dims).c_str(), TypeName(y->type), Dims(y->dims).c_str());
  }
  if (rank != 4 && rank != 5) {
    return Reject(kNotSupported, call, "convolutions are 2-D or 3-D; x is %s",
                  Dims(x->dims).c_str());
  }
  if (conv->compute_type != x->type) {
    return Reject(kNotSupported, call, "%s tensors need compute type %s, not %s", TypeName(x->type),
                  TypeName(x->type), TypeName(conv->compute_type));
  }
  if (y->dims[0] != y_dims[0] || y->dims[1] != y_dims[1]) {
    return Reject(kBadParam, call, "y is %s but x and the filter give %s", Dims(y->dims).c_str(),
                  Dims(y_dims).c_str());
  }
  if (y->dims != y_dims) {  // cuDNN documents NOT_SUPPORTED for spatial sizes
    return Reject(kNotSupported, call, "y is %s but cudnnGetConvolutionNdForwardOutputDim gives %s",
                  Dims(y->dims).c_str(), Dims(y_dims).c_str());
  }
  plan->x = TensorLayout(x);
  plan->w = FilterLayout(w);
  plan->y = TensorLayout(y);
  plan->spatial_axes = rank - 2;
  plan->num = x->dims[0];
  plan->x_channels = x->dims[1];
  plan->y_channels = y->dims[1];
  plan->groups = conv->groups;
  const int lead = 5 - rank;  // unit axes in front of a 2-D convolution's two
  for (int axis = 0; axis < 3; ++axis) {
    const int given = axis - lead;  // the descriptors' spatial axis
    const bool unit = given < 0;
    plan->in[axis] = unit ? 1 : x->dims[2 + given];
    plan->out[axis] = unit ? 1 : y->dims[2 + given];
    plan->kernel[axis] = unit ? 1 : w->dims[2 + given];
    plan->pad[axis] = unit ? 0 : conv->pad[given];
    plan->stride[axis] = unit ? 1 : conv->stride[given];
    plan->dilation[axis] = unit ? 1 : conv->dilation[given];
  }
  plan->flip = conv->mode == CUDNN_CONVOLUTION;
  plan->tf32 = x->type == CUDNN_DATA_FLOAT && conv->math != CUDNN_FMA_MATH;
  return kSuccess;
}

}  // namespace caffe_emu

using namespace caffe_emu;  // NOLINT: the C API below only forwards to it

cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* convDesc) {
  return Create("cudnnCreateConvolutionDescriptor", convDesc);
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc) {
  delete convDesc;
  return kSuccess;
}

cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t convDesc,
                                              int arrayLength, const int padA[],
                                              const int filterStrideA[], const int dilationA[],
                                              cudnnConvolutionMode_t mode,
                                              cudnnDataType_t computeType) {
  const char* call = "cudnnSetConvolutionNdDescriptor";
  if (convDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  if (arrayLength < 1) return Reject(kBadParam, call, "arrayLength is %d", arrayLength);
  if (arrayLength > CUDNN_DIM_MAX - 2) {
    return Reject(kNotSupported, call, "arrayLength is %d; must be <= %d", arrayLength,
                  CUDNN_DIM_MAX - 2);
  }
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "padA", arrayLength, padA, 0));
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "filterStrideA", arrayLength, filterStrideA, 1));
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "dilationA", arrayLength, dilationA, 1));
  if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION) {
    return Reject(kBadParam, call, "mode %d is not a cudnnConvolutionMode_t", int(mode));
  }
  CAFFE_EMU_RETURN_IF_FAILED(CheckDataType(call, computeType));
  convDesc->set = true;
  convDesc->pad.assign(padA, padA + arrayLength);
  convDesc->stride.assign(filterStrideA, filterStrideA + arrayLength);
  convDesc->dilation.assign(dilationA, dilationA + arrayLength);
  convDesc->mode = mode;
  convDesc->compute_type = computeType;
  return kSuccess;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int groupCount) {
  const char* call = "cudnnSetConvolutionGroupCount";
  if (convDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  if (groupCount < 1) return Reject(kBadParam, call, "groupCount is %d; must be >= 1", groupCount);
  convDesc->groups = groupCount;
  return kSuccess;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc,
                                          cudnnMathType_t mathType) {
  const char* call = "cudnnSetConvolutionMathType";
  if (convDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  if (mathType < CUDNN_DEFAULT_MATH || mathType > CUDNN_FMA_MATH) {
    return Reject(kBadParam, call, "math type %d is not a cudnnMathType_t", int(mathType));
  }
  convDesc->math = mathType;
  return kSuccess;
}

cudnnStatus_t cudnnGetConvolutionNdForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                                    const cudnnTensorDescriptor_t inputTensorDesc,
                                                    const cudnnFilterDescriptor_t filterDesc,
                                                    int nbDims, int tensorOuputDimA[]) {
  const char* call = "cudnnGetConvolutionNdForwardOutputDim";
  std::vector<int> dims;
  CAFFE_EMU_RETURN_IF_FAILED(ForwardOutputDims(call, convDesc, inputTensorDesc, filterDesc, &dims));
  if (nbDims != static_cast<int>(dims.size()) || tensorOuputDimA == nullptr) {
    return Reject(kBadParam, call, "nbDims is %d but x has %zu dims", nbDims, dims.size());
  }
  std::copy(dims.begin(), dims.end(), tensorOuputDimA);
  return kSuccess;
}
