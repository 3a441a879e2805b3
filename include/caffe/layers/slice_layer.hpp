// Slice: cuts its bottom into pieces along one axis (channels by default); the inverse of Concat.
// Legend: outer = product of the dims before the slice axis, C = bottom's dim on the axis,
// C_k = top[k]'s dim on the axis, inner = product of the dims after it.
#ifndef CAFFE_LAYERS_SLICE_LAYER_HPP_
#define CAFFE_LAYERS_SLICE_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top[k] = bottom[0][..., p_k : p_{k+1}, ...] along slice_param.axis (default 1; the deprecated
/// slice_dim is accepted instead), with p = 0, slice_point..., C. Without slice_point, C is split
/// equally among the K tops (K must divide C). bottom[0]: (outer, C, inner); top[k]:
/// (outer, C_k, inner). A single top is passed through (data and diff shared).
template <typename Dtype>
class SliceLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Slice"; }
  bool WritesWholeOutputs() const override { return true; }
  /// Backward moves gradients only: it reads no data blob.
  bool BackwardReadsTopData(int) const override { return false; }
  bool BackwardReadsBottomData(int) const override { return false; }
  int ExactNumBottomBlobs() const override { return 1; }
  int MinTopBlobs() const override { return 1; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// bottom_diff = the tops' diffs put back in place (the slices cover the whole bottom).
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

  int slice_axis_ = 0;
  int outer_ = 0;  // product of the dims before slice_axis_
  int inner_ = 0;  // product of the dims after slice_axis_
  vector<int> slice_points_;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_SLICE_LAYER_HPP_
