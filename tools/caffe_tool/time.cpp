// `caffe time -model M [-iterations N] [-phase P] [-weights W]`: times forward and backward of
// every layer, as BVLC does: backward runs for every layer (even in a net without a loss), so
// figures compare one to one with BVLC's. With LMS the timed layers include their swaps, as
// IBM's did.
#include <glog/logging.h>

#include <iomanip>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/lms/planner.hpp"
#include "caffe/net.hpp"
#include "caffe/net/diff_sharing.hpp"
#include "caffe/solver.hpp"
#include "caffe/util/benchmark.hpp"
#include "caffe/util/environment.hpp"
#include "caffe_tool/command_registry.hpp"
#include "caffe_tool/flag_values.hpp"
#include "caffe_tool/flags.hpp"
#include "caffe_tool/lms_session.hpp"
#include "caffe_tool/timeline_session.hpp"

namespace caffe_tool {
namespace {

using caffe::Caffe;
using caffe::Net;
using caffe::Timer;
using std::string;
using std::vector;

/// One layer's forward or backward step of the whole net, inside the LMS plan's swaps if any.
class Steps {
 public:
  Steps(Net<float>* net, caffe::lms::Planner<float>* planner)
      : net_(net), planner_(planner), last_(static_cast<int>(net->layers().size()) - 1) {}
  int last() const { return last_; }
  void Forward(int i) {
    if (planner_) planner_->BeforeStep(planner_->forward_step(i));
    net_->ForwardStep(i, 0, last_);
    if (planner_) planner_->AfterStep(planner_->forward_step(i));
  }
  void Backward(int i) {
    if (planner_) planner_->BeforeStep(planner_->backward_step(i));
    net_->BackwardStep(i, last_, 0);
    if (planner_) planner_->AfterStep(planner_->backward_step(i));
  }

