// Silence: consumes blobs nobody else reads, so the Net does not report them as outputs.
#ifndef CAFFE_LAYERS_SILENCE_LAYER_HPP_
#define CAFFE_LAYERS_SILENCE_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// Takes one or more bottoms of any shape and produces no top. Backward zeroes the diff of each
/// bottom with propagate_down (the gradient of a silenced blob is 0).
template <typename Dtype>
class SilenceLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Silence"; }
  int MinBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 0; }
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {}

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {}
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {}
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_SILENCE_LAYER_HPP_
