#include "caffe/lms/session.hpp"

#include <glog/logging.h>

#include <utility>

#include "caffe/lms/lms_options.hpp"
#ifndef CPU_ONLY
#include "caffe/memory/cuda_device.hpp"
#endif

namespace caffe {
namespace lms {

Session::Session(const Options& options, int gpu) {
  if (!Requested(options)) return;
  if (gpu < 0) {
    LOG(WARNING) << "[LMS] -lms, -lms_frac and -gpu_mem_limit apply to GPU runs (-gpu); this "
                    "run is on the CPU, where they have no effect";
    return;
  }
#ifndef CPU_ONLY
  Install(options, std::make_unique<CudaDevice>(gpu, options.poison_overwritten));
#endif
}

Session::Session(const Options& options, std::unique_ptr<Device> device) {
  if (Requested(options)) Install(options, std::move(device));
}

void Session::Install(const Options& options, std::unique_ptr<Device> device) {
  manager_ = std::make_shared<MemoryManager>(std::move(device), options);
  MemoryManager::Install(manager_);
  LOG(INFO) << manager_->SettingsLine();
}

Session::~Session() {
  if (!manager_) return;
  LOG(INFO) << manager_->StatsLine();
  if (MemoryManager::Current() == manager_) MemoryManager::Install(nullptr);
}

std::shared_ptr<Planner<float>> Session::Plan(Net<float>* net, bool attach) const {
  if (!planning()) return nullptr;
  auto planner = std::make_shared<Planner<float>>(net, manager_);
  if (attach) planner->AttachToNet();
  LOG(INFO) << planner->SummaryLine();
  return planner;
}

std::string Session::StatsLine() const { return manager_ ? manager_->StatsLine() : ""; }

}  // namespace lms
}  // namespace caffe
