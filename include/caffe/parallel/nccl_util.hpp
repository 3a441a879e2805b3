// Helpers for the code that calls NCCL itself: multi-GPU training in one process
// (parallel/in_process_sync.cpp), pycaffe's NCCL (parallel/nccl_solver_sync.cpp) and DDL's NCCL
// communicator. Include only where USE_NCCL is defined.
#ifndef CAFFE_PARALLEL_NCCL_UTIL_HPP_
#define CAFFE_PARALLEL_NCCL_UTIL_HPP_

#include <nccl.h>

#include "caffe/common.hpp"

/// A failed NCCL call is a caffe::Error naming the call and NCCL's text for the failure.
#define CAFFE_NCCL_CALL(call)                                                         \
  do {                                                                                \
    const ncclResult_t caffe_nccl_status_ = (call);                                   \
    CAFFE_CHECK(caffe_nccl_status_ == ncclSuccess)                                    \
        << "NCCL call failed: " #call ": " << ncclGetErrorString(caffe_nccl_status_); \
  } while (0)

namespace caffe {

/// NCCL's data type for Dtype (float or double).
template <typename Dtype>
inline ncclDataType_t NcclType() {
  static_assert(sizeof(Dtype) == sizeof(float) || sizeof(Dtype) == sizeof(double),
                "NCCL reduces float and double here");
  return sizeof(Dtype) == sizeof(float) ? ncclFloat : ncclDouble;
}

}  // namespace caffe

#endif  // CAFFE_PARALLEL_NCCL_UTIL_HPP_
