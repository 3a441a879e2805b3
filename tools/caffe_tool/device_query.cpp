// `caffe device_query -gpu N`: what CUDA says of each GPU named.
#include <glog/logging.h>

#include "caffe/common.hpp"
#include "caffe_tool/command_registry.hpp"
#include "caffe_tool/flag_values.hpp"
#include "caffe_tool/flags.hpp"

namespace caffe_tool {
namespace {

using caffe::Caffe;

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

}  // namespace
}  // namespace caffe_tool
