// Large Model Support for one command of the caffe tool (docs/LMS.md): LmsSession plans the nets
// under -lms, -lms_frac, -lms_prefetch and -gpu_mem_limit; LmsWorker does so for each worker
// solver of `caffe train -gpu 0,1,...` on its own thread.
#ifndef CAFFE_TOOL_LMS_SESSION_HPP_
#define CAFFE_TOOL_LMS_SESSION_HPP_

#include <memory>
#include <vector>

#include "caffe/lms/planner.hpp"
#include "caffe/lms/session.hpp"
#include "caffe/net.hpp"
#include "caffe/parallel/in_process_sync.hpp"
#include "caffe/solver.hpp"

namespace caffe_tool {

/// lms::Session with the flags, keeping each net's plan. Declared before the nets, so it
/// outlives them.
class LmsSession {
 public:
  explicit LmsSession(const std::vector<int>& gpus);
  /// Plans `net` when LMS is on; with `attach`, the net's Forward/Backward run the plan.
  caffe::lms::Planner<float>* Plan(caffe::Net<float>* net, bool attach);
  /// Plans the solver's train net and its test nets, attached.
  void PlanSolver(caffe::Solver<float>* solver);

 private:
  caffe::lms::Session session_;
  std::vector<std::shared_ptr<caffe::lms::Planner<float>>> planners_;
};

/// A worker solver's LMS in `caffe train -gpu 0,1,...`: a manager for its GPU on its thread, and
/// its net's plan.
class LmsWorker : public caffe::InProcessSync<float>::WorkerSetup {
 public:
  explicit LmsWorker(int gpu) : lms_({gpu}) {}
  void Ready(caffe::Solver<float>* solver) override { lms_.PlanSolver(solver); }

 private:
  LmsSession lms_;
};

}  // namespace caffe_tool

#endif  // CAFFE_TOOL_LMS_SESSION_HPP_
