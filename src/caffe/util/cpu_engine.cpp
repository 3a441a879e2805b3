#include "caffe/util/cpu_engine.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <glog/logging.h>

#include "caffe/util/error.hpp"

namespace caffe {

bool DnnlBuilt() {
#ifdef USE_DNNL
  return true;
#else
  return false;
#endif
}

namespace {

std::string Upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

// oneDNN where built; a request for it elsewhere runs Caffe's engine and says so once per layer.
CpuEngine DnnlIfBuilt(const LayerParameter& param, const std::string& asked) {
  if (DnnlBuilt()) return CpuEngine::kDnnl;
  LOG(WARNING) << "layer '" << param.name() << "' asks for engine " << asked
               << ", but this build has no oneDNN (install libdnnl-dev and rebuild): using CAFFE";
  return CpuEngine::kCaffe;
}

}  // namespace

CpuEngine ChooseCpuEngine(const LayerParameter& param, const std::string& layer_engine) {
  if (layer_engine == "CAFFE" || layer_engine == "CUDNN") return CpuEngine::kCaffe;
  if (layer_engine == "MKLDNN" || layer_engine == "MKL2017") {
    return DnnlIfBuilt(param, layer_engine);
  }
  // Intel Caffe writes e.g. "MKLDNN" or "MKLDNN:DLCP"; what follows a colon is its own business.
  const std::string named = Upper(param.engine().substr(0, param.engine().find(':')));
  if (named == "CAFFE" || named == "CUDNN") return CpuEngine::kCaffe;
  if (named == "MKLDNN" || named == "MKL2017" || named == "DNNL" || named == "ONEDNN") {
    return DnnlIfBuilt(param, named);
  }
  if (!named.empty() && named != "DEFAULT") {
    CAFFE_THROW() << "layer '" << param.name() << "': unknown engine \"" << param.engine()
                  << "\"; expected one of CAFFE, CUDNN, MKLDNN, MKL2017, DNNL";
  }
  return EnvironmentCpuEngine();
}

CpuEngine EnvironmentCpuEngine() {
  const char* forced = std::getenv("CAFFE_CPU_ENGINE");
  const std::string environment = forced ? Upper(forced) : "";
  if (environment == "CAFFE" || !DnnlBuilt()) return CpuEngine::kCaffe;
  return environment == "DNNL" ? CpuEngine::kDnnl : CpuEngine::kDefault;
}

}  // namespace caffe
