#include "caffe/layers/eltwise_layer.hpp"

#include "caffe/kernels/relu_math.hpp"
#include "caffe/util/cpu_threads.hpp"

namespace caffe {

namespace {

// first_coeff * first + second_coeff * second: one expression for the SUM alone and with its
// ReLU, so that both round alike.
template <typename Dtype>
inline Dtype PairSum(Dtype first_coeff, Dtype first, Dtype second_coeff, Dtype second) {
  return first_coeff * first + second_coeff * second;
}

}  // namespace

template <typename Dtype>
void EltwiseLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const EltwiseParameter& param = this->layer_param_.eltwise_param();
  op_ = param.operation();
  LAYER_CHECK(!(op_ == EltwiseParameter::PROD && param.coeff_size() > 0))
      << "eltwise_param.coeff is given, but only the SUM operation takes coefficients";
  LAYER_CHECK(param.coeff_size() == 0 || param.coeff_size() == static_cast<int>(bottom.size()))
      << "eltwise_param has " << param.coeff_size() << " coeff for " << bottom.size()
      << " bottoms; give one per bottom or none";
  coeffs_.assign(bottom.size(), Dtype(1));
  for (int i = 0; i < param.coeff_size(); ++i) coeffs_[i] = param.coeff(i);
  stable_prod_grad_ = param.stable_prod_grad();
}

template <typename Dtype>
void EltwiseLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  for (size_t i = 1; i < bottom.size(); ++i) {
    LAYER_CHECK(bottom[i]->shape() == bottom[0]->shape())
        << "bottom[" << i << "] " << bottom[i]->shape_string() << " differs from bottom[0] "
        << bottom[0]->shape_string() << "; all bottoms must have the same shape";
  }
  top[0]->ReshapeLike(*bottom[0]);
  if (op_ == EltwiseParameter::MAX) max_idx_.Reshape(bottom[0]->shape());
}

template <typename Dtype>
void EltwiseLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = top[0]->count();
  if (op_ == EltwiseParameter::SUM) return ForwardSum(bottom, top[0]);
  Dtype* top_data = top[0]->mutable_cpu_data();
  switch (op_) {
    case EltwiseParameter::PROD:
      caffe_mul(count, bottom[0]->cpu_data(), bottom[1]->cpu_data(), top_data);
      for (size_t i = 2; i < bottom.size(); ++i) {
        caffe_mul(count, top_data, bottom[i]->cpu_data(), top_data);
      }
      break;
    case EltwiseParameter::MAX: {
      int* mask = max_idx_.mutable_cpu_data();
      const Dtype* a = bottom[0]->cpu_data();
      const Dtype* b = bottom[1]->cpu_data();
      // BVLC's tie rule: bottom[1] wins a tie against bottom[0]; from bottom[2] on a bottom wins
      // only when strictly greater. It decides which bottom receives the gradient.
      for (int j = 0; j < count; ++j) {
        const bool first = a[j] > b[j];
        top_data[j] = first ? a[j] : b[j];
        mask[j] = first ? 0 : 1;
      }
      for (size_t i = 2; i < bottom.size(); ++i) {
        const Dtype* x = bottom[i]->cpu_data();
        const int index = static_cast<int>(i);
        for (int j = 0; j < count; ++j) {
          if (x[j] > top_data[j]) {
            top_data[j] = x[j];
            mask[j] = index;
          }
        }
      }
      break;
    }
    default:
      LAYER_THROW() << "unknown eltwise_param.operation " << static_cast<int>(op_);
  }
}

template <typename Dtype>
void EltwiseLayer<Dtype>::ForwardSum(const Blobs<Dtype>& bottom, Blob<Dtype>* top) {
  // Element-wise: in bottom[0]'s channel blocks, the others converted to them. The first two
  // bottoms in one pass (BVLC: a scaling, then an axpy, each a pass over the top), then an axpy
  // for each further one.
  const int block = bottom[0]->cpu_data_block();
  const int count = top->count();
  const Dtype* first = bottom[0]->cpu_data_in(block);
  const Dtype* second = bottom[1]->cpu_data_in(block);
  vector<const Dtype*> further;
  for (size_t i = 2; i < bottom.size(); ++i) further.push_back(bottom[i]->cpu_data_in(block));
  Dtype* top_data = top->mutable_cpu_data_in(block, /*keep_values=*/false);
  const Dtype first_coeff = coeffs_[0];
  const Dtype second_coeff = coeffs_[1];
  caffe_parallel_for(
      count, [=](int j) { top_data[j] = PairSum(first_coeff, first[j], second_coeff, second[j]); });
  for (size_t i = 2; i < bottom.size(); ++i)
    caffe_axpy(count, coeffs_[i], further[i - 2], top_data);
}

