// Solver: trains a net. Builds the train net and the test nets from a SolverParameter, then runs
// Step: clear diffs, forward/backward iter_size times, ApplyUpdate (the subclass's update rule),
// test every test_interval, snapshot every `snapshot` iterations or on request. Snapshots hold the
// weights (.caffemodel[.h5]) and the solver state (.solverstate[.h5]): iteration, learning-rate
// step, update history, and (our extension) the random generator and data positions, so a resumed
// run ends with the same weights as an uninterrupted one.
#ifndef CAFFE_SOLVER_HPP_
#define CAFFE_SOLVER_HPP_

#include <memory>
#include <string>
#include <vector>

#include "caffe/net.hpp"
#include "caffe/solver_factory.hpp"
#include "caffe/solvers/loss_scaler.hpp"
#include "caffe/util/benchmark.hpp"
#include "caffe/util/signal_handler.hpp"

namespace caffe {

/// Copies weights into `net` from a comma-separated list of .caffemodel / .h5 files, in order.
template <typename Dtype>
void LoadNetWeights(Net<Dtype>* net, const string& model_list);

template <typename Dtype>
class Solver {
 public:
  explicit Solver(const SolverParameter& param);
  explicit Solver(const string& param_file);
  virtual ~Solver() = default;
  void Init(const SolverParameter& param);
  void InitTrainNet();
  void InitTestNets();

  /// The function polled for stop/snapshot requests (signals); none by default.
  void SetActionFunction(ActionCallback func) { action_request_function_ = std::move(func); }
  SolverAction::Enum GetRequestedAction();

  /// Trains to max_iter, resuming from `resume_file` (a .solverstate[.h5]) if given.
  virtual void Solve(const char* resume_file = nullptr);
  void Solve(const string& resume_file) { Solve(resume_file.c_str()); }
  /// Runs `iters` training iterations.
  void Step(int iters);
  /// Restores the solver state (and through it the weights) from a .solverstate[.h5].
  void Restore(const char* resume_file);
  /// Writes the weights and the solver state for the current iteration.
  void Snapshot();

  const SolverParameter& param() const { return param_; }
  shared_ptr<Net<Dtype>> net() { return net_; }
  const vector<shared_ptr<Net<Dtype>>>& test_nets() { return test_nets_; }
  int iter() const { return iter_; }
  /// Loss scaling's state (static or dynamic scale), made with the train net.
  const LossScaler& loss_scaler() const { return *loss_scaler_; }
  Dtype smoothed_loss() const { return smoothed_loss_; }
  bool requested_early_exit() const { return requested_early_exit_; }

  /// Hooks for parallel training: on_start before each iteration's forward/backward,
  /// on_loss_ready after it (before the loss is smoothed and displayed: distributed training
  /// replaces `loss` and the net's outputs by their averages over learners), on_gradients_ready
  /// before the update.
  class Callback {
   public:
    virtual ~Callback() = default;
    virtual void on_start() = 0;
    virtual void on_loss_ready(Dtype* loss) {}
    virtual void on_gradients_ready() = 0;
  };
  const vector<Callback*>& callbacks() const { return callbacks_; }
  void add_callback(Callback* value) { callbacks_.push_back(value); }

  /// Fails early (before training) if the snapshot folder is not writable.
  void CheckSnapshotWritePermissions();
  virtual const char* type() const { return ""; }
  /// Computes the update from the diffs and applies it.
  virtual void ApplyUpdate() = 0;
  /// The snapshot file name for the current iteration: <prefix>_iter_<N><extension>.
  string SnapshotFilename(const string& extension) const;

 protected:
  string SnapshotToBinaryProto();
  string SnapshotToHDF5();
  void TestAll();
  void Test(int test_net_id = 0);
  virtual void SnapshotSolverState(const string& model_filename) = 0;
  virtual void RestoreSolverStateFromHDF5(const string& state_file) = 0;
  virtual void RestoreSolverStateFromBinaryProto(const string& state_file) = 0;
  void UpdateSmoothedLoss(Dtype loss, int start_iter, int average_loss);
  /// Logs one warning naming where a training pass's non-finite `loss` came from
  /// (FindNonFiniteOrigin) and what to try; once until the loss is finite again. (Test nets
  /// warn once a run, in Test.)
  void WarnOfNonFiniteLoss(Dtype loss);
  /// Loss scaling, once a step's gradients are complete: divides them by the scale they were
  /// computed at, or returns false (the step is to be skipped) where the dynamic scaler says so.
  bool UnscaleGradients();

  /// Fills the state fields every solver shares (iteration, step, RNG, data cursors).
  void SaveCommonState(const string& model_filename, SolverState* state) const;
  /// Restores what SaveCommonState saved; weights come from the state's learned_net.
  void RestoreCommonState(const SolverState& state);

  SolverParameter param_;
  int iter_ = 0;
  int current_step_ = 0;
  shared_ptr<Net<Dtype>> net_;
  vector<shared_ptr<Net<Dtype>>> test_nets_;
  vector<Callback*> callbacks_;
  vector<Dtype> losses_;
  Dtype smoothed_loss_ = 0;
  ActionCallback action_request_function_;
  bool requested_early_exit_ = false;
  Timer iteration_timer_;
  float iterations_last_ = 0;
  int last_finite_loss_iter_ = -1;  // the last iteration of this run whose loss was finite
  bool nonfinite_loss_warned_ = false;
  bool test_nonfinite_loss_warned_ = false;  // once a run: test nets share the trained weights
  std::unique_ptr<LossScaler> loss_scaler_;  // made with the train net
  Dtype net_loss_scale_ = 1;                 // the scale the train net's loss tops carry now

  DISABLE_COPY_AND_ASSIGN(Solver);
};

}  // namespace caffe

#endif  // CAFFE_SOLVER_HPP_
