// Legend as in mvn_layer.hpp: N batch, C channels, a row is one (n, c) (or one n), D its size.
#include "caffe/layers/mvn_layer.hpp"

#include <algorithm>
#include <cmath>

#include "caffe/util/cpu_threads.hpp"

namespace caffe {

template <typename Dtype>
void MVNLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const MVNParameter& param = this->layer_param_.mvn_param();
  normalize_variance_ = param.normalize_variance();
  across_channels_ = param.across_channels();
  eps_ = param.eps();
}

template <typename Dtype>
void MVNLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  top[0]->ReshapeLike(*bottom[0]);
  // Rows are the slices of the first axis (across_channels) or of the first two.
  const int row_axes = std::min(across_channels_ ? 1 : 2, bottom[0]->num_axes());
  rows_ = bottom[0]->count(0, row_axes);
  row_size_ = bottom[0]->count(row_axes);
  scale_.Reshape(vector<int>{rows_});
}

template <typename Dtype>
void MVNLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  Dtype* scale = scale_.mutable_cpu_data();
  const int size = row_size_;
  const bool normalize_variance = normalize_variance_;
  const Dtype eps = eps_;
  caffe_parallel_for(rows_, [=](int r) {
    const Dtype* x = bottom_data + r * size;
    Dtype* y = top_data + r * size;
    Dtype sum = 0;
    for (int d = 0; d < size; ++d) sum += x[d];
    const Dtype mean = sum / size;
    for (int d = 0; d < size; ++d) y[d] = x[d] - mean;
    if (!normalize_variance) return;
    Dtype sum_sq = 0;
    for (int d = 0; d < size; ++d) sum_sq += y[d] * y[d];
    scale[r] = std::sqrt(sum_sq / size) + eps;
    for (int d = 0; d < size; ++d) y[d] /= scale[r];
  });
}

template <typename Dtype>
void MVNLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                   const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_data = top[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const Dtype* scale = scale_.cpu_data();
  const int size = row_size_;
  const bool normalize_variance = normalize_variance_;
  caffe_parallel_for(rows_, [=](int r) {
    const Dtype* y = top_data + r * size;
    const Dtype* dy = top_diff + r * size;
    Dtype* dx = bottom_diff + r * size;
    Dtype sum_dy = 0;
    for (int d = 0; d < size; ++d) sum_dy += dy[d];
    if (!normalize_variance) {
      const Dtype mean_dy = sum_dy / size;
      for (int d = 0; d < size; ++d) dx[d] = dy[d] - mean_dy;
      return;
    }
    Dtype sum_y_dy = 0;
    for (int d = 0; d < size; ++d) sum_y_dy += y[d] * dy[d];
    for (int d = 0; d < size; ++d) {
      dx[d] = (dy[d] - (y[d] * sum_y_dy + sum_dy) / size) / scale[r];
    }
  });
}

template <typename Dtype>
bool MVNLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                       const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                       MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  uses->AddData(scale_, pass == Pass::kForward ? kOverwrite : kRead);
  return true;
}

INSTANTIATE_CLASS(MVNLayer);
REGISTER_LAYER_CLASS(MVN);

}  // namespace caffe
