// Pooling: the maximum or the average of each kernel-sized window of every channel. 2-D is BVLC's
// layer; bottoms with one or three spatial axes (N, C, W) / (N, C, D, H, W) use the same code with
// kernel_size, stride and pad applying to every axis.
// Legend: N images, C channels, D/H/W input depth/height/width, PD/PH/PW pooled sizes.
#ifndef CAFFE_LAYERS_POOLING_LAYER_HPP_
#define CAFFE_LAYERS_POOLING_LAYER_HPP_

#include <vector>

#include "caffe/blob.hpp"
#include "caffe/kernels/pooling_blocked.hpp"
#include "caffe/layer.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// bottom[0]: (N, C, H, W) (or (N, C, W), (N, C, D, H, W)); top[0]: (N, C, PH, PW) with
/// PH = round((H + 2 pad_h - kernel_h) / stride_h) + 1, round = ceil (round_mode CEIL, the default)
/// or floor (round_mode FLOOR, or ceil_mode: false), minus 1 when padding is used and the last
/// window would start in the padding (as BVLC). MAX: the window maximum, the first one in
/// row-major order on ties; an optional top[1] receives its index h * W + w in the channel, as a
/// value. AVE: the window sum divided by the window size clipped to the padded input (padding
/// counts as zeros). STOCHASTIC is GPU-only, as in BVLC, and takes no padding: in TRAIN each
/// window's output is one of its inputs, drawn with probability proportional to its value
/// (inputs should be >= 0, e.g. after a ReLU), and the gradient goes to that input; in TEST the
/// output is sum(x^2) / sum(x) over the window, with no backward pass.
template <typename Dtype>
class PoolingLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Pooling"; }
  // Forward writes all of each top, Backward all of each propagated bottom diff (LMS).
  bool WritesWholeOutputs() const override { return true; }
  /// LMS: the bottoms, tops and learned blobs, plus the argmax buffer.
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

  int ExactNumBottomBlobs() const override { return 1; }
  int MinTopBlobs() const override { return 1; }
  /// MAX may also output the argmax mask.
  int MaxTopBlobs() const override {
    return this->layer_param_.pooling_param().pool() == PoolingParameter_PoolMethod_MAX ? 2 : 1;
  }

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
  // Spatial axes are held as three (depth, height, width); missing leading axes have size 1,
  // kernel 1, stride 1 and pad 0, so one loop nest serves 1-, 2- and 3-D.
  static constexpr int kAxes = 3;
  // The windows along one axis: input positions [start[o], end[o]) (clipped to the input) and the
  // window's extent clipped to the padded input, whose product is AVE's divisor.
  struct AxisWindows {
    std::vector<int> start, end, padded_extent;
  };
  /// 2x2 windows at stride 2, unpadded, that tile the 2-D input exactly (LeNet's): MAX takes a
  /// path without window bounds, whose backward writes every input (no zeroing pass).
  bool TiledByTwoByTwo() const;
  /// AVE over 2-D windows a row of outputs at a time, forward and backward: where a row has
  /// several (Inception's 3x3 stride-1 AVE, DenseNet's 2x2 stride 2); a window per output
  /// otherwise (global pooling).
  bool AveByRows() const { return pooled_[2] >= 4; }
  /// The channel block the CPU passes pool in: the bottom's where its values come in blocks
  /// (memory/channel_layout.hpp; float, 2-D, MAX without a mask top, or AVE), else 1 (plain).
  int BlockFor(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) const;
  PoolingAxis BlockedAxis(int a) const {
    return {input_[a], pooled_[a], windows_[a].start.data(), windows_[a].end.data(),
            windows_[a].padded_extent.data()};
  }
  void ForwardBlocked(const Blob<Dtype>& bottom, Blob<Dtype>* top);
  void BackwardBlocked(const Blob<Dtype>& top, Blob<Dtype>* bottom);
  template <typename Mask>
  void ForwardMax(const Dtype* bottom_data, Dtype* top_data, Mask* mask) const;
  void ForwardAve(const Dtype* bottom_data, Dtype* top_data) const;
  template <typename Mask>
  void BackwardMax(const Dtype* top_diff, const Mask* mask, Dtype* bottom_diff) const;
  void BackwardAve(const Dtype* top_diff, Dtype* bottom_diff) const;

  PoolingParameter_PoolMethod method_ = PoolingParameter_PoolMethod_MAX;
  bool round_up_ = true;  // CEIL rounding of the pooled size
  bool global_pooling_ = false;
  int num_spatial_axes_ = 2;
  int kernel_[kAxes] = {1, 1, 1};
  int stride_[kAxes] = {1, 1, 1};
  int pad_[kAxes] = {0, 0, 0};
  int input_[kAxes] = {1, 1, 1};   // D, H, W
  int pooled_[kAxes] = {1, 1, 1};  // PD, PH, PW
  int planes_ = 0;                 // N * C
  AxisWindows windows_[kAxes];
  Blob<int> max_idx_;  // the argmax of each output when top[1] does not hold it (MAX)
  int block_ = 1;      // the channel block the last CPU forward pooled in; backward follows it
#ifndef CPU_ONLY
  // STOCHASTIC in TRAIN: a U[0, 1) draw per output, replaced by forward with the index (in the
  // plane) of the input it picked, which backward routes the gradient to. Shape of top[0].
  Blob<Dtype> rand_idx_;
#endif
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_POOLING_LAYER_HPP_
