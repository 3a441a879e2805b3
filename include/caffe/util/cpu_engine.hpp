// Which CPU engine runs a layer that has more than one: Caffe's own (im2col + GEMM and plain
// loops) or oneDNN (libdnnl: direct convolution kernels in blocked layouts, AVX-512 where the CPU
// has it). A layer's <layer>_param.engine decides when set; otherwise LayerParameter.engine, the
// string Intel Caffe's prototxts carry ("MKLDNN", "CAFFE"); otherwise the default: oneDNN where this
// build has it and the layer's shape is one it runs faster (the layer decides at setup), unless the
// environment variable CAFFE_CPU_ENGINE is "caffe" (or "dnnl": oneDNN for every shape).
#ifndef CAFFE_UTIL_CPU_ENGINE_HPP_
#define CAFFE_UTIL_CPU_ENGINE_HPP_

#include <string>

#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// kDefault: oneDNN where built, for the shapes where it is faster; Caffe's engine otherwise.
enum class CpuEngine { kCaffe, kDnnl, kDefault };

/// True where this build links oneDNN.
bool DnnlBuilt();

/// The engine for a layer. `layer_engine` is the name of its own engine enum value ("DEFAULT",
/// "CAFFE", "CUDNN", "MKLDNN", ...). An engine name nobody knows is an error naming the layer; an
/// oneDNN request in a build without it falls back to Caffe's engine with a warning.
CpuEngine ChooseCpuEngine(const LayerParameter& param, const std::string& layer_engine);

/// What CAFFE_CPU_ENGINE asks for every layer: kCaffe for "caffe" (and always in a build without
/// oneDNN), kDnnl for "dnnl", kDefault otherwise. The array functions of util/vector_math.hpp
/// follow it too.
CpuEngine EnvironmentCpuEngine();

}  // namespace caffe

#endif  // CAFFE_UTIL_CPU_ENGINE_HPP_
