// caffe: the command-line brew. train, test, time and device_query, with BVLC Caffe's flags,
// defaults and log lines, so existing scripts and log parsers keep working.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "caffe/util/environment.hpp"
#include "caffe/common.hpp"
#include "caffe/lms/lms_options.hpp"
#include "caffe/lms/planner.hpp"
#include "caffe/lms/session.hpp"
#include "caffe/net.hpp"
#include "caffe/parallel/ddl_options.hpp"
#include "caffe/parallel/in_process_sync.hpp"
#include "caffe/sgd_solvers.hpp"
#include "caffe/solver.hpp"
#include "caffe/util/benchmark.hpp"
#include "caffe/io/io.hpp"
#include "caffe/diagnostics/nonfinite_origin.hpp"
#include "caffe/diagnostics/reference_check.hpp"
#include "caffe/util/signal_handler.hpp"
#include "caffe/io/upgrade_proto.hpp"
#ifndef CPU_ONLY
#include <cuda_runtime.h>
#endif
#ifdef USE_MPI
#include "caffe/parallel/ddl_session.hpp"
#include "caffe/parallel/ddl_sync.hpp"
#endif

using caffe::Blob;
using caffe::Caffe;
using caffe::Layer;
using caffe::Net;
using caffe::Timer;
using std::string;
using std::vector;

DEFINE_string(gpu, "",
              "Optional; run in GPU mode on given device IDs separated by ','. Use '-gpu all' to "
              "run on all available GPUs. The effective training batch size is multiplied by the "
              "number of devices.");
DEFINE_string(solver, "", "The solver definition protocol buffer text file.");
DEFINE_string(model, "", "The model definition protocol buffer text file.");
DEFINE_string(phase, "", "Optional; network phase (TRAIN or TEST). Only used for 'time'.");
DEFINE_int32(level, 0, "Optional; network level.");
DEFINE_string(stage, "",
              "Optional; network stages (not to be confused with phase), separated by ','.");
DEFINE_string(snapshot, "", "Optional; the snapshot solver state to resume training.");
DEFINE_string(weights, "",
              "Optional; the pretrained weights to initialize finetuning, separated by ','. "
              "Cannot be set simultaneously with snapshot.");
DEFINE_int32(iterations, 50, "The number of iterations to run.");
DEFINE_string(sigint_effect, "stop",
              "Optional; action to take when a SIGINT signal is received: snapshot, stop or "
              "none.");
DEFINE_string(reference, "",
              "For 'compare': an HDF5 file of reference results (input/, forward/, backward/, "
              "param_diff/ groups, as the golden fixtures).");
DEFINE_double(tolerance, 1e-4,
              "For 'compare': the largest allowed max|ours - reference| / max|reference| per blob.");
DEFINE_string(sighup_effect, "snapshot",
              "Optional; action to take when a SIGHUP signal is received: snapshot, stop or "
              "none.");
DEFINE_string(ddl, "",
              "Optional; distributed training (DDL): run under mpirun, one learner per process, "
              "with DDL's options in one string, e.g. -ddl \"-mode b:4x2x1 -dump_iter 100\" "
              "(-mode a:XxYxZ, -dump_iter N, -dev_sync 0|1|2, -rebind_iter N, -dbg_level 0|1|2, "
              "-timeout S, -bucket_kb N; see docs/DDL.md).");
DEFINE_bool(bvlc, false,
            "Optional, with -ddl: no gradient buckets; reduce all gradients after backward "
            "(IBM Caffe's \"disable layer-wise reduction\").");
DEFINE_int64(lms, -1,
             "Optional, GPU runs; Large Model Support (docs/LMS.md): buffers of at least this many "
             "KB live in host memory and are copied to the GPU only for the layers that use "
             "them. -1 (default): off; 0: every buffer.");
DEFINE_double(lms_frac, 0.0,
              "Optional, with -lms: LMS stays dormant until more than this fraction (0 to 1) of "
              "the GPU memory budget is in use; e.g. 0.9 costs nothing for nets that fit.");
DEFINE_int32(lms_prefetch, 1, "Optional, with -lms: how many layers ahead buffers are copied in.");
DEFINE_string(gpu_mem_limit, "",
              "Optional, GPU runs; the most GPU memory Caffe may use, in bytes or with K, M, G, "
              "T (powers of 1024), e.g. 16G. Default: $CAFFE_GPU_MEM_LIMIT, else the whole GPU.");

