#include "caffe/layers/softmax_layer.hpp"

#include <algorithm>

#include "caffe/kernels/math_functions.hpp"
#include "caffe/util/cpu_threads.hpp"

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
}

namespace {

// Positions per task in the spatial case: a task's maxima, sums or dot products live on its stack.
constexpr int kPositionsPerTask = 256;

// Runs task(o, begin, size) over every item o < outer and every run of at most
// kPositionsPerTask positions [begin, begin + size) of its inner ones, split across the threads
// when the blob is large enough.
template <typename Task>
void ForEachPositionRun(int outer, int channels, int inner, Task task) {
  const int runs = (inner + kPositionsPerTask - 1) / kPositionsPerTask;
  const long tasks = static_cast<long>(outer) * runs;
  const bool parallel =
      tasks > 1 && tasks * channels * std::min(inner, kPositionsPerTask) >= kParallelMinElements;
#pragma omp parallel for schedule(static) if (parallel)
  for (long t = 0; t < tasks; ++t) {
    const int begin = static_cast<int>(t % runs) * kPositionsPerTask;
    task(static_cast<int>(t / runs), begin, std::min(kPositionsPerTask, inner - begin));
  }
}

}  // namespace

template <typename Dtype>
void SoftmaxLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const int outer = outer_num_;
  const int channels = channels_;
  const int inner = inner_num_;
  const int dim = channels * inner;
  if (outer == 0 || channels == 0 || inner == 0) return;
  // Every read of bottom[o, c, i] precedes the write of top[o, c, i], so top may alias bottom.
  // First top = bottom - its maximum over the channels, then one exp over the whole blob (on
  // oneDNN's vector kernels where it runs: kernels/vector_math.hpp), then the division by the sums;
  // the first and last steps threaded over items and runs of positions.
  if (inner == 1) {
    // The common classifier case: one contiguous row per item.
    const bool parallel = static_cast<long>(outer) * channels >= kParallelMinElements;
#pragma omp parallel for schedule(static) if (parallel)
    for (int o = 0; o < outer; ++o) {
      const Dtype* x = bottom_data + static_cast<long>(o) * dim;
      Dtype* y = top_data + static_cast<long>(o) * dim;
      const Dtype max_value = *std::max_element(x, x + channels);
      for (int c = 0; c < channels; ++c) y[c] = x[c] - max_value;
    }
    caffe_exp(outer * dim, top_data, top_data);
#pragma omp parallel for schedule(static) if (parallel)
    for (int o = 0; o < outer; ++o) {
      Dtype* y = top_data + static_cast<long>(o) * dim;
      Dtype sum = 0;
      for (int c = 0; c < channels; ++c) sum += y[c];
      for (int c = 0; c < channels; ++c) y[c] /= sum;
    }
    return;
  }
  // Spatial case: each task sweeps whole channel planes of its run of positions, so the inner
  // loops run over contiguous values.
  ForEachPositionRun(outer, channels, inner, [=](int o, int begin, int size) {
    const Dtype* x = bottom_data + static_cast<long>(o) * dim + begin;
    Dtype* y = top_data + static_cast<long>(o) * dim + begin;
    Dtype max_value[kPositionsPerTask];
    std::copy(x, x + size, max_value);
    for (int c = 1; c < channels; ++c) {
      const Dtype* x_c = x + static_cast<long>(c) * inner;
      for (int i = 0; i < size; ++i) max_value[i] = std::max(max_value[i], x_c[i]);
    }
    for (int c = 0; c < channels; ++c) {
      const Dtype* x_c = x + static_cast<long>(c) * inner;
      Dtype* y_c = y + static_cast<long>(c) * inner;
      for (int i = 0; i < size; ++i) y_c[i] = x_c[i] - max_value[i];
    }
  });
  caffe_exp(outer * dim, top_data, top_data);
  ForEachPositionRun(outer, channels, inner, [=](int o, int begin, int size) {
    Dtype* y = top_data + static_cast<long>(o) * dim + begin;
    Dtype sum[kPositionsPerTask];
    std::copy(y, y + size, sum);
    for (int c = 1; c < channels; ++c) {
      const Dtype* y_c = y + static_cast<long>(c) * inner;
      for (int i = 0; i < size; ++i) sum[i] += y_c[i];
    }
    for (int c = 0; c < channels; ++c) {
      Dtype* y_c = y + static_cast<long>(c) * inner;
      for (int i = 0; i < size; ++i) y_c[i] /= sum[i];
    }
  });
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
  const long dim = static_cast<long>(channels) * inner;
  if (outer_num_ == 0 || channels == 0 || inner == 0) return;
  // bottom_diff may alias top_diff: a run's dot products are complete before any of its values
  // is written.
  ForEachPositionRun(outer_num_, channels, inner, [=](int o, int begin, int size) {
    const Dtype* y = top_data + o * dim + begin;
    const Dtype* dy = top_diff + o * dim + begin;
    Dtype* dx = bottom_diff + o * dim + begin;
    Dtype dot[kPositionsPerTask] = {};
    for (int c = 0; c < channels; ++c) {
      const Dtype* y_c = y + static_cast<long>(c) * inner;
      const Dtype* dy_c = dy + static_cast<long>(c) * inner;
      for (int i = 0; i < size; ++i) dot[i] += dy_c[i] * y_c[i];
    }
    for (int c = 0; c < channels; ++c) {
      const Dtype* y_c = y + static_cast<long>(c) * inner;
      const Dtype* dy_c = dy + static_cast<long>(c) * inner;
      Dtype* dx_c = dx + static_cast<long>(c) * inner;
      for (int i = 0; i < size; ++i) dx_c[i] = (dy_c[i] - dot[i]) * y_c[i];
    }
  });
}

INSTANTIATE_CLASS(SoftmaxLayer);

// Its engines (layers/cudnn/, layers/dnnl/) are chosen by layer_engine.hpp.
REGISTER_LAYER_CLASS(Softmax);

}  // namespace caffe
