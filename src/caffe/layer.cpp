#include "caffe/layer.hpp"

#include <algorithm>

namespace caffe {

template <typename Dtype>
Layer<Dtype>::Layer(const LayerParameter& param) : layer_param_(param), phase_(param.phase()) {
  if (layer_param_.blobs_size() > 0) {
    blobs_.resize(layer_param_.blobs_size());
    for (int i = 0; i < layer_param_.blobs_size(); ++i) {
      blobs_[i] = std::make_shared<Blob<Dtype>>();
      blobs_[i]->FromProto(layer_param_.blobs(i));
    }
  }
}

template <typename Dtype>
string Layer<Dtype>::error_prefix() const {
  return string(type()) + " layer '" + layer_param_.name() + "': ";
}

template <typename Dtype>
void Layer<Dtype>::SetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  CheckBlobCounts(bottom, top);
  CheckInPlace(bottom, top);
  LayerSetUp(bottom, top);
  Reshape(bottom, top);
  SetLossWeights(top);
}

template <typename Dtype>
Dtype Layer<Dtype>::Forward(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  Dtype loss = 0;
  Reshape(bottom, top);
  switch (Caffe::mode()) {
    case Caffe::CPU:
      Forward_cpu(bottom, top);
      break;
    case Caffe::GPU:
      Forward_gpu(bottom, top);
      break;
  }
  for (size_t top_id = 0; top_id < top.size(); ++top_id) {
    if (!this->loss(static_cast<int>(top_id))) continue;
    const int count = top[top_id]->count();
    // The loss weight of every element of a loss top is stored in its diff.
#ifndef CPU_ONLY
    if (Caffe::mode() == Caffe::GPU) {
      Dtype top_loss = 0;
      caffe_gpu_dot(count, top[top_id]->gpu_data(), top[top_id]->gpu_diff(), &top_loss);
      loss += top_loss;
      continue;
    }
#endif
    loss += caffe_cpu_dot(count, top[top_id]->cpu_data(), top[top_id]->cpu_diff());
  }
  return loss_scale_ == Dtype(1) ? loss : loss / loss_scale_;
}

namespace {

// Whether a backward step of `layer` reaches anything: a bottom whose gradient is asked for, or a
// parameter that learns. Under `caffe time` every layer of a net that needs no backward (a deploy
// net) takes its backward step, and one that reaches nothing should not even allocate the top's
// gradient (on the GPU, device memory) only to ignore it.
template <typename Dtype>
bool BackwardReachesAnything(const Layer<Dtype>& layer, size_t params,
                             const vector<bool>& propagate_down) {
  if (std::find(propagate_down.begin(), propagate_down.end(), true) != propagate_down.end()) {
    return true;
  }
  for (size_t i = 0; i < params; ++i) {
    if (layer.param_propagate_down(static_cast<int>(i))) return true;
  }
  return false;
}

}  // namespace

template <typename Dtype>
void Layer<Dtype>::Backward(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                            const Blobs<Dtype>& bottom) {
  if (!BackwardReachesAnything(*this, blobs_.size(), propagate_down)) return;
  switch (Caffe::mode()) {
    case Caffe::CPU:
      Backward_cpu(top, propagate_down, bottom);
      break;
    case Caffe::GPU:
      Backward_gpu(top, propagate_down, bottom);
      break;
  }
}

template <typename Dtype>
bool Layer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                                    const vector<bool>& propagate_down, MemoryUses* uses) const {
  const unsigned output = WritesWholeOutputs() ? kOverwrite : kWrite;
  if (pass == Pass::kForward) {
    for (const Blob<Dtype>* blob : bottom) uses->AddData(*blob, kRead);
    for (const auto& param : blobs_) uses->AddData(*param, kRead);
    for (size_t i = 0; i < top.size(); ++i) {
      uses->AddData(*top[i], output);
      // Forward reads a loss top back, weighted by the loss weights kept in its diff.
      if (loss(static_cast<int>(i)) != Dtype(0)) {
        uses->AddData(*top[i], kRead);
        uses->AddDiff(*top[i], kRead);
      }
    }
    return true;
  }
  // Backward: nothing where it reaches nothing (Backward returns at once); otherwise the tops'
  // gradients, and the data blobs the layer's gradients read again.
  if (!BackwardReachesAnything(*this, blobs_.size(), propagate_down)) return true;
  for (size_t i = 0; i < top.size(); ++i) {
    if (BackwardReadsTopData(static_cast<int>(i))) uses->AddData(*top[i], kRead);
    uses->AddDiff(*top[i], kRead);
  }
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (BackwardReadsBottomData(static_cast<int>(i))) uses->AddData(*bottom[i], kRead);
    if (i < propagate_down.size() && propagate_down[i]) uses->AddDiff(*bottom[i], output);
  }
  for (size_t i = 0; i < blobs_.size(); ++i) {
    uses->AddData(*blobs_[i], kRead);
    // Parameter gradients accumulate over iterations (iter_size) and shared uses.
    if (param_propagate_down(static_cast<int>(i))) uses->AddDiff(*blobs_[i], kReadWrite);
  }
  return true;
}

