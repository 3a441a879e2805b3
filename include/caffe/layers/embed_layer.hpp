// Embed: a lookup table; each input index selects one learned row (an embedding).
// Legend: M = number of indices (bottom[0]'s count), K = input_dim (table rows),
// N = num_output (embedding size).
#ifndef CAFFE_LAYERS_EMBED_LAYER_HPP_
#define CAFFE_LAYERS_EMBED_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top[m, :] = W[bottom[m], :] (+ b). bottom[0]: any shape of M integer-valued indices in
/// [0, K); top[0]: bottom's shape + (N). blobs_[0]: W (K, N), weight_filler; blobs_[1] (if
/// bias_term, default true): b (N), bias_filler. Backward: W_diff[bottom[m], :] += top_diff[m, :],
/// b_diff += sum_m top_diff[m, :]; no gradient to the indices (asking for one is an error).
template <typename Dtype>
class EmbedLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Embed"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  /// Reads num_output and input_dim (both >= 1) and creates (or checks) W and b.
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Adds the GPU forward's invalid-index flag (scratch).
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

 protected:
  /// Throws caffe::Error for an index that is not an integer in [0, K).
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

  int indices_ = 0;     // M
  int input_dim_ = 0;   // K
  int num_output_ = 0;  // N
  bool bias_term_ = true;
#ifndef CPU_ONLY
  // GPU forward: the first position of an invalid index, written by the kernel (1 value).
  Blob<int> first_invalid_;
#endif
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_EMBED_LAYER_HPP_
