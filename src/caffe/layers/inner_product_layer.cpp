// Legend as in inner_product_layer.hpp: M examples, K inputs per example, N outputs.
#include "caffe/layers/inner_product_layer.hpp"

#include <type_traits>
#include <vector>

#include "caffe/filler.hpp"
#include "caffe/kernels/bf16_gemm.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/util/float16.hpp"

namespace caffe {

template <typename Dtype>
void InnerProductLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const InnerProductParameter& param = this->layer_param_.inner_product_param();
  outputs_ = static_cast<int>(param.num_output());
  LAYER_CHECK_GE(outputs_, 1) << "num_output must be >= 1";
  bias_term_ = param.bias_term();
  transpose_ = param.transpose();
  axis_ = bottom[0]->CanonicalAxisIndex(param.axis());
  inputs_ = bottom[0]->count(axis_);
  const std::vector<int> weight_shape =
      transpose_ ? std::vector<int>{inputs_, outputs_} : std::vector<int>{outputs_, inputs_};
  const std::vector<int> bias_shape{outputs_};
  if (!this->blobs_.empty()) {
    // Weights given with the layer: check they fit. Old models store them as (1, 1, N, K), which
    // is accepted and viewed as (N, K).
    LAYER_CHECK_EQ(static_cast<int>(this->blobs_.size()), 1 + bias_term_)
        << "expected " << (bias_term_ ? "weights and bias" : "weights only")
        << " (bias_term: " << (bias_term_ ? "true" : "false") << "), got " << this->blobs_.size()
        << " parameter blobs";
    LAYER_CHECK_EQ(this->blobs_[0]->count(), outputs_ * inputs_)
        << "weights have shape " << this->blobs_[0]->shape_string() << "; expected "
        << ShapeString(weight_shape) << " for bottom " << bottom[0]->shape_string();
    if (this->blobs_[0]->shape() != weight_shape) this->blobs_[0]->Reshape(weight_shape);
    if (bias_term_) {
      LAYER_CHECK_EQ(this->blobs_[1]->count(), outputs_)
          << "bias has shape " << this->blobs_[1]->shape_string() << "; expected "
          << ShapeString(bias_shape);
      if (this->blobs_[1]->shape() != bias_shape) this->blobs_[1]->Reshape(bias_shape);
    }
    VLOG(1) << "Skipping parameter initialization";
  } else {
    this->blobs_.resize(bias_term_ ? 2 : 1);
    this->blobs_[0] = std::make_shared<Blob<Dtype>>(weight_shape);
    GetFiller<Dtype>(param.weight_filler())->Fill(this->blobs_[0].get());
    if (bias_term_) {
      this->blobs_[1] = std::make_shared<Blob<Dtype>>(bias_shape);
      GetFiller<Dtype>(param.bias_filler())->Fill(this->blobs_[1].get());
    }
  }
  this->param_propagate_down_.resize(this->blobs_.size(), true);
}

template <typename Dtype>
void InnerProductLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int axis = bottom[0]->CanonicalAxisIndex(this->layer_param_.inner_product_param().axis());
  LAYER_CHECK_EQ(bottom[0]->count(axis), inputs_)
      << "bottom " << bottom[0]->shape_string() << " has the wrong number of inputs per example "
      << "(the product of the axes from " << axis << " on) for the weights";
  axis_ = axis;
  examples_ = bottom[0]->count(0, axis_);
  std::vector<int> top_shape(bottom[0]->shape().begin(), bottom[0]->shape().begin() + axis_);
  top_shape.push_back(outputs_);
  top[0]->Reshape(top_shape);
  const bool asked = this->forward_math() == BFLOAT16 || this->backward_math() == BFLOAT16;
  if (asked && examples_ < kBf16MinExamples && !said_fp32_at_small_batch_) {
    said_fp32_at_small_batch_ = true;
    LOG_IF(INFO, Caffe::root_solver())
        << "layer '" << this->layer_param_.name() << "': at batch " << examples_ << " (below "
        << kBf16MinExamples << ") its products stay fp32: reading the weights bounds them, and "
        << "rounding them to bf16 first would cost more than it saves";
  }
}

