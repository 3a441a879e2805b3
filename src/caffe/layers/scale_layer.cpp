#include "caffe/layers/scale_layer.hpp"

#include <algorithm>

#include "caffe/filler.hpp"
#include "caffe/kernels/gpu_channel_sums.hpp"
#include "caffe/kernels/stream_copy.hpp"
#include "caffe/util/cpu_threads.hpp"

namespace caffe {

template <typename Dtype>
void ScaleLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ScaleParameter& param = this->layer_param_.scale_param();
  const bool learned_scale = bottom.size() == 1;
  if (learned_scale && this->blobs_.empty()) {
    const int bottom_axes = bottom[0]->num_axes();
    LAYER_CHECK(param.axis() >= -bottom_axes && param.axis() < bottom_axes)
        << "scale_param.axis is " << param.axis() << ", but bottom[0] " << bottom[0]->shape_string()
        << " has " << bottom_axes << " axes; must be in [" << -bottom_axes << ", " << bottom_axes
        << ")";
    const int axis = bottom[0]->CanonicalAxisIndex(param.axis());
    const int num_axes = param.num_axes();
    LAYER_CHECK_GE(num_axes, -1)
        << "scale_param.num_axes must be >= 0, or -1 to extend to the end of bottom[0]";
    LAYER_CHECK(num_axes == -1 || axis + num_axes <= bottom_axes)
        << "scale_param axis " << param.axis() << " with num_axes " << num_axes
        << " extends past the " << bottom_axes << " axes of bottom[0] "
        << bottom[0]->shape_string();
    const auto shape_begin = bottom[0]->shape().begin() + axis;
    const auto shape_end = num_axes == -1 ? bottom[0]->shape().end() : shape_begin + num_axes;
    this->blobs_.push_back(std::make_shared<Blob<Dtype>>(vector<int>(shape_begin, shape_end)));
    FillerParameter filler_param = param.filler();
    if (!param.has_filler()) {
      // The identity until trained.
      filler_param.set_type("constant");
      filler_param.set_value(1);
    }
    GetFiller<Dtype>(filler_param)->Fill(this->blobs_[0].get());
  }
  bias_param_id_ = -1;
  if (param.bias_term()) {
    // Blobs loaded from a model already hold the bias last: (scale, bias) or (bias).
    const size_t blobs_with_bias = learned_scale ? 2 : 1;
    if (this->blobs_.size() < blobs_with_bias) {
      const vector<int>& shape = learned_scale ? this->blobs_[0]->shape() : bottom[1]->shape();
      auto bias = std::make_shared<Blob<Dtype>>(shape);
      GetFiller<Dtype>(param.bias_filler())->Fill(bias.get());
      this->blobs_.push_back(bias);
    }
    bias_param_id_ = static_cast<int>(blobs_with_bias) - 1;
  }
  this->param_propagate_down_.resize(this->blobs_.size(), true);
}

template <typename Dtype>
void ScaleLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ScaleParameter& param = this->layer_param_.scale_param();
  const Blob<Dtype>* scale = bottom.size() > 1 ? bottom[1] : this->blobs_[0].get();
  const char* scale_name = bottom.size() > 1 ? "bottom[1] (the scale)" : "the learned scale";
  const int bottom_axes = bottom[0]->num_axes();
  // A scalar scale broadcasts over everything; any axis would do, and 0 is always valid.
  if (scale->num_axes() == 0) {
    axis_ = 0;
  } else {
    LAYER_CHECK(param.axis() >= -bottom_axes && param.axis() < bottom_axes)
        << "scale_param.axis is " << param.axis() << ", but bottom[0] " << bottom[0]->shape_string()
        << " has " << bottom_axes << " axes; must be in [" << -bottom_axes << ", " << bottom_axes
        << ")";
    axis_ = bottom[0]->CanonicalAxisIndex(param.axis());
  }
  bool matches = axis_ + scale->num_axes() <= bottom_axes;
  for (int i = 0; matches && i < scale->num_axes(); ++i) {
    matches = bottom[0]->shape(axis_ + i) == scale->shape(i);
  }
  LAYER_CHECK(matches) << scale_name << " " << scale->shape_string()
                       << " does not match the dims of bottom[0] " << bottom[0]->shape_string()
                       << " starting at axis " << axis_;
  outer_ = bottom[0]->count(0, axis_);
  scale_dim_ = scale->count();
  inner_ = bottom[0]->count(axis_ + scale->num_axes());
  if (bias_param_id_ >= 0) {
    const Blob<Dtype>& bias = *this->blobs_[bias_param_id_];
    LAYER_CHECK(bias.shape() == scale->shape())
        << "the bias " << bias.shape_string() << " must have the shape of " << scale_name << " "
        << scale->shape_string();
  }
  if (bottom[0] == top[0]) {
    bottom_copy_.ReshapeLike(*bottom[0]);
  } else {
    top[0]->ReshapeLike(*bottom[0]);
  }
  partials_.Reshape(vector<int>{ChannelSumPartials(outer_, scale_dim_, inner_, 2)});
}

