#include "caffe/net/layer_precision.hpp"

#include <glog/logging.h>

#include <mutex>
#include <optional>
#include <sstream>

#include "caffe/common.hpp"
#include "caffe/kernels/bf16_gemm.hpp"

namespace caffe {

namespace {

std::mutex flag_mutex;
std::optional<Type> precision_flag;

std::optional<Type> PrecisionFlag() {
  std::lock_guard<std::mutex> lock(flag_mutex);
  return precision_flag;
}

Type Checked(Type type, const LayerParameter& layer, const char* field) {
  CAFFE_CHECK(type != INT && type != UINT)
      << "layer '" << layer.name() << "' (" << layer.type() << "): " << field << " is "
      << Type_Name(type) << ", a storage type; expected FLOAT, BFLOAT16 or FLOAT16";
  return type;
}

bool Is16Bit(Type type) { return type == FLOAT16 || type == BFLOAT16; }

// Names, comma-separated, the first few and how many more.
std::string List(const std::vector<std::string>& names) {
  constexpr size_t kShown = 8;
  std::ostringstream text;
  for (size_t i = 0; i < names.size() && i < kShown; ++i) text << (i ? ", " : "") << names[i];
  if (names.size() > kShown) text << " and " << names.size() - kShown << " more";
  return text.str();
}

}  // namespace

void SetPrecisionFlag(const std::string& value) {
  std::optional<Type> type;
  if (value == "fp32") {
    type = FLOAT;
  } else if (value == "bf16") {
    type = BFLOAT16;
  } else if (value == "fp16") {
    type = FLOAT16;
  } else {
    CAFFE_CHECK(value.empty()) << "-precision is \"" << value << "\"; expected fp32, bf16 or fp16";
  }
  std::lock_guard<std::mutex> lock(flag_mutex);
  precision_flag = type;
}

const char* TypeShortName(Type type) {
  switch (type) {
    case DOUBLE:
      return "fp64";
    case FLOAT:
      return "fp32";
    case FLOAT16:
      return "fp16";
    case BFLOAT16:
      return "bf16";
    case INT:
      return "int";
    case UINT:
      return "uint";
  }
  return "?";
}

namespace {

// One direction's fields, in the order they win (RequestedMath); `direction` names them.
struct Fields {
  bool layer_has_math, layer_has_type, net_has_math;
  Type layer_math, layer_type, net_math, net_type;
};

Type Requested(const Fields& f, const LayerParameter& layer, const std::string& direction,
               const std::optional<Type>& flag) {
  if (f.layer_has_math) return Checked(f.layer_math, layer, (direction + "_math").c_str());
  if (f.layer_has_type) return Checked(f.layer_type, layer, (direction + "_type").c_str());
  if (f.net_has_math) {
    return Checked(f.net_math, layer, ("the net's default_" + direction + "_math").c_str());
  }
  return Checked(flag ? *flag : f.net_type, layer,
                 ("the net's default_" + direction + "_type").c_str());
}

}  // namespace

LayerMath RequestedMath(const NetParameter& net, const LayerParameter& layer) {
  const std::optional<Type> flag = PrecisionFlag();
  LayerMath math;
  math.forward =
      Requested({layer.has_forward_math(), layer.has_forward_type(), net.has_default_forward_math(),
                 layer.forward_math(), layer.forward_type(), net.default_forward_math(),
                 net.default_forward_type()},
                layer, "forward", flag);
  math.backward =
      Requested({layer.has_backward_math(), layer.has_backward_type(),
                 net.has_default_backward_math(), layer.backward_math(), layer.backward_type(),
                 net.default_backward_math(), net.default_backward_type()},
                layer, "backward", flag);
  return math;
}

PrecisionPlan::PrecisionPlan(const NetParameter& net, bool on_gpu) : net_(net), on_gpu_(on_gpu) {}

LayerMath PrecisionPlan::Choose(const LayerParameter& layer, bool has_bf16_math) {
  const LayerMath asked = RequestedMath(net_, layer);
  if (!Is16Bit(asked.forward) && !Is16Bit(asked.backward)) return LayerMath();
  if (!has_bf16_math) {
    fp32_by_choice_.push_back(layer.name());
    return LayerMath();
  }
  // Why a 16-bit request cannot be met on this machine, or "".
  auto obstacle = [&](Type type) -> std::string {
    if (!Is16Bit(type)) return "";
    if (on_gpu_) return "16-bit arithmetic on the GPU is not built yet";
    if (type == FLOAT16) return "the CPU engines have no fp16 arithmetic";
    if (!CpuHasBf16Math()) return CpuBf16Explanation();
    return "";
  };
  const std::string forward_obstacle = obstacle(asked.forward);
  const std::string backward_obstacle = obstacle(asked.backward);
  LayerMath chosen;
  chosen.forward = Is16Bit(asked.forward) && forward_obstacle.empty() ? BFLOAT16 : FLOAT;
  chosen.backward = Is16Bit(asked.backward) && backward_obstacle.empty() ? BFLOAT16 : FLOAT;
  if (!forward_obstacle.empty() || !backward_obstacle.empty()) {
    fp32_by_machine_.push_back(layer.name());
    if (machine_reason_.empty()) {
      machine_reason_ = forward_obstacle.empty() ? backward_obstacle : forward_obstacle;
    }
  }
  if (chosen.forward == BFLOAT16 || chosen.backward == BFLOAT16) {
    bf16_layers_.push_back(layer.name());
  }
  return chosen;
}

void PrecisionPlan::Log() const {
  if (bf16_layers_.empty() && fp32_by_choice_.empty() && fp32_by_machine_.empty()) return;
  if (!Caffe::root_solver()) return;
  if (!fp32_by_machine_.empty()) {
    LOG(WARNING) << "Net '" << net_.name() << "': 16-bit arithmetic asked for, but "
                 << machine_reason_ << "; " << fp32_by_machine_.size()
                 << " layers that have it compute in fp32 (" << List(fp32_by_machine_) << ")";
  }
  std::ostringstream line;
  line << "Net '" << net_.name() << "': ";
  if (bf16_layers_.empty()) {
    line << "no layer computes in bf16";
  } else {
    line << "bf16 arithmetic in " << bf16_layers_.size() << " layers (" << List(bf16_layers_)
         << ")";
  }
  if (!fp32_by_choice_.empty()) {
    line << "; the other " << fp32_by_choice_.size()
         << " compute in fp32 (their types have no 16-bit arithmetic; losses, softmax and "
            "normalisation statistics never do)";
  }
  line << "; values are stored in fp32 between layers";
  LOG(INFO) << line.str();
}

}  // namespace caffe
