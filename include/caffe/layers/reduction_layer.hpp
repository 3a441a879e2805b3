// Reduction: sums (or sums of absolute values or squares, or means) over all axes from `axis` on.
// Legend: M = product of the axes before `axis` (the outputs), D = product of the axes from it.
#ifndef CAFFE_LAYERS_REDUCTION_LAYER_HPP_
#define CAFFE_LAYERS_REDUCTION_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top[m] = coeff * op(bottom[m, 0..D-1]), op = SUM: sum x; ASUM: sum |x|; SUMSQ: sum x^2;
/// MEAN: sum x / D. bottom[0]: (M..., D...) split at reduction_param.axis (default 0);
/// top[0]: the axes before `axis` (a 0-axis scalar for axis 0).
/// Backward: dx = coeff * dy_m * {1, sign(x), 2x, 1/D}.
template <typename Dtype>
class ReductionLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Reduction"; }
  int ExactNumBottomBlobs() const override { return 1; }
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

  ReductionParameter_ReductionOp op_ = ReductionParameter_ReductionOp_SUM;
  Dtype coeff_ = 1;  // coeff, divided by D for MEAN
  int outer_ = 0;    // M
  int inner_ = 0;    // D
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_REDUCTION_LAYER_HPP_
