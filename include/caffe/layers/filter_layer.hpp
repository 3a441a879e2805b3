// Filter: keeps the items of a batch whose selector value is non-zero.
// Legend: N items per bottom, K bottoms to filter (the last bottom is the selector), S selected.
#ifndef CAFFE_LAYERS_FILTER_LAYER_HPP_
#define CAFFE_LAYERS_FILTER_LAYER_HPP_

#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top[k] = the items n of bottom[k] with selector[n] != 0, in order, for k < K.
/// bottom[0..K-1]: (N, ...) each; bottom[K], the selector: (N) or (N, 1, ...); top[k]: (S, ...)
/// (at setup, before any selector is read, (N, ...) as BVLC). Backward scatters each top's diff
/// back to the selected items and zeroes the others; no gradient to the selector (asking is an
/// error).
template <typename Dtype>
class FilterLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Filter"; }
  int MinBottomBlobs() const override { return 2; }
  int MinTopBlobs() const override { return 1; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Reads the selector, so the tops' first dim follows the data.
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

  bool first_reshape_ = true;
  std::vector<int> selected_;  // the selected items, in increasing order
#ifndef CPU_ONLY
  /// Copies selected_ to selected_gpu_ and returns its device pointer.
  const int* SelectedOnGpu();
  Blob<int> selected_gpu_;  // selected_ on the device, for the GPU passes
#endif
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_FILTER_LAYER_HPP_