template <typename Dtype>
void Layer<Dtype>::ToProto(LayerParameter* param, bool write_diff) {
  param->Clear();
  param->CopyFrom(layer_param_);
  param->clear_blobs();
  for (const auto& blob : blobs_) blob->ToProto(param->add_blobs(), write_diff);
}

template <typename Dtype>
void Layer<Dtype>::SetLossScale(Dtype scale, const Blobs<Dtype>& top) {
  loss_scale_ = scale;
  for (size_t top_id = 0; top_id < top.size() && top_id < loss_.size(); ++top_id) {
    if (loss_[top_id] == Dtype(0)) continue;
    caffe_set(top[top_id]->count(), loss_[top_id] * scale, top[top_id]->mutable_cpu_diff());
  }
}

template <typename Dtype>
void Layer<Dtype>::set_loss(int top_index, Dtype value) {
  if (static_cast<int>(loss_.size()) <= top_index) loss_.resize(top_index + 1, Dtype(0));
  loss_[top_index] = value;
}

template <typename Dtype>
void Layer<Dtype>::set_param_propagate_down(int param_id, bool value) {
  if (static_cast<int>(param_propagate_down_.size()) <= param_id) {
    param_propagate_down_.resize(param_id + 1, true);
  }
  param_propagate_down_[param_id] = value;
}

template <typename Dtype>
void Layer<Dtype>::CheckBlobCounts(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int num_bottom = static_cast<int>(bottom.size());
  const int num_top = static_cast<int>(top.size());
  if (ExactNumBottomBlobs() >= 0) {
    LAYER_CHECK_EQ(ExactNumBottomBlobs(), num_bottom)
        << "takes " << ExactNumBottomBlobs() << " bottom blob(s) as input, got " << num_bottom;
  }
  if (MinBottomBlobs() >= 0) {
    LAYER_CHECK_LE(MinBottomBlobs(), num_bottom)
        << "takes at least " << MinBottomBlobs() << " bottom blob(s), got " << num_bottom;
  }
  if (MaxBottomBlobs() >= 0) {
    LAYER_CHECK_GE(MaxBottomBlobs(), num_bottom)
        << "takes at most " << MaxBottomBlobs() << " bottom blob(s), got " << num_bottom;
  }
  if (ExactNumTopBlobs() >= 0) {
    LAYER_CHECK_EQ(ExactNumTopBlobs(), num_top)
        << "produces " << ExactNumTopBlobs() << " top blob(s) as output, got " << num_top;
  }
  if (MinTopBlobs() >= 0) {
    LAYER_CHECK_LE(MinTopBlobs(), num_top)
        << "produces at least " << MinTopBlobs() << " top blob(s), got " << num_top;
  }
  if (MaxTopBlobs() >= 0) {
    LAYER_CHECK_GE(MaxTopBlobs(), num_top)
        << "produces at most " << MaxTopBlobs() << " top blob(s), got " << num_top;
  }
  if (EqualNumBottomTopBlobs()) {
    LAYER_CHECK_EQ(num_bottom, num_top) << "needs as many top blobs as bottom blobs: got "
                                        << num_bottom << " bottoms and " << num_top << " tops";
  }
}

template <typename Dtype>
void Layer<Dtype>::CheckInPlace(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) const {
  for (size_t j = 0; j < top.size(); ++j) {
    for (size_t i = 0; i < bottom.size(); ++i) {
      if (top[j] != bottom[i] || AllowsInPlace(static_cast<int>(i), static_cast<int>(j))) {
        continue;
      }
      const std::string name = static_cast<int>(j) < layer_param_.top_size()
                                   ? " '" + layer_param_.top(static_cast<int>(j)) + "'"
                                   : "";
      LAYER_THROW() << "top[" << j << "]" << name << " is also bottom[" << i << "]: " << type()
                    << " cannot run in place (its results would be wrong); give the top a name "
                       "of its own";
    }
  }
}

template <typename Dtype>
void Layer<Dtype>::SetLossWeights(const Blobs<Dtype>& top) {
  const int num_loss_weights = layer_param_.loss_weight_size();
  if (num_loss_weights == 0) return;
  LAYER_CHECK_EQ(static_cast<int>(top.size()), num_loss_weights)
      << "loss_weight must be unspecified or given once per top blob";
  for (int top_id = 0; top_id < static_cast<int>(top.size()); ++top_id) {
    const Dtype loss_weight = layer_param_.loss_weight(top_id);
    if (loss_weight == Dtype(0)) continue;
    set_loss(top_id, loss_weight);
    caffe_set(top[top_id]->count(), loss_weight * loss_scale_, top[top_id]->mutable_cpu_diff());
  }
}

INSTANTIATE_CLASS(Layer);

}  // namespace caffe
