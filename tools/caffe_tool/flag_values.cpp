// The caffe tool's shared flags, read and checked (flag_values.hpp).
#include "caffe_tool/flag_values.hpp"

#include <glog/logging.h>

#include <cstdlib>
#include <sstream>

#include "caffe/common.hpp"
#include "caffe_tool/flags.hpp"
#ifndef CPU_ONLY
#include <cuda_runtime.h>
#endif

namespace caffe_tool {

using caffe::Caffe;
using std::string;
using std::vector;

bool LmsFlagsGiven() {
  return FLAGS_lms >= 0 || FLAGS_lms_frac != 0 || !FLAGS_gpu_mem_limit.empty();
}

vector<string> SplitList(const string& list) {
  vector<string> items;
  std::istringstream stream(list);
  string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

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

void CheckIterations() { CAFFE_CHECK_GT(FLAGS_iterations, 0) << "-iterations must be positive"; }

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

}  // namespace caffe_tool
