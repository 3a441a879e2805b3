// Numerical gradient checking: compares a layer's Backward against central finite differences of
// an objective over its tops. The objective is half the sum of squares of all top values, or (for
// the exhaustive and element-wise checks) twice one chosen top element, so every top element's
// gradient path is exercised. Near a kink (|x| within kink_range of kink) non-smooth layers are
// not checked, since finite differences straddle the kink there.
#ifndef CAFFE_TEST_GRADIENT_CHECK_UTIL_HPP_
#define CAFFE_TEST_GRADIENT_CHECK_UTIL_HPP_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "caffe/layer.hpp"
#include "caffe/net.hpp"

namespace caffe {

template <typename Dtype>
class GradientChecker {
 public:
  /// `stepsize` is the finite-difference step, `threshold` the tolerance relative to
  /// max(|computed|, |estimated|, 1). The seed is reset before every forward so stochastic layers
  /// (Dropout) draw the same mask each time.
  GradientChecker(Dtype stepsize, Dtype threshold, unsigned int seed = 1701, Dtype kink = 0,
                  Dtype kink_range = -1)
      : stepsize_(stepsize),
        threshold_(threshold),
        seed_(seed),
        kink_(kink),
        kink_range_(kink_range) {}

  /// Sets the layer up and checks all bottoms (check_bottom -1) or one, and all params, against
  /// the sum-of-squares objective.
  void CheckGradient(Layer<Dtype>* layer, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                     int check_bottom = -1) {
    layer->SetUp(bottom, top);
    CheckGradientSingle(layer, bottom, top, check_bottom, -1, -1);
  }
  /// Checks the gradient of every top element separately.
  void CheckGradientExhaustive(Layer<Dtype>* layer, const Blobs<Dtype>& bottom,
                               const Blobs<Dtype>& top, int check_bottom = -1) {
    layer->SetUp(bottom, top);
    ASSERT_GT(top.size(), 0u) << "Exhaustive mode requires at least one top blob.";
    for (size_t i = 0; i < top.size(); ++i) {
      for (int j = 0; j < top[i]->count(); ++j) {
        CheckGradientSingle(layer, bottom, top, check_bottom, static_cast<int>(i), j);
      }
    }
  }
  /// For element-wise layers: top[i] depends only on bottom[i], so only that pair is differenced
  /// and every other derivative must be exactly 0.
  void CheckGradientEltwise(Layer<Dtype>* layer, const Blobs<Dtype>& bottom,
                            const Blobs<Dtype>& top) {
    layer->SetUp(bottom, top);
    ASSERT_GT(top.size(), 0u) << "Eltwise mode requires at least one top blob.";
    for (size_t i = 0; i < top.size(); ++i) {
      for (int j = 0; j < top[i]->count(); ++j) {
        CheckGradientSingle(layer, bottom, top, -1, static_cast<int>(i), j, true);
      }
    }
  }

  void CheckGradientSingle(Layer<Dtype>* layer, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                           int check_bottom, int top_id, int top_data_id,
                           bool element_wise = false);

  /// Checks every layer of a net, back to front, on the net's current inputs.
  void CheckGradientNet(const Net<Dtype>& net, const Blobs<Dtype>& input);

 protected:
  Dtype GetObjAndGradient(const Layer<Dtype>& layer, const Blobs<Dtype>& top, int top_id = -1,
                          int top_data_id = -1);

