#include "caffe/sgd_solvers.hpp"
#include "caffe/solvers/gpu_updates.hpp"

namespace caffe {

template <typename Dtype>
void RMSPropSolver<Dtype>::CheckParams() {
  CAFFE_CHECK_EQ(this->param_.momentum(), 0)
      << "momentum cannot be used with RMSProp; remove it from the solver";
  CAFFE_CHECK(this->param_.rms_decay() >= 0 && this->param_.rms_decay() < 1)
      << "rms_decay must be in [0, 1), got " << this->param_.rms_decay();
}

// h = rms_decay * h + (1 - rms_decay) * g^2; step = lr * g / (sqrt(h) + delta).
template <typename Dtype>
void RMSPropSolver<Dtype>::ComputeUpdateValue(int param_id, Dtype rate) {
  Blob<Dtype>* param = this->net_->learnable_params()[param_id];
  const int count = param->count();
  const Dtype delta = this->param_.delta();
  const Dtype rms_decay = this->param_.rms_decay();
  const Dtype local_rate = rate * this->net_->params_lr()[param_id];
#ifndef CPU_ONLY
  if (Caffe::mode() == Caffe::GPU) {
    rmsprop_update_gpu(count, param->mutable_gpu_diff(),
                       this->history_[param_id]->mutable_gpu_data(), rms_decay, delta, local_rate);
    return;
  }
#endif
  Dtype* history = this->history_[param_id]->mutable_cpu_data();
  Dtype* update = this->update_[param_id]->mutable_cpu_data();
  caffe_powx(count, param->cpu_diff(), Dtype(2), update);
  caffe_cpu_axpby(count, Dtype(1) - rms_decay, update, rms_decay, history);
  caffe_powx(count, history, Dtype(0.5), update);
  caffe_add_scalar(count, delta, update);
  caffe_div(count, param->cpu_diff(), update, update);
  caffe_cpu_axpby(count, local_rate, update, Dtype(0), param->mutable_cpu_diff());
}

INSTANTIATE_CLASS(RMSPropSolver);
REGISTER_SOLVER_CLASS(RMSProp);

}  // namespace caffe