namespace {

// Whether any of -lms, -lms_frac and -gpu_mem_limit was given (the modes that cannot use them
// refuse them).
bool LmsFlagsGiven() {
  return FLAGS_lms >= 0 || FLAGS_lms_frac != 0 || !FLAGS_gpu_mem_limit.empty();
}

// Large Model Support for one command (docs/LMS.md): lms::Session with the flags, keeping each
// net's plan. Declared before the nets, so it outlives them.
class LmsSession {
 public:
  explicit LmsSession(const vector<int>& gpus)
      : session_(caffe::lms::MakeOptions(FLAGS_lms, FLAGS_lms_frac, FLAGS_lms_prefetch,
                                         FLAGS_gpu_mem_limit,
                                         caffe::GpuMemLimitFromEnvironment()),
                 gpus.empty() ? -1 : gpus[0]) {}
  // Plans `net` when LMS is on; with `attach`, the net's Forward/Backward run the plan.
  caffe::lms::Planner<float>* Plan(Net<float>* net, bool attach) {
    std::shared_ptr<caffe::lms::Planner<float>> planner = session_.Plan(net, attach);
    if (planner) planners_.push_back(planner);
    return planner.get();
  }
  // Plans the solver's train net and its test nets, attached.
  void PlanSolver(caffe::Solver<float>* solver) {
    Plan(solver->net().get(), /*attach=*/true);
    for (const auto& test_net : solver->test_nets()) Plan(test_net.get(), /*attach=*/true);
  }

 private:
  caffe::lms::Session session_;
  vector<std::shared_ptr<caffe::lms::Planner<float>>> planners_;
};

// A worker solver's LMS in `caffe train -gpu 0,1,...`: a manager for its GPU on its thread, and
// its net's plan.
class LmsWorker : public caffe::InProcessSync<float>::WorkerSetup {
 public:
  explicit LmsWorker(int gpu) : lms_({gpu}) {}
  void Ready(caffe::Solver<float>* solver) override { lms_.PlanSolver(solver); }

