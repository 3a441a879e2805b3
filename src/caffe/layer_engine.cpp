#include "caffe/layer_engine.hpp"

#include <glog/logging.h>

#include <algorithm>
#include <cctype>

#include "caffe/common.hpp"
#include "caffe/util/environment.hpp"
#include "caffe/util/error.hpp"

namespace caffe {

bool DnnlBuilt() {
#ifdef USE_DNNL
  return true;
#else
  return false;
#endif
}

bool CuDNNBuilt() {
#ifdef USE_CUDNN
  return true;
#else
  return false;
#endif
}

const std::vector<EngineInventoryRow>& EngineInventory() {
  static const std::vector<EngineInventoryRow> inventory = {
      {"Convolution", "convolution_param", true, true},
      {"Deconvolution", "convolution_param", true, false},
      {"LRN", "lrn_param", true, false},
      {"Pooling", "pooling_param", true, false},
      {"ReLU", "relu_param", true, false},
      {"Sigmoid", "sigmoid_param", true, false},
      {"Softmax", "softmax_param", true, false},
      {"TanH", "tanh_param", true, false},
  };
  return inventory;
}

namespace {

std::string Upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

// Intel Caffe writes e.g. "MKLDNN" or "MKLDNN:DLCP"; what follows a colon is its own business.
std::string StringEngine(const LayerParameter& param) {
  return Upper(param.engine().substr(0, param.engine().find(':')));
}

bool IsCpuEngineName(const std::string& name) {
  return name == "MKLDNN" || name == "MKL2017" || name == "DNNL" || name == "ONEDNN";
}

[[noreturn]] void UnknownEngine(const LayerParameter& param) {
  CAFFE_THROW() << "layer '" << param.name() << "': unknown engine \"" << param.engine()
                << "\"; expected one of CAFFE, CUDNN, MKLDNN, MKL2017, DNNL";
}

// DNNL where built; a request for it elsewhere runs Caffe's engine and says so once per layer.
CpuEngine DnnlIfBuilt(const LayerParameter& param, const std::string& asked) {
  if (DnnlBuilt()) return CpuEngine::kDnnl;
  LOG(WARNING) << "layer '" << param.name() << "' asks for engine " << asked
               << ", but this build has no DNNL (install libdnnl-dev and rebuild): using CAFFE";
  return CpuEngine::kCaffe;
}

}  // namespace

std::string LayerEngineName(const LayerParameter& param) {
  for (const EngineInventoryRow& row : EngineInventory()) {
    if (param.type() != row.type) continue;
    const auto* field = LayerParameter::descriptor()->FindFieldByName(row.param);
    CHECK(field != nullptr) << "LayerParameter has no field " << row.param;
    const google::protobuf::Message& message = param.GetReflection()->GetMessage(param, field);
    const auto* engine = message.GetDescriptor()->FindFieldByName("engine");
    CHECK(engine != nullptr) << row.param << " has no engine field";
    return message.GetReflection()->GetEnum(message, engine)->name();
  }
  return "DEFAULT";
}

CpuEngine ChooseCpuEngine(const LayerParameter& param, const std::string& layer_engine) {
  if (layer_engine == "CAFFE" || layer_engine == "CUDNN") return CpuEngine::kCaffe;
  if (layer_engine == "MKLDNN" || layer_engine == "MKL2017") {
    return DnnlIfBuilt(param, layer_engine);
  }
  const std::string named = StringEngine(param);
  if (named == "CAFFE" || named == "CUDNN") return CpuEngine::kCaffe;
  if (IsCpuEngineName(named)) return DnnlIfBuilt(param, named);
  if (!named.empty() && named != "DEFAULT") UnknownEngine(param);
  return EnvironmentCpuEngine();
}

bool UseCuDNNEngine(const LayerParameter& param, const std::string& layer_engine) {
  if (Caffe::mode() != Caffe::GPU) return false;
  std::string asked = layer_engine;
  if (asked == "DEFAULT") {
    asked = StringEngine(param);
    if (asked.empty()) asked = "DEFAULT";
  }
  if (asked == "CAFFE") return false;
  if (asked != "DEFAULT" && asked != "CUDNN" && !IsCpuEngineName(asked)) UnknownEngine(param);
  if (!CuDNNBuilt()) {
    if (asked == "CUDNN") {
      LOG(WARNING) << "layer '" << param.name() << "' asks for engine CUDNN, but this build has "
                   << "no cuDNN (install cuDNN and rebuild): using CAFFE";
    }
    return false;
  }
  return true;
}

CpuEngine EnvironmentCpuEngine() {
  const std::string environment = CpuEngineFromEnvironment();
  if (environment == "CAFFE" || !DnnlBuilt()) return CpuEngine::kCaffe;
  return environment == "DNNL" ? CpuEngine::kDnnl : CpuEngine::kDefault;
}

}  // namespace caffe
