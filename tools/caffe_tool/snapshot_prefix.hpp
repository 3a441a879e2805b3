// What `caffe train` does with the solver's snapshot_prefix before it trains (docs/CLUSTER.md):
// takes the prefix's lock (two runs on one prefix would overwrite each other's snapshots),
// removes the temporary files of runs killed while they wrote a snapshot, resolves
// `-snapshot latest`, and, resuming with another number of learners than the snapshot's, says
// how the effective batch changes and applies -lr_scaling.
#ifndef CAFFE_TOOL_SNAPSHOT_PREFIX_HPP_
#define CAFFE_TOOL_SNAPSHOT_PREFIX_HPP_

#include <optional>
#include <string>

#include "caffe/proto/caffe.pb.h"
#include "caffe/snapshot_files.hpp"

namespace caffe_tool {

/// The lock on `solver_param`'s snapshot_prefix (none without one), taken after removing the
/// stale temporary files it finds. Throws caffe::Error naming the run that holds it.
std::optional<caffe::SnapshotPrefixLock> LockSnapshotPrefix(
    const caffe::SolverParameter& solver_param);

/// The solver state -snapshot names: for `-snapshot latest`, the newest complete snapshot of the
/// solver's prefix, or "" (start from the beginning) when there is none.
std::string ResolveSnapshotFlag(const caffe::SolverParameter& solver_param);

/// Before the solver is made, for training from the solver state `state` ("" for a fresh
/// start) with `learners` solvers: -snapshot replaces the solver's weights, -weights sets them;
/// with another number of learners than the snapshot's, the effective batch change is logged
/// and -lr_scaling linear scales base_lr by it.
void PrepareToResume(const std::string& state, int learners, caffe::SolverParameter* solver_param);

}  // namespace caffe_tool

#endif  // CAFFE_TOOL_SNAPSHOT_PREFIX_HPP_
