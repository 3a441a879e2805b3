// `caffe train -solver S [-snapshot F | -weights W] [-gpu ...] [-ddl ...]`: trains or finetunes a
// model. Here: the solver parameters the flags describe, the choice among the ways of training
// (train.hpp), and the one for a single solver on the CPU or one GPU.
#include "caffe_tool/train.hpp"

#include <glog/logging.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/io/upgrade_proto.hpp"
#include "caffe/net/diff_sharing.hpp"
#include "caffe/sgd_solvers.hpp"
#include "caffe/util/environment.hpp"
#include "caffe_tool/command_registry.hpp"
#include "caffe_tool/flag_values.hpp"
#include "caffe_tool/flags.hpp"
#include "caffe_tool/snapshot_prefix.hpp"

namespace caffe_tool {

using caffe::Caffe;
using std::string;
using std::vector;

namespace {

// The line SIGTERM prints at once: what this learner will do about it.
string SigtermLine(const caffe::SolverParameter& solver_param, int rank, int ranks) {
  const caffe::SolverAction::Enum action =
      caffe::ParseSolverAction(FLAGS_sigterm_effect, "sigterm_effect");
  string line = ranks > 1 ? "caffe train: learner " + std::to_string(rank) + " got SIGTERM: "
                          : string("caffe train: got SIGTERM: ");
  if (action == caffe::SolverAction::NONE) return line + "ignored (-sigterm_effect none)";
  const string writer = ranks > 1 ? "learner 0 writing " : "writing ";
  if (action == caffe::SolverAction::SNAPSHOT) {
    return line + writer +
           "a snapshot after this iteration and training on (-sigterm_effect "
           "snapshot)";
  }
  line += ranks > 1 ? "all learners stop after this iteration" : "stopping after this iteration";
  line += solver_param.snapshot_after_train()
              ? ", " + writer + "a snapshot"
              : " without a snapshot (the solver says snapshot_after_train: false)";
  return line + " (-sigterm_effect stop)";
}

}  // namespace

Training::Training(const caffe::SolverParameter& solver_param, const vector<int>& gpus, int rank,
                   int ranks)
    : timeline(rank, ranks),
      lms(gpus),
      signal_handler(caffe::ParseSolverAction(FLAGS_sigint_effect, "sigint_effect"),
                     caffe::ParseSolverAction(FLAGS_sighup_effect, "sighup_effect"),
                     caffe::ParseSolverAction(FLAGS_sigterm_effect, "sigterm_effect")),
      solver(caffe::SolverRegistry<float>::CreateSolver(solver_param)) {
  signal_handler.set_sigterm_message(SigtermLine(solver_param, rank, ranks));
  ShareTrainingDiffs(solver.get());
}

void ShareTrainingDiffs(caffe::Solver<float>* solver) {
  if (caffe::ShareDiffsFromEnvironment()) caffe::ShareActivationDiffs(solver->net().get());
}

void Training::LogStart() const {
  LOG(INFO) << "Starting Optimization";
  if (!FLAGS_snapshot.empty()) LOG(INFO) << "Resuming from " << FLAGS_snapshot;
}

namespace {

/// The solver of -solver, with -level and -stage applied (PrepareToResume applies -snapshot and
/// -weights).
caffe::SolverParameter ReadSolverParameter() {
  caffe::SolverParameter solver_param;
  caffe::ReadSolverParamsFromTextFile(FLAGS_solver, &solver_param);
  solver_param.mutable_train_state()->set_level(FLAGS_level);
  for (const string& stage : SplitList(FLAGS_stage)) {
    solver_param.mutable_train_state()->add_stage(stage);
  }
  // Without -gpu, the solver's solver_mode/device_id decide, as in BVLC; a GPU solver on a
  // machine or build without a GPU trains on the CPU rather than failing.
  if (FLAGS_gpu.empty() && solver_param.solver_mode() == caffe::SolverParameter_SolverMode_GPU) {
    if (Caffe::GpuAvailable()) {
      FLAGS_gpu = std::to_string(solver_param.device_id());
    } else {
      LOG(WARNING) << "The solver asks for GPU mode (solver_mode: GPU), but "
#ifdef CPU_ONLY
                   << "this build has no GPU support"
#else
                   << "no GPU is available"
#endif
                   << "; training on the CPU.";
    }
  }
  return solver_param;
}

int train() {
  CAFFE_CHECK(!FLAGS_solver.empty()) << "train needs a solver definition: -solver FILE";
  CAFFE_CHECK(FLAGS_snapshot.empty() || FLAGS_snapshot == "latest" || FLAGS_weights.empty())
      << "give -snapshot to resume training or -weights to finetune, not both (with -snapshot "
      << "latest, -weights is where a run without a snapshot yet starts)";
  caffe::SolverParameter solver_param = ReadSolverParameter();
  if (!FLAGS_ddl.empty()) return TrainDdl(solver_param);
  LOG_IF(INFO, FLAGS_bvlc) << "-bvlc only matters with -ddl; ignored.";
  const vector<int> gpus = GetGpus();
  // Held until training ends (the nets and solver are made after it: they write to the prefix).
  const std::optional<caffe::SnapshotPrefixLock> lock = LockSnapshotPrefix(solver_param);
  FLAGS_snapshot = ResolveSnapshotFlag(solver_param);
  PrepareToResume(FLAGS_snapshot, std::max<int>(1, static_cast<int>(gpus.size())), &solver_param);
  if (gpus.size() > 1) return TrainOnSeveralGpus(solver_param, gpus);
  SetModeFromGpus(gpus);
  Training training(solver_param, gpus);
  training.solver->SetActionFunction(training.signal_handler.GetActionFunction());
  training.lms.PlanSolver(training.solver.get());
  training.LogStart();
  if (!FLAGS_snapshot.empty()) {
    training.solver->Solve(FLAGS_snapshot);
  } else {
    training.solver->Solve();
  }
  LOG(INFO) << "Optimization Done.";
  return 0;
}
REGISTER_CAFFE_COMMAND(train, "train or finetune a model");

}  // namespace
}  // namespace caffe_tool
