// The order in which backward completes the gradients of a net's learnable params, for the
// solvers that reduce gradients while backward still runs (DDL's buckets, pycaffe's NCCL).
#ifndef CAFFE_PARALLEL_GRADIENT_ORDER_HPP_
#define CAFFE_PARALLEL_GRADIENT_ORDER_HPP_

#include <climits>
#include <vector>

#include "caffe/net.hpp"

namespace caffe {

struct GradientOrder {
  /// Per learnable param (net.learnable_params()'s order): the layer after whose backward its
  /// gradient is complete, the lowest layer that uses it (a shared param collects gradient from
  /// every user); INT_MAX for a param no layer uses.
  std::vector<int> ready;
  /// The learnable params' indices in the order backward completes them: the highest ready
  /// layer first (unused params before all), ties in learnable order.
  std::vector<int> order;
};

template <typename Dtype>
GradientOrder BackwardGradientOrder(const Net<Dtype>& net);

}  // namespace caffe

#endif  // CAFFE_PARALLEL_GRADIENT_ORDER_HPP_
