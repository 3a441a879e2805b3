// Eltwise: combines two or more same-shaped blobs element by element (product, weighted sum or
// maximum).
#ifndef CAFFE_LAYERS_ELTWISE_LAYER_HPP_
#define CAFFE_LAYERS_ELTWISE_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"
#include "caffe/layers/relu_layer.hpp"

namespace caffe {

/// eltwise_param.operation (default SUM):
///   PROD: top = prod_i bottom[i]
///   SUM:  top = sum_i coeff[i] * bottom[i]   (coeff: none = all 1, or one per bottom)
///   MAX:  top = max_i bottom[i]; the gradient goes to the winning bottom only. Ties between
///         bottom[0] and bottom[1] go to bottom[1]; later bottoms win only when strictly greater
///         (BVLC's order, which decides where the gradient goes).
/// bottom[0..K-1] (K >= 2): all the same shape; top[0]: that shape.
template <typename Dtype>
class EltwiseLayer : public Layer<Dtype>, public LayerFusion<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Eltwise"; }
  // Forward writes all of each top, Backward all of each propagated bottom diff (LMS).
  bool WritesWholeOutputs() const override { return true; }
  /// Only PROD's backward reads data; SUM's scales gradients, MAX's routes them by its winners.
  bool BackwardReadsTopData(int) const override { return op_ == EltwiseParameter::PROD; }
  bool BackwardReadsBottomData(int) const override { return op_ == EltwiseParameter::PROD; }
  int MinBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  /// SUM only: PROD's and MAX's backward need the bottoms as they were.
  bool AllowsInPlace(int, int) const override {
    return this->layer_param_.eltwise_param().operation() == EltwiseParameter_EltwiseOp_SUM;
  }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Adds MAX's winner indices (written forward, read backward).
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

  LayerFusion<Dtype>* fusion() override { return this; }

  /// A SUM of two bottoms and the ReLU right after it (in place on the top, negative_slope >=
  /// 0; ResNet's residual sums) run as one: forward writes ReLU(c0 * a + c1 * b) in one pass;
  /// backward reads the top and its diff once and writes the ReLU's gradient dv (left in the
  /// top's diff, as apart) and each bottom's c_i * dv. Whole activations read or written drop
  /// from 5 to 3 forward and from 7 to 5 backward.
  bool FuseWithNext(Layer<Dtype>* next, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                    const Blobs<Dtype>& next_bottom, const Blobs<Dtype>& next_top) override;
  bool DeclareMemoryUseFused(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                             const vector<bool>& propagate_down,
                             const vector<vector<bool>>& followers_propagate_down,
                             MemoryUses* uses) const override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// PROD: bottom[i]_diff = top_diff * prod_{j != i} bottom[j] (stable_prod_grad, the default)
  /// or top_diff * top / bottom[i]; SUM: coeff[i] * top_diff; MAX: top_diff where i won, else 0.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
  void ForwardFused_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void BackwardFused_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                         const Blobs<Dtype>& bottom,
                         const vector<vector<bool>>& followers_propagate_down) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
  void ForwardFused_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void BackwardFused_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                         const Blobs<Dtype>& bottom,
                         const vector<vector<bool>>& followers_propagate_down) override;
#endif
  void ForwardSum(const Blobs<Dtype>& bottom, Blob<Dtype>* top);

  EltwiseParameter::EltwiseOp op_ = EltwiseParameter::SUM;
  vector<Dtype> coeffs_;              // SUM: one per bottom
  bool stable_prod_grad_ = true;      // PROD: recompute the product of the others, never divide
  Blob<int> max_idx_;                 // MAX: index of the winning bottom per element
  ReLULayer<Dtype>* relu_ = nullptr;  // the ReLU that runs with this layer (FuseWithNext)
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_ELTWISE_LAYER_HPP_
