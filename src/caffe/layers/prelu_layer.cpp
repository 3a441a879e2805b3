// Legend as in prelu_layer.hpp: N batch, C channels, S = product of the axes after the channels.
#include "caffe/layers/prelu_layer.hpp"

#include <algorithm>
#include <memory>

#include "caffe/filler.hpp"
#include "caffe/kernels/gpu_channel_sums.hpp"
#include "caffe/kernels/relu_math.hpp"
#include "caffe/util/cpu_threads.hpp"

namespace caffe {

template <typename Dtype>
void PReLULayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const PReLUParameter& param = this->layer_param_.prelu_param();
  LAYER_CHECK_GE(bottom[0]->num_axes(), 2)
      << "bottom[0] " << bottom[0]->shape_string() << " needs a channel axis (at least 2 axes)";
  channel_shared_ = param.channel_shared();
  channels_ = bottom[0]->shape(1);
  const int expected = channel_shared_ ? 1 : channels_;
  if (!this->blobs_.empty()) {
    LAYER_CHECK_EQ(static_cast<int>(this->blobs_.size()), 1)
        << "expected one parameter blob (the slopes), got " << this->blobs_.size();
    LAYER_CHECK_EQ(this->blobs_[0]->count(), expected)
        << "the slopes have shape " << this->blobs_[0]->shape_string() << "; expected "
        << (channel_shared_ ? "1 value (channel_shared)" : "one per channel of bottom[0] ")
        << (channel_shared_ ? "" : bottom[0]->shape_string());
    VLOG(1) << "Skipping parameter initialization";
  } else {
    const vector<int> slope_shape = channel_shared_ ? vector<int>{} : vector<int>{channels_};
    this->blobs_.push_back(std::make_shared<Blob<Dtype>>(slope_shape));
    FillerParameter filler_param;
    if (param.has_filler()) {
      filler_param = param.filler();
    } else {
      filler_param.set_type("constant");
      filler_param.set_value(0.25f);
    }
    GetFiller<Dtype>(filler_param)->Fill(this->blobs_[0].get());
  }
  this->param_propagate_down_.resize(this->blobs_.size(), true);
}

template <typename Dtype>
void PReLULayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LAYER_CHECK_GE(bottom[0]->num_axes(), 2)
      << "bottom[0] " << bottom[0]->shape_string() << " needs a channel axis (at least 2 axes)";
  if (!channel_shared_) {
    LAYER_CHECK_EQ(bottom[0]->shape(1), channels_)
        << "bottom[0] " << bottom[0]->shape_string()
        << " has a different number of channels than the slopes were made for";
  }
  top[0]->ReshapeLike(*bottom[0]);
  if (top[0] == bottom[0]) bottom_memory_.ReshapeLike(*bottom[0]);
  slope_outer_ = channel_shared_ ? 1 : bottom[0]->shape(0);
  slope_inner_ = channel_shared_ ? bottom[0]->count() : bottom[0]->count(2);
  partials_.Reshape(vector<int>{
      ChannelSumPartials(slope_outer_, channel_shared_ ? 1 : channels_, slope_inner_, 1)});
}

template <typename Dtype>
void PReLULayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  const Dtype* bottom_data = bottom[0]->cpu_data();
  // In place the input is about to be overwritten; backward needs it.
  if (top[0] == bottom[0]) caffe_copy(count, bottom_data, bottom_memory_.mutable_cpu_data());
  Dtype* top_data = top[0]->mutable_cpu_data();
  const Dtype* slope = this->blobs_[0]->cpu_data();
  const int channels = channel_shared_ ? 1 : channels_;
  const PlanePieces pieces(bottom[0]->count(0, 2), bottom[0]->count(2));