template <typename Dtype>
void EltwiseLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                       const Blobs<Dtype>& bottom) {
  const int count = top[0]->count();
  // Only PROD reads data (BackwardReadsTopData).
  const Dtype* top_data = op_ == EltwiseParameter::PROD ? top[0]->cpu_data() : nullptr;
  // SUM's gradients go in the channel blocks of the first bottom's values; the other
  // operations read data, plain.
  const int block = op_ == EltwiseParameter::SUM ? bottom[0]->cpu_data_block() : 1;
  const Dtype* top_diff = top[0]->cpu_diff_in(block);
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (!propagate_down[i]) continue;
    Dtype* bottom_diff = bottom[i]->mutable_cpu_diff_in(block, /*keep_values=*/false);
    switch (op_) {
      case EltwiseParameter::PROD:
        if (stable_prod_grad_) {
          // The product of the other bottoms, recomputed so a zero in bottom[i] is harmless.
          bool initialized = false;
          for (size_t j = 0; j < bottom.size(); ++j) {
            if (j == i) continue;
            if (!initialized) {
              caffe_copy(count, bottom[j]->cpu_data(), bottom_diff);
              initialized = true;
            } else {
              caffe_mul(count, bottom[j]->cpu_data(), bottom_diff, bottom_diff);
            }
          }
        } else {
          caffe_div(count, top_data, bottom[i]->cpu_data(), bottom_diff);
        }
        caffe_mul(count, bottom_diff, top_diff, bottom_diff);
        break;
      case EltwiseParameter::SUM:
        if (coeffs_[i] == Dtype(1)) {
          caffe_copy(count, top_diff, bottom_diff);
        } else {
          caffe_cpu_scale(count, coeffs_[i], top_diff, bottom_diff);
        }
        break;
      case EltwiseParameter::MAX: {
        const int* mask = max_idx_.cpu_data();
        const int index = static_cast<int>(i);
        for (int j = 0; j < count; ++j) bottom_diff[j] = mask[j] == index ? top_diff[j] : Dtype(0);
        break;
      }
      default:
        LAYER_THROW() << "unknown eltwise_param.operation " << static_cast<int>(op_);
    }
  }
}

template <typename Dtype>
bool EltwiseLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                           const Blobs<Dtype>& top,
                                           const vector<bool>& propagate_down,
                                           MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  if (op_ == EltwiseParameter::MAX) {
    uses->AddData(max_idx_, pass == Pass::kForward ? kOverwrite : kRead);
  }
  return true;
}

template <typename Dtype>
bool EltwiseLayer<Dtype>::FuseWithNext(Layer<Dtype>* next, const Blobs<Dtype>& bottom,
                                       const Blobs<Dtype>& top, const Blobs<Dtype>& next_bottom,
                                       const Blobs<Dtype>& next_top) {
  // The ReLU's gradient factor is read off its output (the top). A top that is also a bottom
  // would mix the diffs.
  if (relu_ != nullptr || op_ != EltwiseParameter::SUM || bottom.size() != 2 ||
      bottom[0] == top[0] || bottom[1] == top[0]) {
    return false;
  }
  relu_ = ReLULayer<Dtype>::FusableInPlaceOn(top[0], next, next_bottom, next_top);
  return relu_ != nullptr;
}

template <typename Dtype>
void EltwiseLayer<Dtype>::ForwardFused_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  CHECK(relu_ != nullptr) << this->error_prefix() << "runs with no ReLU";
  const int block = bottom[0]->cpu_data_block();  // as ForwardSum
  const Dtype* first = bottom[0]->cpu_data_in(block);
  const Dtype* second = bottom[1]->cpu_data_in(block);
  Dtype* top_data = top[0]->mutable_cpu_data_in(block, /*keep_values=*/false);
  const Dtype first_coeff = coeffs_[0];
  const Dtype second_coeff = coeffs_[1];
  const Dtype slope = relu_->negative_slope();
  caffe_parallel_for(top[0]->count(), [=](int j) {
    top_data[j] = ReLUOf(PairSum(first_coeff, first[j], second_coeff, second[j]), slope);
  });
}

template <typename Dtype>
void EltwiseLayer<Dtype>::BackwardFused_cpu(const Blobs<Dtype>& top,
                                            const vector<bool>& propagate_down,
                                            const Blobs<Dtype>& bottom,
                                            const vector<vector<bool>>& followers_propagate_down) {
  CHECK(relu_ != nullptr) << this->error_prefix() << "runs with no ReLU";
  if (!followers_propagate_down[0][0]) return;  // nothing below wants a gradient
  // dv, the ReLU's gradient (read from its output), over dy in the top's diff, as apart; each
  // wanted bottom diff = its coefficient * dv (apart: 1 * dv, a copy, is the same value).
  const int block = bottom[0]->cpu_data_block();  // as Backward_cpu
  const Dtype* top_data = top[0]->cpu_data_in(block);
  Dtype* top_diff = top[0]->mutable_cpu_diff_in(block, /*keep_values=*/true);
  Dtype* first_diff =
      propagate_down[0] ? bottom[0]->mutable_cpu_diff_in(block, /*keep_values=*/false) : nullptr;
  Dtype* second_diff =
      propagate_down[1] ? bottom[1]->mutable_cpu_diff_in(block, /*keep_values=*/false) : nullptr;
  const Dtype first_coeff = coeffs_[0];
  const Dtype second_coeff = coeffs_[1];
  const Dtype slope = relu_->negative_slope();
  caffe_parallel_for(top[0]->count(), [=](int j) {
    const Dtype dv = top_diff[j] * ReLUGradientFactor(top_data[j], slope);
    top_diff[j] = dv;
    if (first_diff != nullptr) first_diff[j] = first_coeff * dv;
    if (second_diff != nullptr) second_diff[j] = second_coeff * dv;
  });
}

template <typename Dtype>
bool EltwiseLayer<Dtype>::DeclareMemoryUseFused(
    Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
    const vector<bool>& propagate_down, const vector<vector<bool>>& followers_propagate_down,
    MemoryUses* uses) const {
  if (pass == Pass::kForward) return DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  if (!followers_propagate_down[0][0]) return true;  // nothing below wants a gradient
  uses->AddData(*top[0], kRead);                     // the ReLU's output: where its gradient passes
  uses->AddDiff(*top[0], kReadWrite);
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (propagate_down[i]) uses->AddDiff(*bottom[i], kOverwrite);
  }
  return true;
}

INSTANTIATE_CLASS(EltwiseLayer);
REGISTER_LAYER_CLASS(Eltwise);

}  // namespace caffe