 private:
  LmsSession lms_;
};

using Command = std::function<int()>;

std::map<string, std::pair<Command, string>>& Commands() {
  static std::map<string, std::pair<Command, string>> commands;
  return commands;
}

struct CommandRegisterer {
  CommandRegisterer(const string& name, Command command, const string& help) {
    Commands()[name] = {std::move(command), help};
  }
};
#define REGISTER_CAFFE_COMMAND(name, help) \
  static CommandRegisterer g_register_##name(#name, &name, help)

vector<string> SplitList(const string& list) {
  vector<string> items;
  std::istringstream stream(list);
  string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// The GPUs named by -gpu ("all" means every visible device); empty means CPU.
vector<int> GetGpus() {
  vector<int> gpus;
  if (FLAGS_gpu.empty()) return gpus;
#ifdef CPU_ONLY
  CAFFE_THROW() << "-gpu " << FLAGS_gpu << " was given, but this build of Caffe has no GPU "
                << "support (built with CPU_ONLY); run without -gpu, or rebuild with CUDA";
#else
  if (FLAGS_gpu == "all") {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    CAFFE_CHECK(status == cudaSuccess && count > 0)
        << "-gpu all: no usable GPU (" << cudaGetErrorString(status) << ")";
    for (int i = 0; i < count; ++i) gpus.push_back(i);
    return gpus;
  }
  for (const string& id : SplitList(FLAGS_gpu)) {
    char* end = nullptr;
    long value = std::strtol(id.c_str(), &end, 10);
    CAFFE_CHECK(*end == '\0' && value >= 0)
        << "invalid -gpu value '" << FLAGS_gpu << "': expected device ids like 0 or 0,1, or all";
    gpus.push_back(static_cast<int>(value));
  }
  return gpus;
#endif
}

// Runs on the CPU, or on the first listed GPU.
void SetModeFromGpus(const vector<int>& gpus) {
  if (gpus.empty()) {
    LOG(INFO) << "Use CPU.";
    Caffe::set_mode(Caffe::CPU);
    return;
  }
  CAFFE_CHECK(gpus.size() == 1) << "-gpu " << FLAGS_gpu << ": this command runs on one GPU ("
                                << gpus.size() << " given); give a single device id";
  LOG(INFO) << "Use GPU with device ID " << gpus[0];
  Caffe::SetDevice(gpus[0]);
  Caffe::set_mode(Caffe::GPU);
}

caffe::Phase GetPhase(caffe::Phase default_value) {
  if (FLAGS_phase.empty()) return default_value;
  if (FLAGS_phase == "TRAIN") return caffe::TRAIN;
  if (FLAGS_phase == "TEST") return caffe::TEST;
  CAFFE_THROW() << "invalid -phase '" << FLAGS_phase << "'; expected TRAIN or TEST";
}

void CheckIterations() {
  CAFFE_CHECK_GT(FLAGS_iterations, 0) << "-iterations must be positive";
}

// BVLC's tools ignore flags a command has no use for; one line says so for the training-only
// ones, since `mpirun ... caffe test -ddl ...` would otherwise run N independent tests quietly.
void WarnOfTrainOnlyFlags(const char* command) {
  vector<string> given;
  if (!FLAGS_ddl.empty()) given.push_back("-ddl");
  if (FLAGS_bvlc) given.push_back("-bvlc");
  if (!FLAGS_solver.empty()) given.push_back("-solver");
  if (!FLAGS_snapshot.empty()) given.push_back("-snapshot");
  if (given.empty()) return;
  std::ostringstream names;
  for (size_t i = 0; i < given.size(); ++i) names << (i ? ", " : "") << given[i];
  LOG(WARNING) << names.str() << (given.size() > 1 ? " are" : " is") << " for caffe train; caffe "
               << command << " ignores " << (given.size() > 1 ? "them" : "it");
}

int device_query() {
  CAFFE_CHECK(!FLAGS_gpu.empty()) << "device_query needs a GPU id: caffe device_query -gpu 0";
  for (int gpu : GetGpus()) {
    LOG(INFO) << "Querying GPU " << gpu;
    Caffe::SetDevice(gpu);
    Caffe::DeviceQuery();
  }
  return 0;
}
REGISTER_CAFFE_COMMAND(device_query, "show GPU diagnostic information");

// train with -ddl: this process is one learner of an MPI job (see docs/DDL.md). A failure once the
// learners talk to each other (a dead peer, an MPI error) is printed here and ends the whole job
// (MPI_Abort), since the other learners may be waiting on this one; errors every learner finds
// alike before that (a bad -mode for the number of processes) end each learner cleanly.
#ifdef USE_MPI
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
    std::snprintf(g_terminated_message, sizeof(g_terminated_message),
                  "caffe train: learner %d was ended by mpirun (SIGTERM); mpirun's message says "
                  "why\n", session.rank());
    std::signal(SIGTERM, OnTerminatedByMpirun);
    if (session.rank() != 0 && options.dbg_level == 0) {
      FLAGS_minloglevel = std::max(FLAGS_minloglevel, 1);  // rank 0 logs; the others warn
    }
    Caffe::set_solver_count(session.size());
    Caffe::set_solver_rank(session.rank());
    Caffe::set_multiprocess(true);
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
    SetModeFromGpus(gpus);
    if (!gpus.empty()) {
      const int device = gpus[0];
      session.Run([device] { Caffe::SetDevice(device); });  // the communication thread too
    }
    // LMS on this learner's GPU, for the nets (this thread). The gradients move into DdlSync's
    // buffer, which the communication thread reduces: device memory of its own that LMS never
    // swaps, counted in the budget.
    LmsSession lms(gpus);
    caffe::SignalHandler signal_handler(
        caffe::ParseSolverAction(FLAGS_sigint_effect, "sigint_effect"),
        caffe::ParseSolverAction(FLAGS_sighup_effect, "sighup_effect"));
    std::unique_ptr<caffe::Solver<float>> solver(
        caffe::SolverRegistry<float>::CreateSolver(solver_param));
    caffe::DdlSync<float> sync(solver.get(), &session, signal_handler.GetActionFunction());
    lms.PlanSolver(solver.get());
    LOG(INFO) << "Starting Optimization";
    if (!FLAGS_snapshot.empty()) LOG(INFO) << "Resuming from " << FLAGS_snapshot;
    try {
      sync.Solve(FLAGS_snapshot.empty() ? nullptr : FLAGS_snapshot.c_str());
      session.Finish();
    } catch (const caffe::Error& error) {
      // Reported before anything is torn down: the communication thread may still be inside a
      // collective on the gradient buffer.
      ReportAndAbortJob(error);
    }
    LOG(INFO) << "Optimization Done.";
  } catch (const caffe::Error& error) {
    if (!caffe::DdlSession::MpiRunning()) throw;  // ended cleanly everywhere: main reports it
    ReportAndAbortJob(error);
  }
  return 0;
#endif
}

