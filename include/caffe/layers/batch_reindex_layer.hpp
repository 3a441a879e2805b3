// BatchReindex: gathers items of a batch by index (selecting, repeating or permuting them).
// Legend: N items in bottom[0], M indices in bottom[1], I = the size of one item.
#ifndef CAFFE_LAYERS_BATCH_REINDEX_LAYER_HPP_
#define CAFFE_LAYERS_BATCH_REINDEX_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top[m] = bottom[0][bottom[1][m]]. bottom[0]: (N, ...); bottom[1]: (M) integer-valued indices
/// in [0, N); top[0]: (M, ...). Backward: bottom[0]_diff[n] = sum of top_diff[m] over the m with
/// bottom[1][m] == n (0 for items not selected); no gradient to the indices (asking is an error).
template <typename Dtype>
class BatchReindexLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "BatchReindex"; }
  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  /// Throws caffe::Error for an index that is not an integer in [0, N).
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_BATCH_REINDEX_LAYER_HPP_
