// Which engine runs a layer: Caffe's own code, cuDNN (GPU mode) or DNNL (CPU mode; Intel's oneDNN
// library, Debian's libdnnl). The one place that decides, for every layer type that has engines.
// A layer's <layer>_param.engine decides when set; otherwise LayerParameter.engine, the string
// Intel Caffe's prototxts carry ("MKLDNN", "CAFFE"); otherwise the default: cuDNN in GPU mode
// where the build has it; in CPU mode DNNL where the build has it and the layer's shape is one it
// runs faster (the layer decides at setup), unless CAFFE_CPU_ENGINE is "caffe" (or "dnnl": DNNL
// for every shape). The proto's engine value MKLDNN is Intel Caffe's name for DNNL, kept so that
// its prototxts load unchanged.
//
// The engines themselves live in layers/cudnn/ and layers/dnnl/, each registered for its type
// (layer_factory.hpp: REGISTER_LAYER_ENGINE) with the parameters it takes; a base layer never
// includes its engines.
#ifndef CAFFE_LAYER_ENGINE_HPP_
#define CAFFE_LAYER_ENGINE_HPP_

#include <string>
#include <vector>

#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// The engines beside Caffe's own.
enum class LayerEngine { kCuDNN, kDnnl };

/// kDefault: DNNL where built, for the shapes where it is faster; Caffe's engine otherwise.
enum class CpuEngine { kCaffe, kDnnl, kDefault };

/// True where this build links DNNL / cuDNN.
bool DnnlBuilt();
bool CuDNNBuilt();

/// The layer types that have engines beside Caffe's, with the parameter message that holds each
/// one's `engine` field and the engines it has (in builds with the libraries).
struct EngineInventoryRow {
  const char* type;
  const char* param;
  bool cudnn;
  bool dnnl;
};
const std::vector<EngineInventoryRow>& EngineInventory();

/// The name of the layer's own engine value ("DEFAULT", "CAFFE", "CUDNN", "MKLDNN", ...), read
/// from the parameter message its type's inventory row names; "DEFAULT" for other types.
std::string LayerEngineName(const LayerParameter& param);

/// The CPU engine for a layer. `layer_engine` is the name of its own engine value. An engine name
/// nobody knows is an error naming the layer; a DNNL request in a build without it falls back to
/// Caffe's engine with a warning.
CpuEngine ChooseCpuEngine(const LayerParameter& param, const std::string& layer_engine);

/// Whether the layer `param` describes, created now, runs on cuDNN. Only in GPU mode (a net made
/// in CPU mode never gets a cuDNN layer). DEFAULT and CUDNN: cuDNN where this build has it; an
/// explicit CUDNN without it runs Caffe's engine with a warning. CAFFE: Caffe's GPU kernels. The
/// CPU engines' names say nothing about GPUs: they get the GPU default. An unknown name is an
/// error naming the layer.
bool UseCuDNNEngine(const LayerParameter& param, const std::string& layer_engine);

/// What CAFFE_CPU_ENGINE asks for every layer: kCaffe for "caffe" (and always in a build without
/// DNNL), kDnnl for "dnnl", kDefault otherwise.
CpuEngine EnvironmentCpuEngine();

}  // namespace caffe

#endif  // CAFFE_LAYER_ENGINE_HPP_
