// DummyData: produces blobs of a fixed shape filled by fillers, for tests and benchmarks without
// a data source.
#ifndef CAFFE_LAYERS_DUMMY_DATA_LAYER_HPP_
#define CAFFE_LAYERS_DUMMY_DATA_LAYER_HPP_

#include <memory>

#include "caffe/blob.hpp"
#include "caffe/filler.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// No bottoms; top[k] has dummy_data_param.shape (once for all tops or once per top), or the
/// legacy num/channels/height/width (each once or once per top). data_filler: none (constant 0),
/// one for all tops, or one per top. Constant fillers fill their tops once at setup; the others
/// refill them on every Forward. Backward does nothing.
template <typename Dtype>
class DummyDataLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "DummyData"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int MinTopBlobs() const override { return 1; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {}

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override {}

  vector<std::unique_ptr<Filler<Dtype>>> fillers_;  // one for all tops, or one per top
  vector<bool> refill_;                             // per filler: fill again on every Forward
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_DUMMY_DATA_LAYER_HPP_
