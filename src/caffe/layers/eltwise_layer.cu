// Eltwise on the GPU: PROD and SUM run the CPU path's sequence of array operations with the
// caffe_gpu_* functions, except that SUM adds its first two bottoms in one pass (BVLC: a copy,
// a scaling and an axpy, each a pass over the top); MAX runs one kernel per bottom that keeps the
// running maximum and the index of the bottom it came from (max_idx_, BVLC's tie rule), which
// routes the gradient. A SUM of two with the ReLU after it runs as one (ForwardFused,
// BackwardFused: see eltwise_layer.hpp).
#include "caffe/kernels/gpu_relu.cuh"
#include "caffe/layers/eltwise_layer.hpp"

namespace caffe {

namespace {

// first_coeff * first + second_coeff * second: one expression for the SUM alone and with its
// ReLU, so that both round alike.
template <typename Dtype>
__device__ __forceinline__ Dtype PairSum(Dtype first_coeff, Dtype first, Dtype second_coeff,
                                         Dtype second) {
  return first_coeff * first + second_coeff * second;
}

template <typename Dtype>
__global__ void EltwiseSumPairKernel(int count, Dtype first_coeff, const Dtype* first,
                                     Dtype second_coeff, const Dtype* second, Dtype* top_data) {
  CUDA_KERNEL_LOOP(j, count) {
    top_data[j] = PairSum(first_coeff, first[j], second_coeff, second[j]);
  }
}

// With the ReLU after it: top = ReLU(first_coeff * first + second_coeff * second).
template <typename Dtype>
__global__ void EltwiseSumReLUKernel(int count, Dtype first_coeff, const Dtype* first,
                                     Dtype second_coeff, const Dtype* second, Dtype negative_slope,
                                     Dtype* top_data) {
  CUDA_KERNEL_LOOP(j, count) {
    top_data[j] = ReLUOf(PairSum(first_coeff, first[j], second_coeff, second[j]), negative_slope);
  }
}

// Backward of the pair: dv = the ReLU's gradient (read from its output, top_data) stored in
// top_diff, which held dy; each wanted bottom diff (not null) = its coefficient * dv.
template <typename Dtype>
__global__ void EltwiseSumReLUBackwardKernel(int count, Dtype negative_slope, const Dtype* top_data,
                                             Dtype* top_diff, Dtype first_coeff, Dtype* first_diff,
                                             Dtype second_coeff, Dtype* second_diff) {
  CUDA_KERNEL_LOOP(j, count) {
    const Dtype dv = top_diff[j] * ReLUGradientFactor(top_data[j], negative_slope);
    top_diff[j] = dv;
    if (first_diff != nullptr) first_diff[j] = first_coeff * dv;
    if (second_diff != nullptr) second_diff[j] = second_coeff * dv;
  }
}

// The first two bottoms: bottom[1] wins a tie against bottom[0].
template <typename Dtype>
__global__ void EltwiseMaxFirstPairKernel(int count, const Dtype* first, const Dtype* second,
                                          Dtype* top_data, int* max_idx) {
  CUDA_KERNEL_LOOP(j, count) {
    const bool first_wins = first[j] > second[j];
    top_data[j] = first_wins ? first[j] : second[j];
    max_idx[j] = first_wins ? 0 : 1;
  }
}

// Every later bottom wins only when strictly greater.
template <typename Dtype>
__global__ void EltwiseMaxUpdateKernel(int count, int bottom_index, const Dtype* bottom_data,
                                       Dtype* top_data, int* max_idx) {
  CUDA_KERNEL_LOOP(j, count) {
    if (bottom_data[j] > top_data[j]) {
      top_data[j] = bottom_data[j];
      max_idx[j] = bottom_index;
    }
  }
}

template <typename Dtype>
__global__ void EltwiseMaxBackwardKernel(int count, int bottom_index, const int* max_idx,
                                         const Dtype* top_diff, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(j, count) {
    bottom_diff[j] = max_idx[j] == bottom_index ? top_diff[j] : Dtype(0);
  }
}

}  // namespace

template <typename Dtype>
void EltwiseLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = top[0]->count();
  if (count == 0) return;
  Dtype* top_data = top[0]->mutable_gpu_data();
  switch (op_) {
    case EltwiseParameter::PROD:
      caffe_gpu_mul(count, bottom[0]->gpu_data(), bottom[1]->gpu_data(), top_data);
      for (size_t i = 2; i < bottom.size(); ++i) {
        caffe_gpu_mul(count, top_data, bottom[i]->gpu_data(), top_data);
      }
      break;
    case EltwiseParameter::SUM:
      EltwiseSumPairKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
          count, coeffs_[0], bottom[0]->gpu_data(), coeffs_[1], bottom[1]->gpu_data(), top_data);
      CUDA_POST_KERNEL_CHECK;
      for (size_t i = 2; i < bottom.size(); ++i) {
        caffe_gpu_axpy(count, coeffs_[i], bottom[i]->gpu_data(), top_data);
      }
      break;
    case EltwiseParameter::MAX: {
      int* max_idx = max_idx_.mutable_gpu_data();
      EltwiseMaxFirstPairKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
          count, bottom[0]->gpu_data(), bottom[1]->gpu_data(), top_data, max_idx);
      CUDA_POST_KERNEL_CHECK;
      for (size_t i = 2; i < bottom.size(); ++i) {
        EltwiseMaxUpdateKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
            count, static_cast<int>(i), bottom[i]->gpu_data(), top_data, max_idx);
        CUDA_POST_KERNEL_CHECK;
      }
      break;
    }
    default:
      LAYER_THROW() << "unknown eltwise_param.operation " << static_cast<int>(op_);
  }
}

