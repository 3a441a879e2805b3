// Split: hands one blob to several consumers. The Net inserts it wherever one top feeds more than
// one bottom, so that each consumer writes its own diff and the diffs are summed here instead of
// overwriting each other.
#ifndef CAFFE_LAYERS_SPLIT_LAYER_HPP_
#define CAFFE_LAYERS_SPLIT_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top[k] = bottom[0] for every k (the tops share the bottom's data memory; nothing is copied).
/// Backward: bottom_diff = sum_k top[k]_diff. bottom[0]: any shape; top[0..K-1]: same shape.
/// Not in place: a top may not be the bottom.
template <typename Dtype>
class SplitLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Split"; }
  // Forward writes all of each top, Backward all of each propagated bottom diff (LMS).
  bool WritesWholeOutputs() const override { return true; }
  /// Backward moves gradients only: it reads no data blob.
  bool BackwardReadsTopData(int) const override { return false; }
  bool BackwardReadsBottomData(int) const override { return false; }
  int ExactNumBottomBlobs() const override { return 1; }
  int MinTopBlobs() const override { return 1; }
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

  int count_ = 0;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_SPLIT_LAYER_HPP_
