#include "caffe/layers/dummy_data_layer.hpp"

#include <utility>

namespace caffe {

template <typename Dtype>
void DummyDataLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const DummyDataParameter& param = this->layer_param_.dummy_data_param();
  const int num_tops = static_cast<int>(top.size());
  const int num_fillers = param.data_filler_size();
  LAYER_CHECK(num_fillers == 0 || num_fillers == 1 || num_fillers == num_tops)
      << "dummy_data_param has " << num_fillers << " data_filler for " << num_tops
      << " tops; give none, one for all tops, or one per top";
  const bool legacy_dims = param.num_size() > 0 || param.channels_size() > 0 ||
                           param.height_size() > 0 || param.width_size() > 0;
  if (legacy_dims) {
    LAYER_CHECK_EQ(param.shape_size(), 0)
        << "dummy_data_param sets both shape and the legacy num/channels/height/width";
    const std::pair<const char*, int> fields[] = {{"num", param.num_size()},
                                                  {"channels", param.channels_size()},
                                                  {"height", param.height_size()},
                                                  {"width", param.width_size()}};
    for (const auto& field : fields) {
      LAYER_CHECK(field.second == 1 || field.second == num_tops)
          << "dummy_data_param." << field.first << " is given " << field.second << " times for "
          << num_tops << " tops; give it once for all tops or once per top";
    }
  } else {
    LAYER_CHECK(param.shape_size() == 1 || param.shape_size() == num_tops)
        << "dummy_data_param has " << param.shape_size() << " shapes for " << num_tops
        << " tops; give one shape for all tops or one per top";
  }
  fillers_.clear();
  refill_.clear();
  if (num_fillers <= 1) {
    FillerParameter filler_param;  // constant 0 unless given
    if (num_fillers == 1) filler_param = param.data_filler(0);
    fillers_.push_back(GetFiller<Dtype>(filler_param));
    refill_.push_back(filler_param.type() != "constant");
  } else {
    for (int i = 0; i < num_fillers; ++i) {
      fillers_.push_back(GetFiller<Dtype>(param.data_filler(i)));
      refill_.push_back(param.data_filler(i).type() != "constant");
    }
  }
  for (int i = 0; i < num_tops; ++i) {
    if (legacy_dims) {
      auto pick = [i](const auto& values) {
        return static_cast<int>(values.size() == 1 ? values.Get(0) : values.Get(i));
      };
      top[i]->Reshape(pick(param.num()), pick(param.channels()), pick(param.height()),
                      pick(param.width()));
    } else {
      top[i]->Reshape(param.shape(param.shape_size() == 1 ? 0 : i));
    }
  }
  // Constant tops never change, so they are filled once here and skipped by Forward; the
  // random ones are drawn afresh by every Forward (as BVLC does).
  for (int i = 0; i < num_tops; ++i) {
    const int filler_id = fillers_.size() > 1 ? i : 0;
    if (!refill_[filler_id]) fillers_[filler_id]->Fill(top[i]);
  }
}

template <typename Dtype>
void DummyDataLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  for (size_t i = 0; i < top.size(); ++i) {
    const size_t filler_id = fillers_.size() > 1 ? i : 0;
    if (refill_[filler_id]) fillers_[filler_id]->Fill(top[i]);
  }
}

INSTANTIATE_CLASS(DummyDataLayer);
REGISTER_LAYER_CLASS(DummyData);

}  // namespace caffe