namespace {

// Both loops below walk bottom[0] as `outer * D` planes of `inner` values, each with one scale
// index. With inner == 1 a plane is a single value; they walk rows of D values instead,
// vectorized over d.

// y = x * scale (+ bias); with copy, x is saved there first (in place, y is x).
template <bool kShift, typename Dtype>
void ScaleForward(const Dtype* x, const Dtype* scale, const Dtype* bias, int outer, int dim,
                  int inner, Dtype* y, Dtype* copy) {
  const bool parallel = static_cast<long>(outer) * dim * inner >= kParallelMinElements;
  if (inner == 1) {
    const int pieces_per_row = (dim + kLoopPieceSize - 1) / kLoopPieceSize;
    const long pieces = static_cast<long>(outer) * pieces_per_row;
#pragma omp parallel if (parallel)
    {
#pragma omp for schedule(static)
      for (long piece = 0; piece < pieces; ++piece) {
        const long row_offset = piece / pieces_per_row * dim;
        const int begin = static_cast<int>(piece % pieces_per_row) * kLoopPieceSize;
        const int end = std::min(dim, begin + kLoopPieceSize);
        if (copy) caffe_stream_copy(x + row_offset + begin, end - begin, copy + row_offset + begin);
#pragma omp simd
        for (int d = begin; d < end; ++d) {
          const Dtype value = x[row_offset + d];
          y[row_offset + d] = kShift ? value * scale[d] + bias[d] : value * scale[d];
        }
      }
      if (copy) caffe_stream_fence();
    }
    return;
  }
  const PlanePieces pieces(static_cast<long>(outer) * dim, inner);
#pragma omp parallel if (parallel)
  {
#pragma omp for schedule(static)
    for (long piece = 0; piece < pieces.total; ++piece) {
      const int d = static_cast<int>(pieces.plane(piece) % dim);
      const long offset = pieces.offset(piece);
      const int size = pieces.size(piece);
      const Dtype factor = scale[d];
      const Dtype shift = kShift ? bias[d] : Dtype(0);
      const Dtype* x_piece = x + offset;
      Dtype* y_piece = y + offset;
      if (copy) caffe_stream_copy(x_piece, size, copy + offset);
#pragma omp simd
      for (int i = 0; i < size; ++i) {
        y_piece[i] = kShift ? x_piece[i] * factor + shift : x_piece[i] * factor;
      }
    }
    if (copy) caffe_stream_fence();
  }
}

// One pass over dy (on the threads when `parallel`): per thread t, sums[t * stride + d] += dy and
// (kScaleSum) sums[t * stride + dim + d] += dy * x; with kBottomDiff, dx = dy * scale (dx may be
// dy).
template <bool kScaleSum, bool kBottomDiff, typename Dtype>
void ScaleBackward(const Dtype* dy, const Dtype* x, const Dtype* scale, int outer, int dim,
                   int inner, bool parallel, Dtype* dx, double* sums, int stride) {
  if (inner == 1) {
    const int pieces_per_row = (dim + kLoopPieceSize - 1) / kLoopPieceSize;
    const long pieces = static_cast<long>(outer) * pieces_per_row;
#pragma omp parallel for schedule(static) if (parallel)
    for (long piece = 0; piece < pieces; ++piece) {
      double* sum_dy = sums + static_cast<long>(caffe_thread_index()) * stride;
      double* sum_dy_x = sum_dy + dim;
      const long row_offset = piece / pieces_per_row * dim;
      const int begin = static_cast<int>(piece % pieces_per_row) * kLoopPieceSize;
      const int end = std::min(dim, begin + kLoopPieceSize);
#pragma omp simd
      for (int d = begin; d < end; ++d) {
        const Dtype g = dy[row_offset + d];
        sum_dy[d] += g;
        if (kScaleSum) sum_dy_x[d] += g * x[row_offset + d];
        if (kBottomDiff) dx[row_offset + d] = g * scale[d];
      }
    }
    return;
  }
  const PlanePieces pieces(static_cast<long>(outer) * dim, inner);
#pragma omp parallel for schedule(static) if (parallel)
  for (long piece = 0; piece < pieces.total; ++piece) {
    double* thread_sums = sums + static_cast<long>(caffe_thread_index()) * stride;
    const int d = static_cast<int>(pieces.plane(piece) % dim);
    const long offset = pieces.offset(piece);
    const int size = pieces.size(piece);
    const Dtype factor = kBottomDiff ? scale[d] : Dtype(0);
    const Dtype* dy_piece = dy + offset;
    const Dtype* x_piece = kScaleSum ? x + offset : nullptr;
    Dtype* dx_piece = kBottomDiff ? dx + offset : nullptr;
    double sum_dy = 0, sum_dy_x = 0;
#pragma omp simd reduction(+ : sum_dy, sum_dy_x)
    for (int i = 0; i < size; ++i) {
      const Dtype g = dy_piece[i];
      sum_dy += g;
      if (kScaleSum) sum_dy_x += g * x_piece[i];
      if (kBottomDiff) dx_piece[i] = g * factor;
    }
    thread_sums[d] += sum_dy;
    thread_sums[dim + d] += sum_dy_x;
  }
}

}  // namespace