template <typename Dtype>
void EltwiseLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                       const Blobs<Dtype>& bottom) {
  const int count = top[0]->count();
  if (count == 0) return;
  // Only PROD reads data (BackwardReadsTopData): under LMS the others do not bring it back.
  const Dtype* top_data = op_ == EltwiseParameter::PROD ? top[0]->gpu_data() : nullptr;
  const Dtype* top_diff = top[0]->gpu_diff();
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (!propagate_down[i]) continue;
    Dtype* bottom_diff = bottom[i]->mutable_gpu_diff();
    switch (op_) {
      case EltwiseParameter::PROD:
        if (stable_prod_grad_) {
          // The product of the other bottoms, recomputed so a zero in bottom[i] is harmless.
          bool initialized = false;
          for (size_t j = 0; j < bottom.size(); ++j) {
            if (j == i) continue;
            if (!initialized) {
              caffe_gpu_copy(count, bottom[j]->gpu_data(), bottom_diff);
              initialized = true;
            } else {
              caffe_gpu_mul(count, bottom[j]->gpu_data(), bottom_diff, bottom_diff);
            }
          }
        } else {
          caffe_gpu_div(count, top_data, bottom[i]->gpu_data(), bottom_diff);
        }
        caffe_gpu_mul(count, bottom_diff, top_diff, bottom_diff);
        break;
      case EltwiseParameter::SUM:
        if (coeffs_[i] == Dtype(1)) {
          caffe_gpu_copy(count, top_diff, bottom_diff);
        } else {
          caffe_gpu_scale(count, coeffs_[i], top_diff, bottom_diff);
        }
        break;
      case EltwiseParameter::MAX:
        EltwiseMaxBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
            count, static_cast<int>(i), max_idx_.gpu_data(), top_diff, bottom_diff);
        CUDA_POST_KERNEL_CHECK;
        break;
      default:
        LAYER_THROW() << "unknown eltwise_param.operation " << static_cast<int>(op_);
    }
  }
}

template <typename Dtype>
void EltwiseLayer<Dtype>::ForwardFused_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  CHECK(relu_ != nullptr) << this->error_prefix() << "runs with no ReLU";
  const int count = top[0]->count();
  if (count == 0) return;
  EltwiseSumReLUKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, coeffs_[0], bottom[0]->gpu_data(), coeffs_[1], bottom[1]->gpu_data(),
      relu_->negative_slope(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void EltwiseLayer<Dtype>::BackwardFused_gpu(const Blobs<Dtype>& top,
                                            const vector<bool>& propagate_down,
                                            const Blobs<Dtype>& bottom,
                                            const vector<vector<bool>>& followers_propagate_down) {
  CHECK(relu_ != nullptr) << this->error_prefix() << "runs with no ReLU";
  const int count = top[0]->count();
  if (count == 0 || !followers_propagate_down[0][0]) return;
  EltwiseSumReLUBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, relu_->negative_slope(), top[0]->gpu_data(), top[0]->mutable_gpu_diff(), coeffs_[0],
      propagate_down[0] ? bottom[0]->mutable_gpu_diff() : nullptr, coeffs_[1],
      propagate_down[1] ? bottom[1]->mutable_gpu_diff() : nullptr);
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(EltwiseLayer);
INSTANTIATE_LAYER_GPU_FUSED_FUNCS(EltwiseLayer);

}  // namespace caffe
