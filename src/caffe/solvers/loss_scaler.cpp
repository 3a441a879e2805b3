#include "caffe/solvers/loss_scaler.hpp"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "caffe/common.hpp"

namespace caffe {

LossScaler::LossScaler(const SolverParameter& solver, const NetParameter& train_net) {
  const bool solver_says = solver.has_loss_scale() || solver.has_dynamic_loss_scale();
  scale_ = solver_says ? solver.loss_scale() : train_net.global_grad_scale();
  dynamic_ = solver_says ? solver.dynamic_loss_scale() : train_net.global_grad_scale_adaptive();
  window_ = solver.loss_scale_window();
  CAFFE_CHECK(std::isfinite(scale_) && scale_ > 0)
      << (solver_says ? "solver loss_scale" : "net global_grad_scale") << " is " << scale_
      << "; expected a positive number (1: no scaling)";
  CAFFE_CHECK(window_ >= 1) << "solver loss_scale_window is " << window_
                            << "; expected at least 1 (finite steps before the scale doubles)";
  LOG_IF(INFO, active() && Caffe::root_solver())
      << "Loss scale " << scale_
      << (dynamic_ ? " (dynamic: halved on a step whose gradients overflow, which is skipped; "
                     "doubled after " +
                         std::to_string(window_) + " finite steps)"
                   : " (static)");
}

bool LossScaler::AfterGradients(bool finite, int iter) {
  if (!dynamic_) return true;
  if (!finite) {
    finite_steps_ = 0;
    const float halved = scale_ / 2;
    LOG_IF(WARNING, Caffe::root_solver())
        << "Iteration " << iter << ": gradients overflowed at loss scale " << scale_
        << "; step skipped, loss scale " << halved;
    // Below fp32's smallest normal value the scale could only lose the gradients.
    scale_ = std::max(halved, 1e-30f);
    return false;
  }
  if (++finite_steps_ >= window_) {
    finite_steps_ = 0;
    // A run of finite steps must not take the scale itself to infinity.
    if (std::isfinite(scale_ * 2)) {
      scale_ *= 2;
      LOG_IF(INFO, Caffe::root_solver())
          << "Iteration " << iter << ": " << window_ << " finite steps; loss scale " << scale_;
    }
  }
  return true;
}

}  // namespace caffe
