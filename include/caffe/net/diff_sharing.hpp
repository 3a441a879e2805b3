// Activation gradients that share memory. In a training step a blob's diff holds a value only
// during backward, from the step of the last layer that reads the blob (which writes the
// gradient) to the step of the layer that made it (which reads it last), so blobs whose spans
// do not overlap can keep their gradients in one buffer; PyTorch frees each gradient as soon as
// it is used, for the same reason. BVLC Caffe gives every blob a diff of its own, and pycaffe
// users read activation gradients after a backward (saliency maps, Grad-CAM), so a net shares
// only when asked: the caffe tool's `train` and `time` ask (CAFFE_SHARE_DIFFS=0: they do not).
#ifndef CAFFE_NET_DIFF_SHARING_HPP_
#define CAFFE_NET_DIFF_SHARING_HPP_

#include <cstddef>
#include <vector>

#include "caffe/net.hpp"

namespace caffe {

/// A blob's gradient as the backward pass uses it: the layers from `first` (the layer that makes
/// the blob) to `last` (the last layer that reads it) touch its diff; it may share when every
/// backward rewrites all of it before reading it.
struct DiffSpan {
  size_t bytes = 0;
  int first = -1;
  int last = -1;
  bool shareable = false;
};

/// For each span, the index of the span whose diff it uses: itself where it keeps its own.
/// Shareable spans of equal size whose layer ranges do not overlap (not even in one layer, which
/// reads one gradient while it writes the other) use one diff; greedily, latest first, which
/// needs the fewest buffers for each size.
std::vector<int> PlanDiffSharing(const std::vector<DiffSpan>& spans);

/// The spans of a net's blobs. A blob may share when each layer that reads it propagates a
/// gradient to it, the last of them rewrites it (a layer that writes the blob in place reads its
/// gradient first), it has no loss weight (that diff holds the weight), its diff is no other
/// blob's or parameter's too (Flatten, Reshape), and no Python layer touches it (user code may
/// keep anything in a diff).
template <typename Dtype>
std::vector<DiffSpan> DiffSpans(const Net<Dtype>& net);

/// What sharing saved: the bytes of activation diffs before and after.
struct DiffSharing {
  size_t bytes_before = 0;
  size_t bytes_after = 0;
};

/// Plans the net's spans and makes the blobs of each group share one diff (Blob::ShareDiff).
/// Logs the bytes before and after. After a backward, only the gradients of blobs that keep their
/// own diff are what BVLC would show; parameter gradients are never shared.
template <typename Dtype>
DiffSharing ShareActivationDiffs(Net<Dtype>* net);

}  // namespace caffe

#endif  // CAFFE_NET_DIFF_SHARING_HPP_