// train with several -gpu ids (BVLC's multi-GPU training): one solver per GPU, each on its own
// thread of this process, kept in step by InProcessSync; the effective batch is N x batch_size.
int TrainOnSeveralGpus(const caffe::SolverParameter& solver_param, const vector<int>& gpus) {
  // Every id must name a usable GPU before any thread starts; the caller's thread ends on the
  // first, where the root solver runs.
  for (auto gpu = gpus.rbegin(); gpu != gpus.rend(); ++gpu) Caffe::SetDevice(*gpu);
  Caffe::set_mode(Caffe::GPU);
  std::ostringstream list;
  for (size_t i = 0; i < gpus.size(); ++i) list << (i ? ", " : "") << gpus[i];
  LOG(INFO) << "Using GPUs " << list.str();
#ifndef CPU_ONLY
  for (int gpu : gpus) {
    cudaDeviceProp properties;
    if (cudaGetDeviceProperties(&properties, gpu) == cudaSuccess) {
      LOG(INFO) << "GPU " << gpu << ": " << properties.name;
    }
  }
#endif
  const int count = static_cast<int>(gpus.size());
  Caffe::set_solver_count(count);  // before the root's data layers are built: rank 0's share
  Caffe::set_solver_rank(0);
  // LMS (when asked for) on each solver's GPU, each solver thread with its own manager and
  // budget: the root's here, the workers' on their threads (LmsWorker).
  LmsSession lms(gpus);
  caffe::SignalHandler signal_handler(
      caffe::ParseSolverAction(FLAGS_sigint_effect, "sigint_effect"),
      caffe::ParseSolverAction(FLAGS_sighup_effect, "sighup_effect"));
  std::unique_ptr<caffe::Solver<float>> solver(
      caffe::SolverRegistry<float>::CreateSolver(solver_param));
  caffe::InProcessSync<float> sync(solver.get(), count, gpus);
  sync.SetActionFunction(signal_handler.GetActionFunction());
  // After InProcessSync moved the gradients into its buffer, which LMS leaves alone.
  lms.PlanSolver(solver.get());
  if (LmsFlagsGiven()) {
    sync.SetWorkerSetup([&gpus](int rank) { return std::make_unique<LmsWorker>(gpus[rank]); });
  }
  LOG(INFO) << "Starting Optimization";
  if (!FLAGS_snapshot.empty()) LOG(INFO) << "Resuming from " << FLAGS_snapshot;
  sync.Run(FLAGS_snapshot.empty() ? nullptr : FLAGS_snapshot.c_str());
  LOG(INFO) << "Optimization Done.";
  return 0;
}

int train() {
  CAFFE_CHECK(!FLAGS_solver.empty()) << "train needs a solver definition: -solver FILE";
  CAFFE_CHECK(FLAGS_snapshot.empty() || FLAGS_weights.empty())
      << "give -snapshot to resume training or -weights to finetune, not both";
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
  if (!FLAGS_snapshot.empty()) {
    solver_param.clear_weights();
  } else if (!FLAGS_weights.empty()) {
    solver_param.clear_weights();
    solver_param.add_weights(FLAGS_weights);
  }
  if (!FLAGS_ddl.empty()) return TrainDdl(solver_param);
  LOG_IF(INFO, FLAGS_bvlc) << "-bvlc only matters with -ddl; ignored.";
  const vector<int> gpus = GetGpus();
  if (gpus.size() > 1) return TrainOnSeveralGpus(solver_param, gpus);
  SetModeFromGpus(gpus);
  LmsSession lms(gpus);
  caffe::SignalHandler signal_handler(
      caffe::ParseSolverAction(FLAGS_sigint_effect, "sigint_effect"),
      caffe::ParseSolverAction(FLAGS_sighup_effect, "sighup_effect"));
  std::unique_ptr<caffe::Solver<float>> solver(
      caffe::SolverRegistry<float>::CreateSolver(solver_param));
  solver->SetActionFunction(signal_handler.GetActionFunction());
  lms.PlanSolver(solver.get());
  LOG(INFO) << "Starting Optimization";
  if (!FLAGS_snapshot.empty()) {
    LOG(INFO) << "Resuming from " << FLAGS_snapshot;
    solver->Solve(FLAGS_snapshot);
  } else {
    solver->Solve();
  }
  LOG(INFO) << "Optimization Done.";
  return 0;
}
REGISTER_CAFFE_COMMAND(train, "train or finetune a model");

