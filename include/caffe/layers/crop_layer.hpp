// Crop: cuts bottom[0] down to the size of bottom[1] on every axis from `axis` on.
#ifndef CAFFE_LAYERS_CROP_LAYER_HPP_
#define CAFFE_LAYERS_CROP_LAYER_HPP_

#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top[i_0, ..., i_{n-1}] = bottom[0][i_0 + o_0, ..., i_{n-1} + o_{n-1}], where o_a = 0 for the
/// axes before crop_param.axis (default 2) and otherwise the offset: crop_param.offset given
/// once (for every cropped axis), once per cropped axis, or not at all (0).
/// bottom[0]: the data; bottom[1]: the reference, with as many axes; top[0]: bottom[0]'s dims
/// before `axis`, bottom[1]'s from it on (each crop must fit: o_a + dim1_a <= dim0_a).
/// Backward: bottom[0]_diff = top_diff at the cropped positions, 0 elsewhere; bottom[1] gets
/// no gradient (its diff is zeroed when asked for).
template <typename Dtype>
class CropLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Crop"; }
  // Forward writes all of each top, Backward all of each propagated bottom diff (LMS).
  bool WritesWholeOutputs() const override { return true; }
  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
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

 private:
  /// Calls copy(bottom_offset, top_offset) for every run of the top's last axis.
  template <typename Copy>
  void ForEachRow(const Blob<Dtype>& bottom, const Blob<Dtype>& top, Copy copy) const;

  std::vector<int> offsets_;  // o_a per axis of bottom[0]
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_CROP_LAYER_HPP_
