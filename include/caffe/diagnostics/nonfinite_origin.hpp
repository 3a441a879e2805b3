// Where a non-finite (NaN or infinite) loss came from: BVLC Caffe prints "loss = nan" and goes
// on, leaving the user to guess which layer, weight or input went wrong. After a forward pass
// whose loss is not finite, FindNonFiniteOrigin reads what the pass left in the net's blobs and
// names the first layer, in forward order, that made a non-finite value the loss depends on out
// of finite inputs: a data layer (the dataset holds NaN or inf), a layer whose weights are no
// longer finite (an earlier update diverged), or a layer whose own arithmetic overflowed or
// failed (with the largest magnitudes it was given, which tell divergence from a log of zero).
//
// It reads the blobs as the whole pass left them, so a blob written in place by several layers
// (a convolution and its ReLU) is seen once, after the last of them; the origin then names the
// layer that made the blob and the in-place layers after it. It runs no layer and changes no
// state, so training can go on after it as BVLC's does.
#ifndef CAFFE_DIAGNOSTICS_NONFINITE_ORIGIN_HPP_
#define CAFFE_DIAGNOSTICS_NONFINITE_ORIGIN_HPP_

#include <string>

#include "caffe/net.hpp"

namespace caffe {

/// What made the first non-finite value on the loss's path.
enum class NonFiniteSource {
  kNone,       // every blob the loss depends on is finite
  kInputData,  // a layer without bottoms (a data or Input layer) gave it
  kWeights,    // a layer whose learned blobs hold non-finite values
  kLayer,      // a layer computed it from finite bottoms and finite weights
};

struct NonFiniteOrigin {
  NonFiniteSource source = NonFiniteSource::kNone;
  int layer = -1;               // the layer that made the blob (-1 with kNone)
  std::string blob;             // that blob's name
  std::string description;      // a clause naming the layer, its type, the blob, the counts
  double largest_input = 0;     // kLayer: the largest magnitude among its bottoms and weights
  Type layer_math = FLOAT;      // kLayer: the layer's forward arithmetic (docs/PRECISION.md)
  bool bf16_gradients = false;  // some layer of the net computes its gradients in bf16
};

/// Reads `net`'s blobs after a forward pass (and any backward) and finds the first layer, in
/// forward order, that made a non-finite value in a blob the net's loss depends on from
/// finite bottoms; kNone where there is none (a loss that overflowed in its sum). With
/// kWeights the description also names the other layers whose weights are not finite.
template <typename Dtype>
NonFiniteOrigin FindNonFiniteOrigin(const Net<Dtype>& net);

/// "where it came from: <description>. <what to try>", for a warning about a non-finite loss.
/// `base_lr` is the rate of the solver training the net, where one does (the advice names it);
/// 0 where the net runs on weights from a file.
std::string ExplainNonFiniteOrigin(const NonFiniteOrigin& origin, double base_lr);

/// "nan", "inf" or "-inf" (a NaN's sign, which printing shows as "-nan", means nothing here).
std::string NonFiniteName(double value);

}  // namespace caffe

#endif  // CAFFE_DIAGNOSTICS_NONFINITE_ORIGIN_HPP_