int test() {
  CAFFE_CHECK(!FLAGS_model.empty()) << "test needs a model definition: -model FILE";
  CAFFE_CHECK(!FLAGS_weights.empty()) << "test needs model weights: -weights FILE";
  CheckIterations();
  WarnOfTrainOnlyFlags("test");
  const vector<string> stages = SplitList(FLAGS_stage);
  const vector<int> gpus = GetGpus();
  SetModeFromGpus(gpus);
  LmsSession lms(gpus);
  Net<float> caffe_net(FLAGS_model, caffe::TEST, FLAGS_level, &stages);
  caffe::LoadNetWeights(&caffe_net, FLAGS_weights);
  lms.Plan(&caffe_net, /*attach=*/true);
  LOG(INFO) << "Running for " << FLAGS_iterations << " iterations.";
  vector<int> test_score_output_id;
  vector<float> test_score;
  float loss = 0;
  for (int i = 0; i < FLAGS_iterations; ++i) {
    float iter_loss;
    const vector<Blob<float>*>& result = caffe_net.Forward(&iter_loss);
    if (!std::isfinite(iter_loss) && std::isfinite(loss)) {  // the first such batch
      LOG(WARNING) << "the loss of batch " << i << " is " << caffe::NonFiniteName(iter_loss)
                   << "; " << caffe::ExplainNonFiniteOrigin(caffe::FindNonFiniteOrigin(caffe_net),
                                                            /*base_lr=*/0);
    }
    loss += iter_loss;
    int idx = 0;
    for (size_t j = 0; j < result.size(); ++j) {
      const float* result_vec = result[j]->cpu_data();
      const string& output_name = caffe_net.blob_names()[caffe_net.output_blob_indices()[j]];
      for (int k = 0; k < result[j]->count(); ++k, ++idx) {
        const float score = result_vec[k];
        if (i == 0) {
          test_score.push_back(score);
          test_score_output_id.push_back(static_cast<int>(j));
        } else {
          test_score[idx] += score;
        }
        LOG(INFO) << "Batch " << i << ", " << output_name << " = " << score;
      }
    }
  }
  loss /= FLAGS_iterations;
  LOG(INFO) << "Loss: " << loss;
  for (size_t i = 0; i < test_score.size(); ++i) {
    const int blob_index = caffe_net.output_blob_indices()[test_score_output_id[i]];
    const string& output_name = caffe_net.blob_names()[blob_index];
    const float loss_weight = caffe_net.blob_loss_weights()[blob_index];
    const float mean_score = test_score[i] / FLAGS_iterations;
    std::ostringstream loss_msg_stream;
    if (loss_weight) {
      loss_msg_stream << " (* " << loss_weight << " = " << loss_weight * mean_score << " loss)";
    }
    LOG(INFO) << output_name << " = " << mean_score << loss_msg_stream.str();
  }
  return 0;
}
REGISTER_CAFFE_COMMAND(test, "score a model");

