// The caffe tool's Large Model Support session (lms_session.hpp).
#include "caffe_tool/lms_session.hpp"

#include <cstdlib>

#include "caffe/lms/lms_options.hpp"
#include "caffe/util/environment.hpp"
#include "caffe_tool/flags.hpp"

namespace caffe_tool {

LmsSession::LmsSession(const std::vector<int>& gpus)
    : session_(caffe::lms::MakeOptions(FLAGS_lms, FLAGS_lms_frac, FLAGS_lms_prefetch,
                                       FLAGS_gpu_mem_limit, caffe::GpuMemLimitFromEnvironment()),
               gpus.empty() ? -1 : gpus[0]) {}

caffe::lms::Planner<float>* LmsSession::Plan(caffe::Net<float>* net, bool attach) {
  std::shared_ptr<caffe::lms::Planner<float>> planner = session_.Plan(net, attach);
  if (planner) planners_.push_back(planner);
  return planner.get();
}

void LmsSession::PlanSolver(caffe::Solver<float>* solver) {
  Plan(solver->net().get(), /*attach=*/true);
  for (const auto& test_net : solver->test_nets()) Plan(test_net.get(), /*attach=*/true);
}

}  // namespace caffe_tool
