// Which arithmetic each layer of a float net runs in (docs/PRECISION.md). A prototxt asks with
// NVCaffe's fields, net-wide (default_forward_type, default_backward_type, and *_math) or per
// layer (forward_type, backward_type, forward_math, backward_math), or `caffe -precision` asks
// for every net the process builds. A layer computes in bf16 where it was asked to, it
// HasBf16Math (the layers whose time is matrix products) and the machine does bf16 in hardware;
// everything else, losses and normalisation statistics included, computes in fp32, and a net
// that asked for 16 bits says which layers got them and why the others did not, in one line.
// Values between layers are stored in fp32.
#ifndef CAFFE_NET_LAYER_PRECISION_HPP_
#define CAFFE_NET_LAYER_PRECISION_HPP_

#include <string>
#include <vector>

#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// `caffe -precision fp32|bf16|fp16`: the default_forward_type and default_backward_type of every
/// net built after it in this process, in place of the prototxts' own (a layer's own fields still
/// win). "" clears it. Throws naming the flag for any other value.
void SetPrecisionFlag(const std::string& value);
/// "fp32", "bf16", "fp16", "fp64", "int", "uint".
const char* TypeShortName(Type type);

struct LayerMath {
  Type forward = FLOAT;
  Type backward = FLOAT;
};

/// What `layer` of `net` asks for, per direction: its own *_math, else its own *_type, else the
/// net's default_*_math where set, else -precision, else the net's default_*_type. Throws naming
/// the layer and field where that is a storage-only type (INT, UINT).
LayerMath RequestedMath(const NetParameter& net, const LayerParameter& layer);

/// The choices for one float net, made layer by layer as the net creates them.
class PrecisionPlan {
 public:
  /// `on_gpu`: the net runs in GPU mode (where 16-bit arithmetic is not built yet).
  PrecisionPlan(const NetParameter& net, bool on_gpu);
  /// The arithmetic `layer` gets: bf16 (per direction) where asked for, `has_bf16_math` and the
  /// machine can; FLOAT otherwise.
  LayerMath Choose(const LayerParameter& layer, bool has_bf16_math);
  /// Where any layer asked for 16 bits: one line saying which layers compute in bf16 and which
  /// do not; a warning where the machine or mode, not the layer, is why.
  void Log() const;

 private:
  const NetParameter& net_;
  bool on_gpu_;
  std::vector<std::string> bf16_layers_;      // computing in bf16 in some direction
  std::vector<std::string> fp32_by_choice_;   // asked, but the layer has no 16-bit arithmetic
  std::vector<std::string> fp32_by_machine_;  // asked, able, but the machine or mode cannot
  std::string machine_reason_;
};

}  // namespace caffe

#endif  // CAFFE_NET_LAYER_PRECISION_HPP_