#pragma omp parallel for schedule(static) if (count >= kParallelMinElements)
  for (long piece = 0; piece < pieces.total; ++piece) {
    const Dtype a = slope[pieces.plane(piece) % channels];
    const Dtype* x = bottom_data + pieces.offset(piece);
    Dtype* y = top_data + pieces.offset(piece);
    const int size = pieces.size(piece);
#pragma omp simd
    for (int i = 0; i < size; ++i) y[i] = ReLUOf(x[i], a);
  }
}

template <typename Dtype>
void PReLULayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  const bool slope_diff_needed = this->param_propagate_down_[0];
  const bool bottom_diff_needed = propagate_down[0];
  if (!slope_diff_needed && !bottom_diff_needed) return;
  const int count = bottom[0]->count();
  const Dtype* bottom_data =
      top[0] == bottom[0] ? bottom_memory_.cpu_data() : bottom[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  const Dtype* slope = this->blobs_[0]->cpu_data();
  // In place, the bottom diff is the top diff: each value is read before it is overwritten.
  Dtype* bottom_diff = bottom_diff_needed ? bottom[0]->mutable_cpu_diff() : nullptr;
  const int channels = channel_shared_ ? 1 : channels_;
  const PlanePieces pieces(bottom[0]->count(0, 2), bottom[0]->count(2));
  const bool parallel = count >= kParallelMinElements;
  // Each thread's sums of top_diff * x over x <= 0 per slope, a cache line apart, added up in
  // double after the pass.
  const int threads = parallel ? caffe_max_threads() : 1;
  const int stride = (channels + 7) / 8 * 8;
  thread_sums_.assign(static_cast<size_t>(threads) * stride, 0.0);
  double* sums = thread_sums_.data();
#pragma omp parallel for schedule(static) if (parallel)
  for (long piece = 0; piece < pieces.total; ++piece) {
    const int c = static_cast<int>(pieces.plane(piece) % channels);
    const Dtype a = slope[c];
    const Dtype* x = bottom_data + pieces.offset(piece);
    const Dtype* dy = top_diff + pieces.offset(piece);
    Dtype* dx = bottom_diff_needed ? bottom_diff + pieces.offset(piece) : nullptr;
    const int size = pieces.size(piece);
    double sum = 0;
    // BVLC's values, written as selections, which vectorize: the slope gradient's terms are
    // top_diff * x where x <= 0 (NaN where x is), the bottom's top_diff times 1 or the slope (0
    // where x is NaN).
    if (bottom_diff_needed) {
#pragma omp simd reduction(+ : sum)
      for (int i = 0; i < size; ++i) {
        const Dtype g = dy[i];
        sum += x[i] > Dtype(0) ? Dtype(0) : g * x[i];
        dx[i] = g * ReLUGradientFactor(x[i], a);
      }
    } else {
#pragma omp simd reduction(+ : sum)
      for (int i = 0; i < size; ++i) sum += x[i] > Dtype(0) ? Dtype(0) : dy[i] * x[i];
    }
    sums[static_cast<long>(caffe_thread_index()) * stride + c] += sum;
  }
  if (slope_diff_needed) {
    Dtype* slope_diff = this->blobs_[0]->mutable_cpu_diff();
    for (int c = 0; c < channels; ++c) {
      double total = 0;
      for (int t = 0; t < threads; ++t) total += sums[static_cast<long>(t) * stride + c];
      slope_diff[c] = static_cast<Dtype>(slope_diff[c] + total);
    }
  }
}

template <typename Dtype>
bool PReLULayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                         const Blobs<Dtype>& top,
                                         const vector<bool>& propagate_down,
                                         MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  if (bottom[0] == top[0]) {
    uses->AddData(bottom_memory_, pass == Pass::kForward ? kOverwrite : kRead);
  }
  if (Caffe::mode() == Caffe::GPU && pass == Pass::kBackward) {
    uses->AddData(partials_, kScratch);
  }
  return true;
}

INSTANTIATE_CLASS(PReLULayer);
REGISTER_LAYER_CLASS(PReLU);

}  // namespace caffe
