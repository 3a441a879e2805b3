// Concat: joins its bottoms along one axis (channels by default).
// Legend: outer = product of the dims before the concat axis, C_i = bottom[i]'s dim on the axis,
// inner = product of the dims after it.
#ifndef CAFFE_LAYERS_CONCAT_LAYER_HPP_
#define CAFFE_LAYERS_CONCAT_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top = [bottom[0], bottom[1], ...] along concat_param.axis (default 1; the deprecated
/// concat_dim is accepted instead). bottom[i]: (outer, C_i, inner), equal except on the axis;
/// top[0]: (outer, sum_i C_i, inner). A single bottom is passed through (data and diff shared).
/// On the CPU, channels whose values come in channel blocks (memory/channel_layout.hpp) are
/// joined in bottom[0]'s block where it divides every C_i: an image's block-major values are
/// then the bottoms' runs one after the other, as plain ones are.
template <typename Dtype>
class ConcatLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Concat"; }
  // Forward writes all of each top, Backward all of each propagated bottom diff (LMS).
  bool WritesWholeOutputs() const override { return true; }
  /// Backward moves gradients only: it reads no data blob.
  bool BackwardReadsTopData(int) const override { return false; }
  bool BackwardReadsBottomData(int) const override { return false; }
  int MinBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// bottom[i]_diff = its slice of top_diff, for each bottom with propagate_down.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

  int concat_axis_ = 0;
  int outer_ = 0;  // product of the dims before concat_axis_
  int inner_ = 0;  // product of the dims after concat_axis_
  int block_ = 1;  // the channel block the last CPU forward joined in; backward follows it

 private:
  int BlockFor(const Blobs<Dtype>& bottom) const;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_CONCAT_LAYER_HPP_
