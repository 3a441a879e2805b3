// Legend as in embed_layer.hpp: M indices, K table rows, N embedding size.
#include "caffe/layers/embed_layer.hpp"

#include <memory>
#include <vector>

#include "caffe/filler.hpp"

namespace caffe {

template <typename Dtype>
void EmbedLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const EmbedParameter& param = this->layer_param_.embed_param();
  num_output_ = static_cast<int>(param.num_output());
  LAYER_CHECK_GE(num_output_, 1) << "embed_param.num_output must be >= 1";
  input_dim_ = static_cast<int>(param.input_dim());
  LAYER_CHECK_GE(input_dim_, 1) << "embed_param.input_dim (the number of indices) must be >= 1";
  bias_term_ = param.bias_term();
  const std::vector<int> weight_shape{input_dim_, num_output_};
  const std::vector<int> bias_shape{num_output_};
  if (!this->blobs_.empty()) {
    LAYER_CHECK_EQ(static_cast<int>(this->blobs_.size()), 1 + bias_term_)
        << "expected " << (bias_term_ ? "weights and bias" : "weights only")
        << " (bias_term: " << (bias_term_ ? "true" : "false") << "), got " << this->blobs_.size()
        << " parameter blobs";
    LAYER_CHECK(this->blobs_[0]->shape() == weight_shape)
        << "weights have shape " << this->blobs_[0]->shape_string() << "; expected "
        << ShapeString(weight_shape) << " (input_dim, num_output)";
    if (bias_term_) {
      LAYER_CHECK(this->blobs_[1]->shape() == bias_shape)
          << "bias has shape " << this->blobs_[1]->shape_string() << "; expected "
          << ShapeString(bias_shape);
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
void EmbedLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  indices_ = bottom[0]->count();
  std::vector<int> top_shape = bottom[0]->shape();
  top_shape.push_back(num_output_);
  top[0]->Reshape(top_shape);
#ifndef CPU_ONLY
  first_invalid_.Reshape({1});  // here, so that LMS plans it
#endif
}

template <typename Dtype>
void EmbedLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  const Dtype* weight = this->blobs_[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  for (int m = 0; m < indices_; ++m) {
    const Dtype value = bottom_data[m];
    LAYER_CHECK(value >= 0 && value < input_dim_ &&
                value == static_cast<Dtype>(static_cast<int>(value)))
        << "bottom[0] value " << value << " at position " << m
        << " is not a valid index: indices must be integers in [0, input_dim) = [0, " << input_dim_
        << ")";
    caffe_copy(num_output_, weight + static_cast<int>(value) * num_output_,
               top_data + m * num_output_);
  }
  if (bias_term_) {
    const Dtype* bias = this->blobs_[1]->cpu_data();
    for (int m = 0; m < indices_; ++m) {
      caffe_axpy(num_output_, Dtype(1), bias, top_data + m * num_output_);
    }
  }
}

template <typename Dtype>
void EmbedLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[0])
      << "cannot backpropagate to its input: bottom[0] holds indices, which have no gradient";
  const Dtype* top_diff = top[0]->cpu_diff();
  if (this->param_propagate_down_[0]) {
    const Dtype* bottom_data = bottom[0]->cpu_data();
    Dtype* weight_diff = this->blobs_[0]->mutable_cpu_diff();
    for (int m = 0; m < indices_; ++m) {
      const int index = static_cast<int>(bottom_data[m]);
      caffe_axpy(num_output_, Dtype(1), top_diff + m * num_output_,
                 weight_diff + index * num_output_);
    }
  }
  if (bias_term_ && this->param_propagate_down_[1]) {
    // Sum over the indices first, then add once (BVLC's order of rounding).
    std::vector<Dtype> sum(num_output_, Dtype(0));
    for (int m = 0; m < indices_; ++m) {
      caffe_axpy(num_output_, Dtype(1), top_diff + m * num_output_, sum.data());
    }
    caffe_axpy(num_output_, Dtype(1), sum.data(), this->blobs_[1]->mutable_cpu_diff());
  }
}

template <typename Dtype>
bool EmbedLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                         const Blobs<Dtype>& top,
                                         const vector<bool>& propagate_down,
                                         MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
#ifndef CPU_ONLY
  if (Caffe::mode() == Caffe::GPU && pass == Pass::kForward) {
    uses->AddData(first_invalid_, kScratch);
  }
#endif
  return true;
}

INSTANTIATE_CLASS(EmbedLayer);
REGISTER_LAYER_CLASS(Embed);

}  // namespace caffe
