// InnerProduct (fully connected): every output is a learned linear combination of all inputs of
// an example, plus a bias. Legend: M examples (product of the axes before `axis`), K inputs per
// example (product of the axes from `axis` on), N num_output.
#ifndef CAFFE_LAYERS_INNER_PRODUCT_LAYER_HPP_
#define CAFFE_LAYERS_INNER_PRODUCT_LAYER_HPP_

#include <cstdint>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// top = bottom * W^T + b, with bottom viewed as (M, K). bottom[0]: (M..., K...) split at
/// `axis`; top[0]: (M..., N). blobs_[0]: weights W (N, K), or (K, N) with transpose: true (then
/// top = bottom * W + b); blobs_[1]: bias b (N) if bias_term.
template <typename Dtype>
class InnerProductLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "InnerProduct"; }
  // Forward writes all of each top, Backward all of each propagated bottom diff (LMS).
  bool WritesWholeOutputs() const override { return true; }
  /// bf16 where asked and the batch has at least kBf16MinExamples examples (below, the product
  /// is bound by reading the weights, and rounding them first costs more than it saves).
  bool HasBf16Math() const override { return true; }
  static constexpr int kBf16MinExamples = 64;
  /// Backward reads the bottom's data only for the weights' gradient, and never the top's.
  bool BackwardReadsTopData(int) const override { return false; }
  bool BackwardReadsBottomData(int) const override { return this->param_propagate_down(0); }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }

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
  int examples_ = 0;  // M
  int inputs_ = 0;    // K
  int outputs_ = 0;   // N
  int axis_ = 1;
  bool bias_term_ = true;
  bool transpose_ = false;  // weights stored (K, N)
  // The weights rounded to bf16 by the last Forward in bf16, for the Backward after it.
  std::vector<uint16_t> weights_bf16_;
  bool weights_bf16_ready_ = false;
  bool said_fp32_at_small_batch_ = false;  // the log line, once a layer
  // The bf16 copy of the weights, made now unless Forward made it (`reuse`).
  const uint16_t* WeightsInBf16(bool reuse);
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_INNER_PRODUCT_LAYER_HPP_
