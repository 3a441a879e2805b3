// `caffe train -ddl "..."` (train.hpp): this process is one learner of an MPI job (see
// docs/DDL.md). A failure once the learners talk to each other (a dead peer, an MPI error) is
// printed here and ends the whole job (MPI_Abort), since the other learners may be waiting on
// this one; errors every learner finds alike before that (a bad -mode for the number of
// processes) end each learner cleanly.
#include <glog/logging.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/parallel/ddl_options.hpp"
#include "caffe_tool/flag_values.hpp"
#include "caffe_tool/flags.hpp"
#include "caffe_tool/snapshot_prefix.hpp"
#include "caffe_tool/train.hpp"
#ifdef USE_MPI
#include "caffe/parallel/ddl_session.hpp"
#include "caffe/parallel/ddl_sync.hpp"
#endif

namespace caffe_tool {

using caffe::Caffe;
using std::vector;

#ifdef USE_MPI
namespace {

[[noreturn]] void ReportAndAbortJob(const caffe::Error& error) {
  std::cerr << (std::string("caffe train: error: ") + error.what() + "\n") << std::flush;
  caffe::DdlSession::AbortJob(1);
}

// This learner's GPU, if -gpu was given: one id, which means each learner's own GPU, picked by
// its rank on the node among the GPUs the scheduler granted (DdlSession::ChooseGpu).
vector<int> LearnerGpus(caffe::DdlSession* session) {
  vector<int> gpus = GetGpus();
  if (gpus.empty()) return gpus;
  CAFFE_CHECK_EQ(gpus.size(), 1u)
      << "-gpu " << FLAGS_gpu << " with -ddl: give one id; every learner uses one GPU, and "
      << "-gpu 0 means each learner's own GPU, picked by its rank on the node";
  gpus[0] = session->ChooseGpu(gpus[0]);
  return gpus;
}

// Trains this learner's solver with the others. LMS is on this learner's GPU, for the nets (this
// thread). The gradients move into DdlSync's buffer, which the communication thread reduces:
// device memory of its own that LMS never swaps, counted in the budget.
void RunLearner(caffe::SolverParameter solver_param, const vector<int>& gpus,
                caffe::DdlSession* session) {
  // Rank 0 writes the snapshots: it holds the prefix's lock, and says which snapshot all resume.
  std::optional<caffe::SnapshotPrefixLock> lock;
  FLAGS_snapshot = session->FromRoot([&] {
    lock = LockSnapshotPrefix(solver_param);
    return ResolveSnapshotFlag(solver_param);
  });
  PrepareToResume(FLAGS_snapshot, session->size(), &solver_param);
  Training training(solver_param, gpus, session->rank(), session->size());
  caffe::DdlSync<float> sync(training.solver.get(), session,
                             training.signal_handler.GetActionFunction());
  training.lms.PlanSolver(training.solver.get());
  training.LogStart();
  try {
    sync.Solve(FLAGS_snapshot.empty() ? nullptr : FLAGS_snapshot.c_str());
    session->Finish(/*finalize_mpi=*/!caffe::SignalHandler::GotSigterm());
  } catch (const caffe::Error& error) {
    // Reported before anything is torn down: the communication thread may still be inside a
    // collective on the gradient buffer.
    ReportAndAbortJob(error);
  }
  LOG(INFO) << "Optimization Done.";
}

}  // namespace
#endif

int TrainDdl(const caffe::SolverParameter& solver_param) {
  caffe::DdlOptions options = caffe::ParseDdlOptions(FLAGS_ddl);
  options.bvlc = FLAGS_bvlc;
#ifndef USE_MPI
  (void)solver_param;
  CAFFE_THROW() << "-ddl was given, but this build of Caffe has no MPI support (Open MPI was not "
                << "found when it was configured, or CAFFE_MPI=OFF); install libopenmpi-dev and "
                << "openmpi-bin (scripts/install_deps.sh), rebuild, and run under mpirun";
#else
  try {
    caffe::DdlSession session(options);
    // Rank 0 logs, the others warn; the solver made next reads this learner's share. (When
    // mpirun ends the job, after Ctrl-C or a learner's failure, each learner gets SIGTERM:
    // Training's handler says so in one line and -sigterm_effect decides what the learners, who
    // vote on it each iteration, do.)
    session.JoinAsSolver();
    const vector<int> gpus = LearnerGpus(&session);
    SetModeFromGpus(gpus);
    if (!gpus.empty()) {
      const int device = gpus[0];
      session.Run([device] { Caffe::SetDevice(device); });  // the communication thread too
    }
    RunLearner(solver_param, gpus, &session);
    if (caffe::SignalHandler::GotSigterm()) {
      // mpirun is ending the job: the snapshot is written and every learner is past the last
      // barrier, but an MPI process that has not finalized would wait for mpirun's SIGKILL in
      // exit(); leave now, with success.
      std::fflush(nullptr);
      _exit(0);
    }
  } catch (const caffe::Error& error) {
    if (!caffe::DdlSession::MpiRunning()) throw;  // ended cleanly everywhere: main reports it
    ReportAndAbortJob(error);
  }
  return 0;
#endif
}

}  // namespace caffe_tool
