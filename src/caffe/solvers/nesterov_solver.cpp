#include "caffe/sgd_solvers.hpp"
#include "caffe/solvers/gpu_updates.hpp"

namespace caffe {

// v' = momentum * v + lr * g; the step applied is (1 + momentum) * v' - momentum * v.
template <typename Dtype>
void NesterovSolver<Dtype>::ComputeUpdateValue(int param_id, Dtype rate) {
  Blob<Dtype>* param = this->net_->learnable_params()[param_id];
  const int count = param->count();
  const Dtype momentum = this->param_.momentum();
  const Dtype local_rate = rate * this->net_->params_lr()[param_id];
#ifndef CPU_ONLY
  if (Caffe::mode() == Caffe::GPU) {
    nesterov_update_gpu(count, param->mutable_gpu_diff(),
                        this->history_[param_id]->mutable_gpu_data(), momentum, local_rate);
    return;
  }
#endif
  Blob<Dtype>* history = this->history_[param_id].get();
  Blob<Dtype>* update = this->update_[param_id].get();
  caffe_copy(count, history->cpu_data(), update->mutable_cpu_data());
  caffe_cpu_axpby(count, local_rate, param->cpu_diff(), momentum, history->mutable_cpu_data());
  caffe_cpu_axpby(count, Dtype(1) + momentum, history->cpu_data(), -momentum,
                  update->mutable_cpu_data());
  caffe_copy(count, update->cpu_data(), param->mutable_cpu_diff());
}

INSTANTIATE_CLASS(NesterovSolver);
REGISTER_SOLVER_CLASS(Nesterov);

}  // namespace caffe
