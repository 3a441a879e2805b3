// Which GPU a DDL learner trains on (`caffe train -gpu 0 -ddl ...`): `-gpu N` means "my N-th
// granted GPU", each learner counting from its rank on its host, so that the learners of a host
// never share a GPU by accident and a job script that says -gpu 0 works on whichever GPUs the
// scheduler granted (docs/CLUSTER.md).
#ifndef CAFFE_PARALLEL_LEARNER_GPU_HPP_
#define CAFFE_PARALLEL_LEARNER_GPU_HPP_

#include <string>

#include "caffe/util/environment.hpp"

namespace caffe {

/// Where a learner runs and what it sees: its rank among the `local_size` learners of `host`,
/// the number of GPUs the CUDA runtime shows it, and the scheduler's variables.
struct LearnerPlace {
  int local_rank = 0;
  int local_size = 1;
  std::string host;
  int visible_count = 0;
  SchedulerGpus granted;
};

/// The CUDA runtime's index of the learner's GPU for -gpu `requested`, and in `how` one line that
/// says how it was chosen. In order:
/// - LSF's CUDA_VISIBLE_DEVICES<local rank> (the task's own GPUs): its `requested`-th GPU, as the
///   runtime numbers it (its place in CUDA_VISIBLE_DEVICES, where that is set);
/// - Slurm's SLURM_STEP_GPUS where CUDA_VISIBLE_DEVICES is unset: the (requested + local rank)-th;
/// - otherwise the (requested + local rank)-th visible GPU; with one visible GPU, that one (a
///   scheduler that gives each task its own CUDA_VISIBLE_DEVICES; sharing is caught after).
/// Throws caffe::Error naming the host, the counts and the variable when the learners of a host
/// outnumber the GPUs granted to them, or `requested` is beyond them.
int ChooseLearnerGpu(int requested, const LearnerPlace& place, std::string* how);

}  // namespace caffe

#endif  // CAFFE_PARALLEL_LEARNER_GPU_HPP_