namespace {

// The products of the forward pass (top = bottom W^T, or bottom W with transpose) and of the
// bottom's gradient (top_diff W, or top_diff W^T), in bf16 with the weights already rounded
// where `weights_bf16` is given (float nets only), else in the layer's Dtype.
template <typename Dtype>
void WeightsProduct(CBLAS_TRANSPOSE trans_w, int M, int N, int K, const Dtype* A,
                    const Dtype* weights, const uint16_t* weights_bf16, Dtype* C) {
  caffe_cpu_gemm<Dtype>(CblasNoTrans, trans_w, M, N, K, Dtype(1), A, weights, Dtype(0), C);
}

template <>
void WeightsProduct<float>(CBLAS_TRANSPOSE trans_w, int M, int N, int K, const float* A,
                           const float* weights, const uint16_t* weights_bf16, float* C) {
  if (!weights_bf16) {
    return caffe_cpu_gemm<float>(CblasNoTrans, trans_w, M, N, K, 1.f, A, weights, 0.f, C);
  }
  caffe_cpu_gemm_bf16(CblasNoTrans, trans_w, M, N, K, 1.f, A, K, weights_bf16, 0.f, C, N);
}

// dW += A^T B (both the layer's activations or gradients), in bf16 where `bf16`.
template <typename Dtype>
void WeightGradient(bool bf16, int M, int N, int K, const Dtype* A, const Dtype* B, Dtype* C) {
  caffe_cpu_gemm<Dtype>(CblasTrans, CblasNoTrans, M, N, K, Dtype(1), A, B, Dtype(1), C);
}

template <>
void WeightGradient<float>(bool bf16, int M, int N, int K, const float* A, const float* B,
                           float* C) {
  if (!bf16) return caffe_cpu_gemm<float>(CblasTrans, CblasNoTrans, M, N, K, 1.f, A, B, 1.f, C);
  caffe_cpu_gemm_bf16(CblasTrans, CblasNoTrans, M, N, K, 1.f, A, M, B, N, 1.f, C, N);
}

}  // namespace

template <typename Dtype>
const uint16_t* InnerProductLayer<Dtype>::WeightsInBf16(bool reuse) {
  if constexpr (std::is_same<Dtype, float>::value) {
    if (reuse && weights_bf16_ready_) return weights_bf16_.data();
    const Blob<float>& weights = *this->blobs_[0];
    weights_bf16_.resize(weights.count());
    FloatsToBf16(weights.cpu_data(), weights.count(), weights_bf16_.data());
    weights_bf16_ready_ = true;
    return weights_bf16_.data();
  }
  return nullptr;  // double nets compute in double
}

template <typename Dtype>
void InnerProductLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* weights = this->blobs_[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const bool bf16 = this->forward_math() == BFLOAT16 && examples_ >= kBf16MinExamples;
  weights_bf16_ready_ = false;
  WeightsProduct<Dtype>(transpose_ ? CblasNoTrans : CblasTrans, examples_, outputs_, inputs_,
                        bottom[0]->cpu_data(), weights, bf16 ? WeightsInBf16(false) : nullptr,
                        top_data);
  if (bias_term_) {
    const Dtype* bias = this->blobs_[1]->cpu_data();
    for (int m = 0; m < examples_; ++m) {
      Dtype* row = top_data + m * outputs_;
      for (int n = 0; n < outputs_; ++n) row[n] += bias[n];
    }
  }
}

template <typename Dtype>
void InnerProductLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top,
                                            const vector<bool>& propagate_down,
                                            const Blobs<Dtype>& bottom) {
  const Dtype* top_diff = top[0]->cpu_diff();
  const bool bf16 = this->backward_math() == BFLOAT16 && examples_ >= kBf16MinExamples;
  // Param diffs accumulate (the net clears them before each backward pass, as in BVLC).
  if (this->param_propagate_down_[0]) {
    const Dtype* bottom_data = bottom[0]->cpu_data();
    Dtype* weight_diff = this->blobs_[0]->mutable_cpu_diff();
    if (transpose_) {  // dW (K, N) += bottom^T * top_diff
      WeightGradient<Dtype>(bf16, inputs_, outputs_, examples_, bottom_data, top_diff, weight_diff);
    } else {  // dW (N, K) += top_diff^T * bottom
      WeightGradient<Dtype>(bf16, outputs_, inputs_, examples_, top_diff, bottom_data, weight_diff);
    }
  }
  if (bias_term_ && this->param_propagate_down_[1]) {
    Dtype* bias_diff = this->blobs_[1]->mutable_cpu_diff();
    for (int m = 0; m < examples_; ++m) {
      const Dtype* row = top_diff + m * outputs_;
      for (int n = 0; n < outputs_; ++n) bias_diff[n] += row[n];
    }
  }
  if (propagate_down[0]) {
    WeightsProduct<Dtype>(transpose_ ? CblasTrans : CblasNoTrans, examples_, inputs_, outputs_,
                          top_diff, this->blobs_[0]->cpu_data(),
                          bf16 ? WeightsInBf16(true) : nullptr, bottom[0]->mutable_cpu_diff());
  }
}

INSTANTIATE_CLASS(InnerProductLayer);
REGISTER_LAYER_CLASS(InnerProduct);

}  // namespace caffe
