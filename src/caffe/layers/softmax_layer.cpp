#include "caffe/layers/softmax_layer.hpp"

#include <algorithm>

#include "caffe/layers/cudnn_softmax_layer.hpp"
#include "caffe/util/cudnn.hpp"
#include "caffe/util/math_functions.hpp"

namespace caffe {

template <typename Dtype>
void SoftmaxLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int axis = this->layer_param_.softmax_param().axis();
  const int num_axes = bottom[0]->num_axes();
  LAYER_CHECK(axis >= -num_axes && axis < num_axes)
      << "softmax_param.axis is " << axis << ", but bottom[0] " << bottom[0]->shape_string()
      << " has " << num_axes << " axes; must be in [" << -num_axes << ", " << num_axes << ")";
  const int softmax_axis = bottom[0]->CanonicalAxisIndex(axis);
  outer_num_ = bottom[0]->count(0, softmax_axis);
  channels_ = bottom[0]->shape(softmax_axis);
  inner_num_ = bottom[0]->count(softmax_axis + 1);
  top[0]->ReshapeLike(*bottom[0]);
  scale_.Reshape(vector<int>{inner_num_});
}

template <typename Dtype>
void SoftmaxLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const int channels = channels_;
  const int inner = inner_num_;
  const int dim = channels * inner;
  if (channels == 0 || inner == 0) return;
  // Every read of bottom[o, c, i] precedes the write of top[o, c, i], so top may alias bottom.
  // First top = bottom - its maximum over the channels, then one exp over the whole blob (on
  // oneDNN's vector kernels where it runs: util/vector_math.hpp), then the division by the sums.
  if (inner == 1) {
    // The common classifier case: one contiguous row per item.
    for (int o = 0; o < outer_num_; ++o) {
      const Dtype* x = bottom_data + o * dim;
      Dtype* y = top_data + o * dim;
      const Dtype max_value = *std::max_element(x, x + channels);
      for (int c = 0; c < channels; ++c) y[c] = x[c] - max_value;
    }
    caffe_exp(outer_num_ * dim, top_data, top_data);
    for (int o = 0; o < outer_num_; ++o) {
      Dtype* y = top_data + o * dim;
      Dtype sum = 0;
      for (int c = 0; c < channels; ++c) sum += y[c];
      for (int c = 0; c < channels; ++c) y[c] /= sum;
    }
    return;
  }
  // Spatial case: sweep whole channel planes so the inner loops run over contiguous positions.
  Dtype* scale = scale_.mutable_cpu_data();
  for (int o = 0; o < outer_num_; ++o) {
    const Dtype* x = bottom_data + o * dim;
    Dtype* y = top_data + o * dim;
    caffe_copy(inner, x, scale);
    for (int c = 1; c < channels; ++c) {
      const Dtype* x_c = x + c * inner;
      for (int i = 0; i < inner; ++i) scale[i] = std::max(scale[i], x_c[i]);
    }
    for (int c = 0; c < channels; ++c) {
      const Dtype* x_c = x + c * inner;
      Dtype* y_c = y + c * inner;
      for (int i = 0; i < inner; ++i) y_c[i] = x_c[i] - scale[i];
    }
  }
  caffe_exp(outer_num_ * dim, top_data, top_data);
  for (int o = 0; o < outer_num_; ++o) {
    Dtype* y = top_data + o * dim;
    caffe_copy(inner, y, scale);
    for (int c = 1; c < channels; ++c) {
      const Dtype* y_c = y + c * inner;
      for (int i = 0; i < inner; ++i) scale[i] += y_c[i];
    }
    for (int c = 0; c < channels; ++c) {
      Dtype* y_c = y + c * inner;
      for (int i = 0; i < inner; ++i) y_c[i] /= scale[i];
    }
  }
}

template <typename Dtype>
void SoftmaxLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                       const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_data = top[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int channels = channels_;
  const int inner = inner_num_;
  const int dim = channels * inner;
  if (channels == 0 || inner == 0) return;
  Dtype* scale = scale_.mutable_cpu_data();
  // bottom_diff may alias top_diff: the dot products are complete before any element is written.
  for (int o = 0; o < outer_num_; ++o) {
    const Dtype* y = top_data + o * dim;
    const Dtype* dy = top_diff + o * dim;
    Dtype* dx = bottom_diff + o * dim;
    caffe_set(inner, Dtype(0), scale);
    for (int c = 0; c < channels; ++c) {
      const Dtype* y_c = y + c * inner;
      const Dtype* dy_c = dy + c * inner;
      for (int i = 0; i < inner; ++i) scale[i] += dy_c[i] * y_c[i];
    }
    for (int c = 0; c < channels; ++c) {
      const Dtype* y_c = y + c * inner;
      const Dtype* dy_c = dy + c * inner;
      Dtype* dx_c = dx + c * inner;
      for (int i = 0; i < inner; ++i) dx_c[i] = (dy_c[i] - scale[i]) * y_c[i];
    }
  }
}

template <typename Dtype>
bool SoftmaxLayer<Dtype>::DeclareMemoryUse(
    lms::Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
    const vector<bool>& propagate_down, lms::MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  uses->AddData(scale_, lms::kScratch);  // per-position maxima, then dot products
  return true;
}

INSTANTIATE_CLASS(SoftmaxLayer);

// cuDNN's engine in GPU mode where this build has it and the engine asked allows it
// (include/caffe/util/cudnn.hpp); Caffe's otherwise.
template <typename Dtype>
shared_ptr<Layer<Dtype>> GetSoftmaxLayer(const LayerParameter& param) {
  const bool cudnn =
      UseCudnnEngine(param, SoftmaxParameter::Engine_Name(param.softmax_param().engine()));
#ifdef USE_CUDNN
  if (cudnn) return std::make_shared<CuDNNSoftmaxLayer<Dtype>>(param);
#endif
  (void)cudnn;
  return std::make_shared<SoftmaxLayer<Dtype>>(param);
}

REGISTER_LAYER_CREATOR(Softmax, GetSoftmaxLayer);

}  // namespace caffe