// Times forward and backward of every layer, as BVLC does: backward runs for every layer (even in
// a net without a loss), so figures compare one to one with BVLC's.
int time() {
  CAFFE_CHECK(!FLAGS_model.empty()) << "time needs a model definition: -model FILE";
  CheckIterations();
  WarnOfTrainOnlyFlags("time");
  const caffe::Phase phase = GetPhase(caffe::TRAIN);
  const vector<string> stages = SplitList(FLAGS_stage);
  const vector<int> gpus = GetGpus();
  SetModeFromGpus(gpus);
  LmsSession lms(gpus);
  Net<float> caffe_net(FLAGS_model, phase, FLAGS_level, &stages);
  if (!FLAGS_weights.empty()) caffe::LoadNetWeights(&caffe_net, FLAGS_weights);
  // With LMS the timed layers include their swaps, as IBM's did.
  caffe::lms::Planner<float>* planner = lms.Plan(&caffe_net, /*attach=*/true);

  const auto& layers = caffe_net.layers();
  const int last = static_cast<int>(layers.size()) - 1;
  const auto backward_step = [&](int i) {
    if (planner) planner->BeforeStep(planner->backward_step(i));
    caffe_net.BackwardStep(i, last, 0);
    if (planner) planner->AfterStep(planner->backward_step(i));
  };

  // A first pass allocates every buffer, so the timed passes are steady. Its backward runs every
  // layer's step, as the timed ones do (and BVLC's), not only those a training step would: in a
  // net without a loss no layer needs backward, yet a layer with weights computes their gradients
  // in its step, and the first of those steps allocates the gradients it touches.
  LOG(INFO) << "Performing Forward";
  float initial_loss;
  caffe_net.Forward(&initial_loss);
  LOG(INFO) << "Initial loss: " << initial_loss;
  LOG(INFO) << "Performing Backward";
  for (int i = last; i >= 0; --i) backward_step(i);

  for (int i = 0; i < static_cast<int>(layers.size()); ++i) {
    if (!caffe_net.RunsFused(i)) continue;
    LOG(INFO) << caffe_net.FusedGroupNames(i) << " run as one (CAFFE_FUSION=0 runs them "
              << "apart): their forward time shows under the first, their backward time under "
              << "the last";
  }
  LOG(INFO) << "*** Benchmark begins ***";
  LOG(INFO) << "Testing for " << FLAGS_iterations << " iterations.";
  // Each layer's time runs from the mark before it to the mark after it: on the GPU, events on
  // the stream, so the host never waits between layers (as in training) and the times are the
  // GPU's; each iteration ends when the GPU has finished it.
  const size_t n = layers.size();
  caffe::MarkTimer marks(Caffe::mode() == Caffe::GPU);
  Timer total_timer;
  total_timer.Start();
  vector<double> forward_time_per_layer(n, 0.0);
  vector<double> backward_time_per_layer(n, 0.0);
  double forward_time = 0.0;
  double backward_time = 0.0;
  for (int j = 0; j < FLAGS_iterations; ++j) {
    Timer iter_timer;
    iter_timer.Start();
    marks.Start();
    // A group that runs as one (Net::RunsFused) does so in its head's forward step and its
    // last layer's backward step, as in training; the other steps' times are then 0.
    for (int i = 0; i <= last; ++i) {
      if (planner) planner->BeforeStep(planner->forward_step(i));
      caffe_net.ForwardStep(i, 0, last);
      if (planner) planner->AfterStep(planner->forward_step(i));
      marks.Mark();  // mark 1 + i
    }
    for (int i = last; i >= 0; --i) {
      backward_step(i);
      marks.Mark();  // mark 1 + n + (last - i)
    }
    marks.Finish();
    for (size_t i = 0; i < n; ++i) {
      forward_time_per_layer[i] += marks.Milliseconds(i, i + 1);
      backward_time_per_layer[i] += marks.Milliseconds(2 * n - 1 - i, 2 * n - i);
    }
    forward_time += marks.Milliseconds(0, n);
    backward_time += marks.Milliseconds(n, 2 * n);
    LOG(INFO) << "Iteration: " << j + 1 << " forward-backward time: " << iter_timer.MilliSeconds()
              << " ms.";
  }
  // A group's other steps only record their events: what little they measure goes with it.
  for (int i = 0; i < static_cast<int>(n); ++i) {
    if (!caffe_net.RunsFused(i)) continue;
    const int last = i + caffe_net.fused_followers()[i];
    for (int j = i + 1; j <= last; ++j) {
      forward_time_per_layer[i] += forward_time_per_layer[j];
      forward_time_per_layer[j] = 0;
    }
    for (int j = i; j < last; ++j) {
      backward_time_per_layer[last] += backward_time_per_layer[j];
      backward_time_per_layer[j] = 0;
    }
  }
  LOG(INFO) << "Average time per layer: ";
  for (size_t i = 0; i < layers.size(); ++i) {
    const string& layername = layers[i]->layer_param().name();
    LOG(INFO) << std::setfill(' ') << std::setw(10) << layername
              << "\tforward: " << forward_time_per_layer[i] / FLAGS_iterations << " ms.";
    LOG(INFO) << std::setfill(' ') << std::setw(10) << layername
              << "\tbackward: " << backward_time_per_layer[i] / FLAGS_iterations << " ms.";
  }
  total_timer.Stop();
  LOG(INFO) << "Average Forward pass: " << forward_time / FLAGS_iterations << " ms.";
  LOG(INFO) << "Average Backward pass: " << backward_time / FLAGS_iterations << " ms.";
  LOG(INFO) << "Average Forward-Backward: " << total_timer.MilliSeconds() / FLAGS_iterations
            << " ms.";
  LOG(INFO) << "Total Time: " << total_timer.MilliSeconds() << " ms.";
  LOG(INFO) << "*** Benchmark ends ***";
  return 0;
}
REGISTER_CAFFE_COMMAND(time, "benchmark model execution time");