 private:
  Net<float>* net_;
  caffe::lms::Planner<float>* planner_;
  int last_;
};

/// Milliseconds summed over the timed iterations: each layer's forward and backward, and the
/// whole passes.
struct PassTimes {
  explicit PassTimes(size_t layers) : forward(layers, 0.0), backward(layers, 0.0) {}
  vector<double> forward, backward;
  double forward_total = 0.0, backward_total = 0.0;
};

/// A first pass allocates every buffer, so the timed passes are steady. Its backward runs every
/// layer's step, as the timed ones do (and BVLC's), not only those a training step would: in a
/// net without a loss no layer needs backward, yet a layer with weights computes their gradients
/// in its step, and the first of those steps allocates the gradients it touches.
void WarmUp(Net<float>* net, Steps* steps) {
  LOG(INFO) << "Performing Forward";
  float initial_loss;
  net->Forward(&initial_loss);
  LOG(INFO) << "Initial loss: " << initial_loss;
  LOG(INFO) << "Performing Backward";
  for (int i = steps->last(); i >= 0; --i) steps->Backward(i);
}

void LogFusedGroups(const Net<float>& net) {
  for (int i = 0; i < static_cast<int>(net.layers().size()); ++i) {
    if (!net.RunsFused(i)) continue;
    LOG(INFO) << net.FusedGroupNames(i) << " run as one (CAFFE_FUSION=0 runs them "
              << "apart): their forward time shows under the first, their backward time under "
              << "the last";
  }
}

/// Runs -iterations forward and backward passes, each layer's time from the mark before it to
/// the mark after it: on the GPU, events on the stream, so the host never waits between layers
/// (as in training) and the times are the GPU's; each iteration ends when the GPU has finished it.
/// A group that runs as one (Net::RunsFused) does so in its head's forward step and its last
/// layer's backward step, as in training; the other steps' times are then 0.
PassTimes TimeIterations(Steps* steps, caffe::MarkTimer* marks) {
  const int last = steps->last();
  const size_t n = last + 1;
  PassTimes times(n);
  for (int j = 0; j < FLAGS_iterations; ++j) {
    caffe::timeline::SetIteration(j);
    caffe::timeline::Slice pass(
        "step", caffe::timeline::Recording() ? "iteration " + std::to_string(j) : string());
    Timer iter_timer;
    iter_timer.Start();
    marks->Start();
    for (int i = 0; i <= last; ++i) {
      steps->Forward(i);
      marks->Mark();  // mark 1 + i
    }
    for (int i = last; i >= 0; --i) {
      steps->Backward(i);
      marks->Mark();  // mark 1 + n + (last - i)
    }
    marks->Finish();
    for (size_t i = 0; i < n; ++i) {
      times.forward[i] += marks->Milliseconds(i, i + 1);
      times.backward[i] += marks->Milliseconds(2 * n - 1 - i, 2 * n - i);
    }
    times.forward_total += marks->Milliseconds(0, n);
    times.backward_total += marks->Milliseconds(n, 2 * n);
    LOG(INFO) << "Iteration: " << j + 1 << " forward-backward time: " << iter_timer.MilliSeconds()
              << " ms.";
  }
  return times;
}

/// A group's other steps only record their events: what little they measure goes with it.
void FoldFusedGroups(const Net<float>& net, PassTimes* times) {
  for (int i = 0; i < static_cast<int>(times->forward.size()); ++i) {
    if (!net.RunsFused(i)) continue;
    const int last = i + net.fused_followers()[i];
    for (int j = i + 1; j <= last; ++j) {
      times->forward[i] += times->forward[j];
      times->forward[j] = 0;
    }
    for (int j = i; j < last; ++j) {
      times->backward[last] += times->backward[j];
      times->backward[j] = 0;
    }
  }
}

void LogLayerTimes(const Net<float>& net, const PassTimes& times) {
  LOG(INFO) << "Average time per layer: ";
  for (size_t i = 0; i < net.layers().size(); ++i) {
    const string& layername = net.layers()[i]->layer_param().name();
    LOG(INFO) << std::setfill(' ') << std::setw(10) << layername
              << "\tforward: " << times.forward[i] / FLAGS_iterations << " ms.";
    LOG(INFO) << std::setfill(' ') << std::setw(10) << layername
              << "\tbackward: " << times.backward[i] / FLAGS_iterations << " ms.";
  }
}

void LogAverages(const PassTimes& times, Timer* total_timer) {
  LOG(INFO) << "Average Forward pass: " << times.forward_total / FLAGS_iterations << " ms.";
  LOG(INFO) << "Average Backward pass: " << times.backward_total / FLAGS_iterations << " ms.";
  LOG(INFO) << "Average Forward-Backward: " << total_timer->MilliSeconds() / FLAGS_iterations
            << " ms.";
  LOG(INFO) << "Total Time: " << total_timer->MilliSeconds() << " ms.";
}

int time() {
  CAFFE_CHECK(!FLAGS_model.empty()) << "time needs a model definition: -model FILE";
  CheckIterations();
  WarnOfTrainOnlyFlags("time");
  const caffe::Phase phase = GetPhase(caffe::TRAIN);
  const vector<string> stages = SplitList(FLAGS_stage);
  const vector<int> gpus = GetGpus();
  SetModeFromGpus(gpus);
  TimelineSession timeline;
  LmsSession lms(gpus);
  Net<float> caffe_net(FLAGS_model, phase, FLAGS_level, &stages);
  if (!FLAGS_weights.empty()) caffe::LoadNetWeights(&caffe_net, FLAGS_weights);
  if (caffe::ShareDiffsFromEnvironment()) caffe::ShareActivationDiffs(&caffe_net);
  Steps steps(&caffe_net, lms.Plan(&caffe_net, /*attach=*/true));
  WarmUp(&caffe_net, &steps);
  LogFusedGroups(caffe_net);
  LOG(INFO) << "*** Benchmark begins ***";
  LOG(INFO) << "Testing for " << FLAGS_iterations << " iterations.";
  caffe::MarkTimer marks(Caffe::mode() == Caffe::GPU);
  // As BVLC's, the total time includes the per-layer report.
  Timer total_timer;
  total_timer.Start();
  PassTimes times = TimeIterations(&steps, &marks);
  FoldFusedGroups(caffe_net, &times);
  LogLayerTimes(caffe_net, times);
  total_timer.Stop();
  LogAverages(times, &total_timer);
  LOG(INFO) << "*** Benchmark ends ***";
  return 0;
}
REGISTER_CAFFE_COMMAND(time, "benchmark model execution time");

}  // namespace
}  // namespace caffe_tool
