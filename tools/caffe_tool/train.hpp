// `caffe train`'s three ways to train (train.cpp): one solver on the CPU or one GPU, one solver
// per GPU in this process (train_several_gpus.cpp), or one learner of an MPI job (-ddl,
// train_ddl.cpp); and what they share.
#ifndef CAFFE_TOOL_TRAIN_HPP_
#define CAFFE_TOOL_TRAIN_HPP_

#include <memory>
#include <vector>

#include "caffe/proto/caffe.pb.h"
#include "caffe/solver.hpp"
#include "caffe/util/signal_handler.hpp"
#include "caffe_tool/lms_session.hpp"
#include "caffe_tool/timeline_session.hpp"

namespace caffe_tool {

/// What every way of training makes, in this order: the timeline of -timeline (learner `rank` of
/// `ranks`; written when the training ends), LMS on the first of `gpus` (before the nets it
/// plans, so it outlives them), the handler of -sigint_effect, -sighup_effect and
/// -sigterm_effect (SIGTERM's line says what learner `rank` does about it), and the solver
/// `solver_param` describes, its training net's activation gradients sharing memory
/// (ShareTrainingDiffs). The way of training then plans the solver's nets with
/// `lms` once its synchronizer (if any) has moved their gradients into its own buffer, which
/// LMS leaves alone.
struct Training {
  Training(const caffe::SolverParameter& solver_param, const std::vector<int>& gpus, int rank = 0,
           int ranks = 1);
  /// "Starting Optimization", and with -snapshot where it resumes from.
  void LogStart() const;

  TimelineSession timeline;
  LmsSession lms;
  caffe::SignalHandler signal_handler;
  std::unique_ptr<caffe::Solver<float>> solver;
};

/// Unless CAFFE_SHARE_DIFFS=0, the activations of the solver's training net share gradient
/// memory (net/diff_sharing.hpp): nothing of `caffe train` reads them after a backward.
void ShareTrainingDiffs(caffe::Solver<float>* solver);

/// train with -ddl: this process is one learner of an MPI job (see docs/DDL.md). Rank 0 takes
/// the snapshot prefix's lock and resolves -snapshot for all.
int TrainDdl(const caffe::SolverParameter& solver_param);

/// train with several -gpu ids (BVLC's multi-GPU training): one solver per GPU, each on its own
/// thread of this process, kept in step by InProcessSync; the effective batch is N x batch_size.
int TrainOnSeveralGpus(const caffe::SolverParameter& solver_param, const std::vector<int>& gpus);

}  // namespace caffe_tool

#endif  // CAFFE_TOOL_TRAIN_HPP_