// Runs a net on stored inputs and compares every blob, diff and param diff with stored reference
// results: how a user checks that a model ported from BVLC Caffe gives BVLC's numbers.
int compare() {
  CAFFE_CHECK(!FLAGS_model.empty()) << "compare needs a model definition: -model FILE";
  CAFFE_CHECK(!FLAGS_reference.empty()) << "compare needs reference results: -reference FILE.h5";
  CAFFE_CHECK(FLAGS_tolerance >= 0) << "-tolerance must not be negative";
  const vector<string> stages = SplitList(FLAGS_stage);
  SetModeFromGpus(GetGpus());
  Net<float> caffe_net(FLAGS_model, GetPhase(caffe::TEST), FLAGS_level, &stages);
  if (!FLAGS_weights.empty()) caffe::LoadNetWeights(&caffe_net, FLAGS_weights);
  caffe::ReferenceData reference(FLAGS_reference);
  const vector<caffe::BlobComparison> comparisons =
      caffe::CompareNetWithReference(&caffe_net, reference);
  int compared = 0;
  vector<string> failures;
  std::cout << std::left << std::setw(44) << "blob" << std::right << std::setw(14)
            << "max abs err" << std::setw(14) << "max |ref|" << std::setw(14) << "relative"
            << "\n";
  for (const caffe::BlobComparison& comparison : comparisons) {
    if (!comparison.present) {
      std::cout << std::left << std::setw(44) << comparison.what << "  (not in the reference)\n";
      continue;
    }
    ++compared;
    std::cout << std::left << std::setw(44) << comparison.what << std::right;
    if (!comparison.shapes_match) {
      std::cout << "  shape differs from the reference  FAIL\n";
      failures.push_back(comparison.what);
      continue;
    }
    const bool ok = comparison.Within(FLAGS_tolerance);
    std::cout << std::setw(14) << std::setprecision(3) << comparison.max_abs_diff << std::setw(14)
              << comparison.max_abs_reference << std::setw(14) << comparison.relative()
              << (ok ? "" : "  FAIL") << "\n";
    if (!ok) failures.push_back(comparison.what);
  }
  std::cout << compared << " blobs compared, " << failures.size() << " above the tolerance "
            << FLAGS_tolerance << std::endl;
  CAFFE_CHECK(compared > 0) << "nothing in '" << FLAGS_reference << "' matched the net's blobs";
  CAFFE_CHECK(failures.empty()) << failures.size() << " of " << compared
                                << " blobs differ from the reference by more than "
                                << FLAGS_tolerance << " (relative), the first: " << failures[0];
  return 0;
}
REGISTER_CAFFE_COMMAND(compare, "compare a net's results with stored reference results");

string UsageMessage() {
  std::ostringstream usage;
  usage << "command line brew\nusage: caffe <command> <args>\n\ncommands:\n";
  for (const auto& command : Commands()) {
    usage << "  " << std::left << std::setw(16) << command.first << command.second.second
          << "\n";
  }
  return usage.str();
}

}  // namespace

int main(int argc, char** argv) {
  FLAGS_alsologtostderr = 1;
  gflags::SetVersionString("1.0.0");
  gflags::SetUsageMessage(UsageMessage());
  caffe::GlobalInit(&argc, &argv);
  if (argc != 2) {
    std::cerr << (argc < 2 ? "caffe: no command given" : "caffe: too many arguments") << "\n"
              << UsageMessage() << "run 'caffe -help' for the flags\n";
    return 1;
  }
  const string name = argv[1];
  auto command = Commands().find(name);
  if (command == Commands().end()) {
    std::cerr << "caffe: unknown command '" << name << "'\n" << UsageMessage();
    return 1;
  }
  try {
    return command->second.first();
  } catch (const caffe::Error& error) {
    // One write, so the lines of learners under mpirun do not interleave.
    std::cerr << ("caffe " + name + ": error: " + error.what() + "\n") << std::flush;
    return 1;
  }
}
