// The files a training run keeps under its solver's snapshot_prefix, as the run sees them: the
// newest snapshot that reads back whole (`caffe train -snapshot latest`), the lock that keeps a
// second run off a prefix in use (two runs on one prefix overwrite each other's snapshots), and
// the temporary files of a run killed while it wrote one (io.hpp's AtomicWrite writes
// FILE.tmp.PID and renames it).
#ifndef CAFFE_SNAPSHOT_FILES_HPP_
#define CAFFE_SNAPSHOT_FILES_HPP_

#include <optional>
#include <string>
#include <vector>

#include "caffe/io/hdf5.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// One snapshot on disk: its solver state file (PREFIX_iter_N.solverstate or .solverstate.h5)
/// and iteration.
struct SnapshotOnDisk {
  std::string state;
  int iter = 0;
};

/// The dataset of an HDF5 solver state that holds our resume extensions (the random generator,
/// the data positions, the learner count) as one text-format SolverState.
inline constexpr char kResumeStateDataset[] = "resume_state";

/// The scalar parts of the HDF5 solver state open as `file` (read from `path`): iter,
/// learned_net, current_step and our extensions; not the history.
void ReadHdf5SolverStateHeader(hid_t file, const std::string& path, SolverState* state);

/// The snapshots of `prefix` that have a solver state file, newest first.
std::vector<SnapshotOnDisk> ListSnapshots(const std::string& prefix);

/// The newest snapshot of `prefix` whose solver state and the weights it names read back whole.
/// Each newer one that does not (cut short by a full disk or a copy, its weights missing) is
/// skipped with a warning that says why. nullopt when no snapshot is complete.
std::optional<SnapshotOnDisk> LatestCompleteSnapshot(const std::string& prefix);

/// Why the snapshot whose solver state is `state` cannot be resumed, or "" if it can: the state
/// and the weights file it names must parse to the end.
std::string WhySnapshotIsIncomplete(const std::string& state);

/// How many learners (solvers training as one) took the snapshot whose solver state is `state`;
/// 0 where the file does not say (BVLC's snapshots).
int SnapshotLearners(const std::string& state);

/// An exclusive lock on PREFIX.lock for as long as it lives, so that one run at a time writes
/// snapshots with `prefix`. The file names the holder (pid, host, start time); a second run's
/// constructor throws caffe::Error naming them. The kernel drops the lock when its process ends,
/// however it ends (flock(2); NFS locks it through fcntl locks).
class SnapshotPrefixLock {
 public:
  explicit SnapshotPrefixLock(const std::string& prefix);
  ~SnapshotPrefixLock();
  /// Moving hands the lock over (the moved-from holds none).
  SnapshotPrefixLock(SnapshotPrefixLock&& other) noexcept;
  SnapshotPrefixLock& operator=(SnapshotPrefixLock&& other) noexcept;
  const std::string& path() const { return path_; }

 private:
  void Release();

  std::string path_;
  int fd_ = -1;
};

/// Removes the temporary snapshot files of `prefix` (FILE.tmp.PID) whose process no longer
/// runs, logging each; call it holding the prefix's lock. Returns the removed files' names.
std::vector<std::string> RemoveStaleSnapshotTemporaries(const std::string& prefix);

}  // namespace caffe

#endif  // CAFFE_SNAPSHOT_FILES_HPP_
