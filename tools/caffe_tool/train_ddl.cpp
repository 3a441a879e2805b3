// `caffe train -ddl "..."` (train.hpp): this process is one learner of an MPI job (see
// docs/DDL.md). A failure once the learners talk to each other (a dead peer, an MPI error) is
// printed here and ends the whole job (MPI_Abort), since the other learners may be waiting on
// this one; errors every learner finds alike before that (a bad -mode for the number of
// processes) end each learner cleanly.
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/parallel/ddl_options.hpp"
#include "caffe_tool/flag_values.hpp"
#include "caffe_tool/flags.hpp"
#include "caffe_tool/train.hpp"
#ifndef CPU_ONLY
#include <cuda_runtime.h>
#endif
#ifdef USE_MPI
#include "caffe/parallel/ddl_session.hpp"
#include "caffe/parallel/ddl_sync.hpp"
#endif

namespace caffe_tool {

using caffe::Caffe;
using std::vector;

#ifdef USE_MPI
namespace {

// When a learner fails, mpirun ends the others with SIGTERM: they say so in one line (not with
// glog's crash report) and end as the signal says.
char g_terminated_message[160];
void OnTerminatedByMpirun(int signal_number) {
  const ssize_t ignored = write(2, g_terminated_message, std::strlen(g_terminated_message));
  (void)ignored;
  std::signal(signal_number, SIG_DFL);
  raise(signal_number);
}

[[noreturn]] void ReportAndAbortJob(const caffe::Error& error) {
  std::cerr << (std::string("caffe train: error: ") + error.what() + "\n") << std::flush;
  caffe::DdlSession::AbortJob(1);
}

// This process's part in the job: how it ends when mpirun ends it, what it logs (rank 0 logs;
// the others warn), and the solver count, rank and process model it trains with.
void JoinJob(const caffe::DdlSession& session, const caffe::DdlOptions& options) {
  std::snprintf(g_terminated_message, sizeof(g_terminated_message),
                "caffe train: learner %d was ended by mpirun (SIGTERM); mpirun's message says "
                "why\n",
                session.rank());
  std::signal(SIGTERM, OnTerminatedByMpirun);
  if (session.rank() != 0 && options.dbg_level == 0) {
    FLAGS_minloglevel = std::max(FLAGS_minloglevel, 1);
  }
  Caffe::set_solver_count(session.size());
  Caffe::set_solver_rank(session.rank());
  Caffe::set_multiprocess(true);
}

// This learner's GPU, if -gpu was given: one id, which means each learner's own GPU, picked by
// its rank on the node.
vector<int> LearnerGpus(const caffe::DdlSession& session) {
  vector<int> gpus = GetGpus();
  if (!gpus.empty()) {
    CAFFE_CHECK_EQ(gpus.size(), 1u)
        << "-gpu " << FLAGS_gpu << " with -ddl: give one id; every learner uses one GPU, and "
        << "-gpu 0 means each learner's own GPU, picked by its rank on the node";
#ifndef CPU_ONLY
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    CAFFE_CHECK_GT(count, 0) << "-gpu with -ddl: this node has no visible GPU";
    gpus[0] = (gpus[0] + session.local_rank()) % count;
#endif
  }
  return gpus;
}

// Trains this learner's solver with the others. LMS is on this learner's GPU, for the nets (this
// thread). The gradients move into DdlSync's buffer, which the communication thread reduces:
// device memory of its own that LMS never swaps, counted in the budget.
void RunLearner(const caffe::SolverParameter& solver_param, const vector<int>& gpus,
                caffe::DdlSession* session) {
  Training training(solver_param, gpus, session->rank(), session->size());
  caffe::DdlSync<float> sync(training.solver.get(), session,
                             training.signal_handler.GetActionFunction());
  training.lms.PlanSolver(training.solver.get());
  training.LogStart();
  try {
    sync.Solve(FLAGS_snapshot.empty() ? nullptr : FLAGS_snapshot.c_str());
    session->Finish();
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
    JoinJob(session, options);
    const vector<int> gpus = LearnerGpus(session);
    SetModeFromGpus(gpus);
    if (!gpus.empty()) {
      const int device = gpus[0];
      session.Run([device] { Caffe::SetDevice(device); });  // the communication thread too
    }
    RunLearner(solver_param, gpus, &session);
  } catch (const caffe::Error& error) {
    if (!caffe::DdlSession::MpiRunning()) throw;  // ended cleanly everywhere: main reports it
    ReportAndAbortJob(error);
  }
  return 0;
#endif
}

}  // namespace caffe_tool
