#include "caffe/layers/input_layer.hpp"

namespace caffe {

template <typename Dtype>
void InputLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const InputParameter& param = this->layer_param_.input_param();
  const int num_tops = static_cast<int>(top.size());
  const int num_shapes = param.shape_size();
  LAYER_CHECK(num_shapes == 0 || num_shapes == 1 || num_shapes == num_tops)
      << "input_param has " << num_shapes << " shapes for " << num_tops
      << " tops; give one shape for all tops, one per top, or none";
  if (num_shapes == 0) return;
  for (int i = 0; i < num_tops; ++i) top[i]->Reshape(param.shape(num_shapes == 1 ? 0 : i));
}

INSTANTIATE_CLASS(InputLayer);
REGISTER_LAYER_CLASS(Input);

}  // namespace caffe
