#include <cmath>

#include "caffe/sgd_solvers.hpp"
#include "caffe/solvers/gpu_updates.hpp"

namespace caffe {

// history_[i] holds m (mean of g), history_[n + i] holds v (mean of g^2).
template <typename Dtype>
void AdamSolver<Dtype>::AdamPreSolve() {
  for (Blob<Dtype>* param : this->net_->learnable_params()) {
    this->history_.push_back(std::make_shared<Blob<Dtype>>(param->shape()));
  }
}

// m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
// step = lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps), t = iter + 1.
template <typename Dtype>
void AdamSolver<Dtype>::ComputeUpdateValue(int param_id, Dtype rate) {
  Blob<Dtype>* param = this->net_->learnable_params()[param_id];
  const int count = param->count();
  const size_t update_history_offset = this->net_->learnable_params().size();
  const Dtype local_rate = rate * this->net_->params_lr()[param_id];
  const Dtype beta1 = this->param_.momentum();
  const Dtype beta2 = this->param_.momentum2();
  const Dtype eps_hat = this->param_.delta();
  const int t = this->iter_ + 1;
  const Dtype correction =
      std::sqrt(Dtype(1) - std::pow(beta2, Dtype(t))) / (Dtype(1) - std::pow(beta1, Dtype(t)));
#ifndef CPU_ONLY
  if (Caffe::mode() == Caffe::GPU) {
    adam_update_gpu(count, param->mutable_gpu_diff(), this->history_[param_id]->mutable_gpu_data(),
                    this->history_[param_id + update_history_offset]->mutable_gpu_data(), beta1,
                    beta2, eps_hat, local_rate * correction);
    return;
  }
#endif
  Dtype* m = this->history_[param_id]->mutable_cpu_data();
  Dtype* v = this->history_[param_id + update_history_offset]->mutable_cpu_data();
  Dtype* temp = this->temp_[param_id]->mutable_cpu_data();
  caffe_cpu_axpby(count, Dtype(1) - beta1, param->cpu_diff(), beta1, m);
  caffe_mul(count, param->cpu_diff(), param->cpu_diff(), temp);
  caffe_cpu_axpby(count, Dtype(1) - beta2, temp, beta2, v);
  caffe_powx(count, v, Dtype(0.5), temp);
  caffe_add_scalar(count, eps_hat, temp);
  caffe_div(count, m, temp, temp);
  caffe_cpu_scale(count, local_rate * correction, temp, param->mutable_cpu_diff());
}

INSTANTIATE_CLASS(AdamSolver);
REGISTER_SOLVER_CLASS(Adam);

}  // namespace caffe