  Dtype stepsize_;
  Dtype threshold_;
  unsigned int seed_;
  Dtype kink_;
  Dtype kink_range_;
};

template <typename Dtype>
void GradientChecker<Dtype>::CheckGradientSingle(Layer<Dtype>* layer, const Blobs<Dtype>& bottom,
                                                 const Blobs<Dtype>& top, int check_bottom,
                                                 int top_id, int top_data_id, bool element_wise) {
  if (element_wise) {
    ASSERT_EQ(0u, layer->blobs().size());
    ASSERT_LE(0, top_id);
    ASSERT_LE(0, top_data_id);
    const int top_count = top[top_id]->count();
    for (size_t blob_id = 0; blob_id < bottom.size(); ++blob_id) {
      ASSERT_EQ(top_count, bottom[blob_id]->count());
    }
  }
  // The blobs to check: every learned param (diffs zeroed first), then the bottoms asked for.
  Blobs<Dtype> blobs_to_check;
  vector<bool> propagate_down(bottom.size(), check_bottom == -1);
  for (auto& param : layer->blobs()) {
    caffe_set(param->count(), Dtype(0), param->mutable_cpu_diff());
    blobs_to_check.push_back(param.get());
  }
  if (check_bottom == -1) {
    for (auto* blob : bottom) blobs_to_check.push_back(blob);
  } else if (check_bottom >= 0) {
    ASSERT_LT(check_bottom, static_cast<int>(bottom.size()));
    blobs_to_check.push_back(bottom[check_bottom]);
    propagate_down[check_bottom] = true;
  }
  ASSERT_GT(blobs_to_check.size(), 0u) << "No blobs to check.";

  // The analytic gradient.
  Caffe::set_random_seed(seed_);
  layer->Forward(bottom, top);
  GetObjAndGradient(*layer, top, top_id, top_data_id);
  layer->Backward(top, propagate_down, bottom);
  // An array rather than a vector of unique_ptrs, whose inlined destruction GCC 12 at -O3 takes
  // for freeing a non-heap pointer (-Wfree-nonheap-object, a false positive).
  std::unique_ptr<Blob<Dtype>[]> computed(new Blob<Dtype>[blobs_to_check.size()]);
  for (size_t blob_id = 0; blob_id < blobs_to_check.size(); ++blob_id) {
    computed[blob_id].ReshapeLike(*blobs_to_check[blob_id]);
    caffe_copy(blobs_to_check[blob_id]->count(), blobs_to_check[blob_id]->cpu_diff(),
               computed[blob_id].mutable_cpu_data());
  }

  // The numerical gradient, one input element at a time.
  for (size_t blob_id = 0; blob_id < blobs_to_check.size(); ++blob_id) {
    Blob<Dtype>* current_blob = blobs_to_check[blob_id];
    const Dtype* computed_gradients = computed[blob_id].cpu_data();
    for (int feat_id = 0; feat_id < current_blob->count(); ++feat_id) {
      Dtype estimated_gradient = 0;
      if (!element_wise || feat_id == top_data_id) {
        current_blob->mutable_cpu_data()[feat_id] += stepsize_;
        Caffe::set_random_seed(seed_);
        layer->Forward(bottom, top);
        Dtype positive_objective = GetObjAndGradient(*layer, top, top_id, top_data_id);
        current_blob->mutable_cpu_data()[feat_id] -= stepsize_ * 2;
        Caffe::set_random_seed(seed_);
        layer->Forward(bottom, top);
        Dtype negative_objective = GetObjAndGradient(*layer, top, top_id, top_data_id);
        current_blob->mutable_cpu_data()[feat_id] += stepsize_;
        estimated_gradient = (positive_objective - negative_objective) / stepsize_ / Dtype(2);
      }
      Dtype computed_gradient = computed_gradients[feat_id];
      Dtype feature = current_blob->cpu_data()[feat_id];
      if (kink_ - kink_range_ > std::fabs(feature) || std::fabs(feature) > kink_ + kink_range_) {
        Dtype scale = std::max<Dtype>(
            std::max(std::fabs(computed_gradient), std::fabs(estimated_gradient)), Dtype(1));
        EXPECT_NEAR(computed_gradient, estimated_gradient, threshold_ * scale)
            << "debug: (top_id, top_data_id, blob_id, feat_id)=" << top_id << "," << top_data_id
            << "," << blob_id << "," << feat_id << "; feat = " << feature
            << "; objective+ = " << estimated_gradient;
      }
    }
  }
}

template <typename Dtype>
void GradientChecker<Dtype>::CheckGradientNet(const Net<Dtype>& net, const Blobs<Dtype>& input) {
  const auto& layers = net.layers();
  const auto& bottom_vecs = net.bottom_vecs();
  const auto& top_vecs = net.top_vecs();
  for (int i = static_cast<int>(layers.size()) - 1; i >= 0; --i) {
    // Source layers (data, inputs) have nothing to differentiate.
    if (bottom_vecs[i].empty() && layers[i]->blobs().empty()) continue;
    CheckGradientExhaustive(layers[i].get(), bottom_vecs[i], top_vecs[i]);
  }
}

template <typename Dtype>
Dtype GradientChecker<Dtype>::GetObjAndGradient(const Layer<Dtype>& layer, const Blobs<Dtype>& top,
                                                int top_id, int top_data_id) {
  Dtype loss = 0;
  if (top_id < 0) {
    // Half the sum of squares of all tops: d/dtop = top.
    for (auto* top_blob : top) {
      const Dtype* top_data = top_blob->cpu_data();
      for (int j = 0; j < top_blob->count(); ++j) loss += top_data[j] * top_data[j];
      caffe_copy(top_blob->count(), top_data, top_blob->mutable_cpu_diff());
    }
    loss /= 2;
  } else {
    // Twice one element: its diff is 2, every other diff 0.
    for (auto* top_blob : top) {
      caffe_set(top_blob->count(), Dtype(0), top_blob->mutable_cpu_diff());
    }
    const Dtype loss_weight = 2;
    loss = top[top_id]->cpu_data()[top_data_id] * loss_weight;
    top[top_id]->mutable_cpu_diff()[top_data_id] = loss_weight;
  }
  return loss;
}

}  // namespace caffe

#endif  // CAFFE_TEST_GRADIENT_CHECK_UTIL_HPP_