template <typename Dtype>
void ScaleLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* x = bottom[0]->cpu_data();
  // In place, backward needs the input, which the output is about to overwrite: the same pass
  // keeps a copy.
  Dtype* copy = bottom[0] == top[0] ? bottom_copy_.mutable_cpu_data() : nullptr;
  saved_bottom_ = &bottom_copy_;
  const Dtype* scale = (bottom.size() > 1 ? bottom[1] : this->blobs_[0].get())->cpu_data();
  const Dtype* bias = bias_param_id_ >= 0 ? this->blobs_[bias_param_id_]->cpu_data() : nullptr;
  Dtype* y = top[0]->mutable_cpu_data();
  const int outer = outer_, dim = scale_dim_, inner = inner_;
  if (bias) {
    ScaleForward<true>(x, scale, bias, outer, dim, inner, y, copy);
  } else {
    ScaleForward<false>(x, scale, bias, outer, dim, inner, y, copy);
  }
}

template <typename Dtype>
void ScaleLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  const bool learned_scale = bottom.size() == 1;
  Blob<Dtype>* scale = learned_scale ? this->blobs_[0].get() : bottom[1];
  const bool bias_diff_needed = bias_param_id_ >= 0 && this->param_propagate_down(bias_param_id_);
  const bool scale_diff_needed = learned_scale ? this->param_propagate_down(0) : propagate_down[1];
  const bool bottom_diff_needed = propagate_down[0];
  if (!bias_diff_needed && !scale_diff_needed && !bottom_diff_needed) return;
  const int outer = outer_, dim = scale_dim_, inner = inner_;
  const Dtype* dy = top[0]->cpu_diff();
  const Dtype* x =
      scale_diff_needed ? (bottom[0] == top[0] ? saved_bottom_ : bottom[0])->cpu_data() : nullptr;
  const Dtype* scale_data = bottom_diff_needed ? scale->cpu_data() : nullptr;
  // In place, bottom[0]'s diff is the top's: each value of dy is read before dx overwrites it.
  Dtype* dx = bottom_diff_needed ? bottom[0]->mutable_cpu_diff() : nullptr;
  // Per-thread sums of dy and dy * x for each d, one cache line apart, added up after the pass
  // (one set when the pass runs on this thread alone).
  const bool parallel = static_cast<long>(outer) * dim * inner >= kParallelMinElements;
  const int threads = parallel ? caffe_max_threads() : 1;
  const int stride = (2 * dim + 7) / 8 * 8;
  thread_sums_.assign(static_cast<size_t>(threads) * stride, 0.0);
  double* sums = thread_sums_.data();
  if (scale_diff_needed && bottom_diff_needed) {
    ScaleBackward<true, true>(dy, x, scale_data, outer, dim, inner, parallel, dx, sums, stride);
  } else if (scale_diff_needed) {
    ScaleBackward<true, false>(dy, x, scale_data, outer, dim, inner, parallel, dx, sums, stride);
  } else if (bottom_diff_needed) {
    ScaleBackward<false, true>(dy, x, scale_data, outer, dim, inner, parallel, dx, sums, stride);
  } else {
    ScaleBackward<false, false>(dy, x, scale_data, outer, dim, inner, parallel, dx, sums, stride);
  }
  for (int t = 1; t < threads; ++t) {
    const double* thread_sums = sums + static_cast<long>(t) * stride;
    for (int j = 0; j < 2 * dim; ++j) sums[j] += thread_sums[j];
  }
  if (bias_diff_needed) {
    Dtype* bias_diff = this->blobs_[bias_param_id_]->mutable_cpu_diff();
    for (int d = 0; d < dim; ++d) bias_diff[d] = static_cast<Dtype>(bias_diff[d] + sums[d]);
  }
  if (scale_diff_needed) {
    // A learned param accumulates its diff (shared params, iter_size); a bottom's is set.
    Dtype* scale_diff = scale->mutable_cpu_diff();
    for (int d = 0; d < dim; ++d) {
      const double previous = learned_scale ? scale_diff[d] : 0.0;
      scale_diff[d] = static_cast<Dtype>(previous + sums[dim + d]);
    }
  }
}

template <typename Dtype>
bool ScaleLayer<Dtype>::ScalesChannels(int channels) const {
  return this->layer_param_.bottom_size() == 1 && axis_ == 1 && !this->blobs_.empty() &&
         this->blobs_[0]->num_axes() == 1 && this->blobs_[0]->count() == channels;
}

template <typename Dtype>
bool ScaleLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                         const Blobs<Dtype>& top,
                                         const vector<bool>& propagate_down,
                                         MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  if (bottom[0] == top[0]) {
    uses->AddData(bottom_copy_, pass == Pass::kForward ? kOverwrite : kRead);
  }
  if (Caffe::mode() == Caffe::GPU && pass == Pass::kBackward) {
    uses->AddData(partials_, kScratch);
  }
  return true;
}

INSTANTIATE_CLASS(ScaleLayer);
REGISTER_LAYER_CLASS(Scale);

}  // namespace caffe
