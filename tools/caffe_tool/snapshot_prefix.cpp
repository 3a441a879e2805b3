#include "caffe_tool/snapshot_prefix.hpp"

#include <glog/logging.h>

#include "caffe/common.hpp"
#include "caffe_tool/flags.hpp"

namespace caffe_tool {

std::optional<caffe::SnapshotPrefixLock> LockSnapshotPrefix(
    const caffe::SolverParameter& solver_param) {
  if (!solver_param.has_snapshot_prefix()) return std::nullopt;
  std::optional<caffe::SnapshotPrefixLock> lock;
  lock.emplace(solver_param.snapshot_prefix());
  caffe::RemoveStaleSnapshotTemporaries(solver_param.snapshot_prefix());
  return lock;
}

std::string ResolveSnapshotFlag(const caffe::SolverParameter& solver_param) {
  if (FLAGS_snapshot != "latest") return FLAGS_snapshot;
  CAFFE_CHECK(solver_param.has_snapshot_prefix())
      << "-snapshot latest: the solver " << FLAGS_solver
      << " has no snapshot_prefix, so there are no snapshots to look for";
  const std::string& prefix = solver_param.snapshot_prefix();
  const std::optional<caffe::SnapshotOnDisk> latest = caffe::LatestCompleteSnapshot(prefix);
  if (!latest) {
    LOG(INFO) << "-snapshot latest: no complete snapshot with prefix " << prefix
              << " yet; training from the beginning";
    return "";
  }
  LOG(INFO) << "-snapshot latest: " << latest->state << " (iteration " << latest->iter << ")";
  return latest->state;
}

void PrepareToResume(const std::string& state, int learners, caffe::SolverParameter* solver_param) {
  CAFFE_CHECK(FLAGS_lr_scaling == "keep" || FLAGS_lr_scaling == "linear")
      << "invalid value '" << FLAGS_lr_scaling << "' for -lr_scaling; expected keep or linear";
  if (state.empty()) {
    if (!FLAGS_weights.empty()) {
      solver_param->clear_weights();
      solver_param->add_weights(FLAGS_weights);
    }
    return;
  }
  solver_param->clear_weights();
  const int before = caffe::SnapshotLearners(state);
  if (before <= 0 || before == learners) return;
  const double base_lr = solver_param->base_lr();
  LOG(INFO) << "The snapshot was taken by " << before << " learner(s) and this run has " << learners
            << ": the effective batch (learners x batch_size x iter_size) is " << learners << "/"
            << before << " of what it was";
  if (FLAGS_lr_scaling == "linear") {
    solver_param->set_base_lr(static_cast<float>(base_lr * learners / before));
    LOG(INFO) << "-lr_scaling linear: base_lr " << base_lr << " -> " << solver_param->base_lr();
  } else {
    LOG(INFO) << "-lr_scaling keep: base_lr stays " << base_lr
              << " (-lr_scaling linear would scale it by " << learners << "/" << before << ")";
  }
}

}  // namespace caffe_tool
