#include "caffe/sgd_solvers.hpp"
#include "caffe/solvers/gpu_updates.hpp"

namespace caffe {

// history_[i] holds the running mean of squared gradients, history_[n + i] that of squared
// updates (n = number of learnable params).
template <typename Dtype>
void AdaDeltaSolver<Dtype>::AdaDeltaPreSolve() {
  for (Blob<Dtype>* param : this->net_->learnable_params()) {
    this->history_.push_back(std::make_shared<Blob<Dtype>>(param->shape()));
  }
}

template <typename Dtype>
void AdaDeltaSolver<Dtype>::ComputeUpdateValue(int param_id, Dtype rate) {
  Blob<Dtype>* param = this->net_->learnable_params()[param_id];
  const int count = param->count();
  const size_t update_history_offset = this->net_->learnable_params().size();
  const Dtype delta = this->param_.delta();
  const Dtype momentum = this->param_.momentum();
  const Dtype local_rate = rate * this->net_->params_lr()[param_id];
#ifndef CPU_ONLY
  if (Caffe::mode() == Caffe::GPU) {
    adadelta_update_gpu(count, param->mutable_gpu_diff(),
                        this->history_[param_id]->mutable_gpu_data(),
                        this->history_[update_history_offset + param_id]->mutable_gpu_data(),
                        momentum, delta, local_rate);
    return;
  }
#endif
  Dtype* grad_history = this->history_[param_id]->mutable_cpu_data();
  Dtype* update_history = this->history_[update_history_offset + param_id]->mutable_cpu_data();
  Dtype* update = this->update_[param_id]->mutable_cpu_data();
  Dtype* temp = this->temp_[param_id]->mutable_cpu_data();
  Dtype* diff = param->mutable_cpu_diff();
  caffe_powx(count, diff, Dtype(2), update);
  caffe_cpu_axpby(count, Dtype(1) - momentum, update, momentum, grad_history);
  // update = sqrt((E[dx^2] + delta) / (E[g^2] + delta))
  caffe_set(count, delta, temp);
  caffe_add(count, temp, update_history, update);
  caffe_add(count, temp, grad_history, temp);
  caffe_div(count, update, temp, update);
  caffe_powx(count, update, Dtype(0.5), update);
  caffe_mul(count, diff, update, diff);
  caffe_powx(count, diff, Dtype(2), update);
  caffe_cpu_axpby(count, Dtype(1) - momentum, update, momentum, update_history);
  caffe_cpu_scale(count, local_rate, diff, diff);
}

INSTANTIATE_CLASS(AdaDeltaSolver);
REGISTER_SOLVER_CLASS(AdaDelta);

}  // namespace caffe
