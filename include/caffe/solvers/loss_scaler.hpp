// Loss scaling, for gradients computed in 16 bits: the loss is multiplied by a scale before
// backward, so that small gradients stay above fp16's smallest values, and the summed gradients
// are divided by it before the update. Static (solver loss_scale), or dynamic (dynamic_loss_scale:
// a step whose gradients are not finite is skipped and the scale halved; after loss_scale_window
// finite steps in a row it doubles). NVCaffe's net-level global_grad_scale and
// global_grad_scale_adaptive stand for loss_scale and dynamic_loss_scale where the solver sets
// neither. The solver's arithmetic (unscaling, decay, momentum) stays in fp32.
#ifndef CAFFE_SOLVERS_LOSS_SCALER_HPP_
#define CAFFE_SOLVERS_LOSS_SCALER_HPP_

#include "caffe/proto/caffe.pb.h"

namespace caffe {

class LossScaler {
 public:
  /// Throws naming the field where loss_scale is not a positive finite number or the window is
  /// below 1.
  LossScaler(const SolverParameter& solver, const NetParameter& train_net);

  /// Whether the loss is scaled at all (a scale other than 1, or dynamic).
  bool active() const { return dynamic_ || scale_ != 1.f; }
  bool dynamic() const { return dynamic_; }
  float scale() const { return scale_; }

  /// Called once a step's gradients are complete (summed over iter_size and over the learners,
  /// so that every learner decides alike): whether to apply the step. Under dynamic scaling a
  /// step whose gradients are not all finite is skipped and the scale halves; the
  /// loss_scale_window-th finite step in a row doubles it. Each change is logged with `iter`.
  bool AfterGradients(bool finite, int iter);

 private:
  float scale_ = 1.f;
  bool dynamic_ = false;
  int window_ = 1000;
  int finite_steps_ = 0;  // in a row, since the last change
};

}  // namespace caffe

#endif  // CAFFE_SOLVERS_LOSS_SCALER_HPP_
