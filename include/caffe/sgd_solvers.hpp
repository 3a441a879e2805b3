// The gradient-descent solvers. SGDSolver holds what they share: the learning-rate policies
// (fixed, step, exp, inv, multistep, poly, sigmoid), iter_size normalisation, L2/L1 weight decay,
// gradient clipping, the per-parameter history, and snapshotting it. Each subclass replaces only
// ComputeUpdateValue (its update rule) and, where it keeps more history, PreSolve. In GPU mode the
// whole update stays on the device: normalisation, decay and clipping through the caffe_gpu_*
// functions and Blob's device paths, each rule as one fused kernel (solvers/gpu_updates.hpp).
#ifndef CAFFE_SGD_SOLVERS_HPP_
#define CAFFE_SGD_SOLVERS_HPP_

#include <string>
#include <vector>

#include "caffe/solver.hpp"

namespace caffe {

/// Throws naming the mistake where `param`'s lr_policy is unknown (or missing), or lacks what it
/// needs (step: stepsize; poly: max_iter); returns `param`.
const SolverParameter& CheckLrPolicy(const SolverParameter& param);
/// Reads a solver prototxt and checks its lr_policy.
SolverParameter ReadSolverParamsWithLrPolicy(const string& param_file);

/// Stochastic gradient descent with momentum: v = momentum * v + lr * g; w -= v.
template <typename Dtype>
class SGDSolver : public Solver<Dtype> {
 public:
  explicit SGDSolver(const SolverParameter& param) : Solver<Dtype>(CheckLrPolicy(param)) {
    PreSolve();
  }
  explicit SGDSolver(const string& param_file)
      : Solver<Dtype>(ReadSolverParamsWithLrPolicy(param_file)) {
    PreSolve();
  }
  const char* type() const override { return "SGD"; }
  const vector<shared_ptr<Blob<Dtype>>>& history() { return history_; }
  void ApplyUpdate() override;
  /// The learning rate for the current iteration under the solver's lr_policy.
  Dtype GetLearningRate();

 protected:
  void PreSolve();
  virtual void Normalize(int param_id);
  virtual void Regularize(int param_id);
  virtual void ComputeUpdateValue(int param_id, Dtype rate);
  virtual void ClipGradients();
  void SnapshotSolverState(const string& model_filename) override;
  virtual void SnapshotSolverStateToBinaryProto(const string& model_filename);
  virtual void SnapshotSolverStateToHDF5(const string& model_filename);
  void RestoreSolverStateFromHDF5(const string& state_file) override;
  void RestoreSolverStateFromBinaryProto(const string& state_file) override;

  // history_: momentum (and, for some solvers, a second set of accumulators after the first
  // learnable_params().size() entries); update_ and temp_: scratch of the same shapes.
  vector<shared_ptr<Blob<Dtype>>> history_, update_, temp_;

  DISABLE_COPY_AND_ASSIGN(SGDSolver);
};

/// Nesterov's accelerated gradient: the update looks ahead along the momentum.
template <typename Dtype>
class NesterovSolver : public SGDSolver<Dtype> {
 public:
  explicit NesterovSolver(const SolverParameter& param) : SGDSolver<Dtype>(param) {}
  explicit NesterovSolver(const string& param_file) : SGDSolver<Dtype>(param_file) {}
  const char* type() const override { return "Nesterov"; }

 protected:
  void ComputeUpdateValue(int param_id, Dtype rate) override;
};

/// AdaGrad: per-weight rates scaled by the root of the summed squared gradients.
template <typename Dtype>
class AdaGradSolver : public SGDSolver<Dtype> {
 public:
  explicit AdaGradSolver(const SolverParameter& param) : SGDSolver<Dtype>(param) {
    CheckNoMomentum();
  }
  explicit AdaGradSolver(const string& param_file) : SGDSolver<Dtype>(param_file) {
    CheckNoMomentum();
  }
  const char* type() const override { return "AdaGrad"; }

 protected:
  void ComputeUpdateValue(int param_id, Dtype rate) override;
  void CheckNoMomentum();
};

/// RMSProp: rates scaled by a running mean (rms_decay) of squared gradients.
template <typename Dtype>
class RMSPropSolver : public SGDSolver<Dtype> {
 public:
  explicit RMSPropSolver(const SolverParameter& param) : SGDSolver<Dtype>(param) { CheckParams(); }
  explicit RMSPropSolver(const string& param_file) : SGDSolver<Dtype>(param_file) { CheckParams(); }
  const char* type() const override { return "RMSProp"; }

 protected:
  void ComputeUpdateValue(int param_id, Dtype rate) override;
  void CheckParams();
};

/// AdaDelta: running means of squared gradients and squared updates (momentum is their decay).
template <typename Dtype>
class AdaDeltaSolver : public SGDSolver<Dtype> {
 public:
  explicit AdaDeltaSolver(const SolverParameter& param) : SGDSolver<Dtype>(param) {
    AdaDeltaPreSolve();
  }
  explicit AdaDeltaSolver(const string& param_file) : SGDSolver<Dtype>(param_file) {
    AdaDeltaPreSolve();
  }
  const char* type() const override { return "AdaDelta"; }

 protected:
  void AdaDeltaPreSolve();
  void ComputeUpdateValue(int param_id, Dtype rate) override;
};

/// Adam: bias-corrected running means of the gradient (momentum) and its square (momentum2).
template <typename Dtype>
class AdamSolver : public SGDSolver<Dtype> {
 public:
  explicit AdamSolver(const SolverParameter& param) : SGDSolver<Dtype>(param) { AdamPreSolve(); }
  explicit AdamSolver(const string& param_file) : SGDSolver<Dtype>(param_file) { AdamPreSolve(); }
  const char* type() const override { return "Adam"; }

 protected:
  void AdamPreSolve();
  void ComputeUpdateValue(int param_id, Dtype rate) override;
};

}  // namespace caffe

#endif  // CAFFE_SGD_SOLVERS_HPP_
