// `caffe train -gpu 0,1,...` (train.hpp): one solver per GPU, each on its own thread of this
// process, kept in step by InProcessSync.
#include <glog/logging.h>

#include <memory>
#include <sstream>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/parallel/in_process_sync.hpp"
#include "caffe_tool/flag_values.hpp"
#include "caffe_tool/flags.hpp"
#include "caffe_tool/lms_session.hpp"
#include "caffe_tool/train.hpp"
#ifndef CPU_ONLY
#include <cuda_runtime.h>
#endif

namespace caffe_tool {

using caffe::Caffe;
using std::vector;

namespace {

// Every id must name a usable GPU before any thread starts; the caller's thread ends on the
// first, where the root solver runs.
void UseGpus(const vector<int>& gpus) {
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
}

// A worker solver's setup on its thread: its activation gradients share memory as the root's do,
// and LMS (when asked for) plans its nets.
class Worker : public caffe::InProcessSync<float>::WorkerSetup {
 public:
  explicit Worker(int gpu) {
    if (LmsFlagsGiven()) lms_ = std::make_unique<LmsWorker>(gpu);
  }
  void Ready(caffe::Solver<float>* solver) override {
    ShareTrainingDiffs(solver);
    if (lms_) lms_->Ready(solver);
  }

 private:
  std::unique_ptr<LmsWorker> lms_;
};

}  // namespace

int TrainOnSeveralGpus(const caffe::SolverParameter& solver_param, const vector<int>& gpus) {
  UseGpus(gpus);
  const int count = static_cast<int>(gpus.size());
  Caffe::set_solver_count(count);  // before the root's data layers are built: rank 0's share
  Caffe::set_solver_rank(0);
  // LMS (when asked for) on each solver's GPU, each solver thread with its own manager and
  // budget: the root's here, the workers' on their threads (Worker).
  Training training(solver_param, gpus);
  caffe::InProcessSync<float> sync(training.solver.get(), count, gpus);
  sync.SetActionFunction(training.signal_handler.GetActionFunction());
  training.lms.PlanSolver(training.solver.get());
  sync.SetWorkerSetup([&gpus](int rank) { return std::make_unique<Worker>(gpus[rank]); });
  training.LogStart();
  sync.Run(FLAGS_snapshot.empty() ? nullptr : FLAGS_snapshot.c_str());
  LOG(INFO) << "Optimization Done.";
  return 0;
}

}  // namespace caffe_tool
