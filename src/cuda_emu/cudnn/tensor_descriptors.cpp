// The emulated cuDNN's tensor and filter descriptors: what they were set to, checked as cuDNN
// checks it.
#include <cudnn.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "cudnn/internal.hpp"

using namespace caffe_emu;  // NOLINT: the C API below only forwards to it

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* tensorDesc) {
  return Create("cudnnCreateTensorDescriptor", tensorDesc);
}
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensorDesc) {
  delete tensorDesc;
  return kSuccess;
}

cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t tensorDesc,
                                         cudnnDataType_t dataType, int nbDims, const int dimA[],
                                         const int strideA[]) {
  const char* call = "cudnnSetTensorNdDescriptor";
  if (tensorDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  CAFFE_EMU_RETURN_IF_FAILED(CheckDataType(call, dataType));
  if (nbDims < 4 || nbDims > CUDNN_DIM_MAX) {
    return Reject(kNotSupported, call, "nbDims is %d; must be in [4, %d]", nbDims, CUDNN_DIM_MAX);
  }
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "dimA", nbDims, dimA, 1));
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "strideA", nbDims, strideA, 1));
  const std::vector<int> dims(dimA, dimA + nbDims);
  if (Product(dims) > std::numeric_limits<int>::max()) {
    return Reject(kNotSupported, call, "%s exceeds 2^31 - 1 elements", Dims(dims).c_str());
  }
  tensorDesc->set = true;
  tensorDesc->type = dataType;
  tensorDesc->dims = dims;
  tensorDesc->strides.assign(strideA, strideA + nbDims);
  return kSuccess;
}

cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t tensorDesc,
                                         int nbDimsRequested, cudnnDataType_t* dataType,
                                         int* nbDims, int dimA[], int strideA[]) {
  const char* call = "cudnnGetTensorNdDescriptor";
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "the descriptor", tensorDesc && tensorDesc->set));
  const int rank = static_cast<int>(tensorDesc->dims.size());
  const int copied = std::min(std::max(nbDimsRequested, 0), rank);
  if (dataType == nullptr || nbDims == nullptr || nbDimsRequested < 0 ||
      (copied > 0 && (dimA == nullptr || strideA == nullptr))) {
    return Reject(kBadParam, call, "bad output pointers or nbDimsRequested %d", nbDimsRequested);
  }
  *dataType = tensorDesc->type;
  *nbDims = rank;
  std::copy(tensorDesc->dims.begin(), tensorDesc->dims.begin() + copied, dimA);
  std::copy(tensorDesc->strides.begin(), tensorDesc->strides.begin() + copied, strideA);
  return kSuccess;
}

cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* filterDesc) {
  return Create("cudnnCreateFilterDescriptor", filterDesc);
}
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t filterDesc) {
  delete filterDesc;
  return kSuccess;
}

cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t filterDesc,
                                         cudnnDataType_t dataType, cudnnTensorFormat_t format,
                                         int nbDims, const int filterDimA[]) {
  const char* call = "cudnnSetFilterNdDescriptor";
  if (filterDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  CAFFE_EMU_RETURN_IF_FAILED(CheckDataType(call, dataType));
  if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC) {
    return Reject(kBadParam, call, "format %d is not NCHW or NHWC", int(format));
  }
  // "Due to historical reasons, the minimum number of dimensions in the filter descriptor is 3."
  if (nbDims < 3) return Reject(kBadParam, call, "nbDims is %d; must be >= 3", nbDims);
  if (nbDims > CUDNN_DIM_MAX) {
    return Reject(kNotSupported, call, "nbDims is %d; must be <= %d", nbDims, CUDNN_DIM_MAX);
  }
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "filterDimA", nbDims, filterDimA, 1));
  filterDesc->set = true;
  filterDesc->type = dataType;
  filterDesc->format = format;
  filterDesc->dims.assign(filterDimA, filterDimA + nbDims);
  return kSuccess;
}
