// Accuracy on the GPU: one thread per (outer, inner) position ranks its true class against the C
// scores and adds to integer counters with atomics (exact, so the result does not depend on
// thread order). The few counters come back to the host, which forms the ratios exactly as the
// CPU path does and reports an out-of-range label as it would. There is no backward pass: the
// CPU one, which only rejects gradient requests, serves both modes.
// Legend as in accuracy_layer.hpp: outer, C classes, inner; a position is (outer, inner).
#include <climits>

#include "caffe/layers/accuracy_layer.hpp"

namespace caffe {

namespace {

// Layout of the counters: [kCorrect], [kCounted], [kFirstBadLabel], then C per-class correct
// counts and C per-class position counts (AccuracyLayer::kClassCounters on).
constexpr int kCorrect = 0;
constexpr int kCounted = 1;
constexpr int kFirstBadLabel = 2;
constexpr int kClassCounters = AccuracyLayer<float>::kClassCounters;

template <typename Dtype>
__global__ void AccuracyForwardKernel(int positions, int channels, int inner, int top_k,
                                      const Dtype* scores, const Dtype* label,
                                      bool has_ignore_label, int ignore_label, bool per_class,
                                      int* counters) {
  CUDA_KERNEL_LOOP(position, positions) {
    const int label_value = static_cast<int>(label[position]);
    if (has_ignore_label && label_value == ignore_label) continue;
    if (label_value < 0 || label_value >= channels) {
      atomicMin(&counters[kFirstBadLabel], position);
      continue;
    }
    const int o = position / inner;
    const int i = position % inner;
    const Dtype* column = scores + static_cast<size_t>(o) * channels * inner + i;
    const Dtype true_score = column[label_value * inner];
    // The true class itself scores >= its own score, hence the start at -1.
    int num_better = -1;
    for (int c = 0; c < channels && num_better < top_k; ++c) {
      num_better += column[c * inner] >= true_score;
    }
    const bool correct = num_better < top_k;
    if (correct) atomicAdd(&counters[kCorrect], 1);
    atomicAdd(&counters[kCounted], 1);
    if (per_class) {
      if (correct) atomicAdd(&counters[kClassCounters + label_value], 1);
      atomicAdd(&counters[kClassCounters + channels + label_value], 1);
    }
  }
}

}  // namespace

template <typename Dtype>
void AccuracyLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int channels = channels_;
  const int positions = outer_num_ * inner_num_;
  const bool per_class = top.size() > 1;
  int* host_counters = counters_.mutable_cpu_data();
  for (int j = 0; j < counters_.count(); ++j) host_counters[j] = 0;
  host_counters[kFirstBadLabel] = INT_MAX;  // none yet
  if (positions > 0) {
    AccuracyForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(positions), CAFFE_CUDA_NUM_THREADS>>>(
        positions, channels, inner_num_, top_k_, bottom[0]->gpu_data(), bottom[1]->gpu_data(),
        has_ignore_label_, ignore_label_, per_class, counters_.mutable_gpu_data());
    CUDA_POST_KERNEL_CHECK;
  }
  const int* counters = counters_.cpu_data();
  const int bad_position = counters[kFirstBadLabel];
  if (bad_position != INT_MAX) {
    const int label_value = static_cast<int>(bottom[1]->cpu_data()[bad_position]);
    LAYER_THROW() << "label " << label_value << " at position " << bad_position
                  << " of bottom[1] is out of range; labels must be in [0, " << channels << ") for "
                  << channels << " classes"
                  << (has_ignore_label_ ? "" : " (or set accuracy_param.ignore_label)");
  }
  const int correct = counters[kCorrect];
  const int counted = counters[kCounted];
  top[0]->mutable_cpu_data()[0] = counted == 0 ? Dtype(0) : Dtype(correct) / Dtype(counted);
  if (per_class) {
    Dtype* class_accuracy = top[1]->mutable_cpu_data();
    class_count_.assign(counters + kClassCounters + channels,
                        counters + kClassCounters + 2 * channels);
    for (int c = 0; c < channels; ++c) {
      const Dtype class_correct = Dtype(counters[kClassCounters + c]);
      class_accuracy[c] = class_count_[c] == 0 ? Dtype(0) : class_correct / Dtype(class_count_[c]);
    }
  }
}

INSTANTIATE_LAYER_GPU_FORWARD(AccuracyLayer);

}  // namespace caffe
