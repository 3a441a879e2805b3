#include "caffe/layer_factory.hpp"

#include <algorithm>
#include <cctype>

#include "caffe/io/io.hpp"
#include "caffe/layer.hpp"

namespace caffe {

template <typename Dtype>
typename LayerRegistry<Dtype>::CreatorRegistry& LayerRegistry<Dtype>::Registry() {
  static CreatorRegistry registry;
  return registry;
}

template <typename Dtype>
void LayerRegistry<Dtype>::AddCreator(const string& type, Creator creator) {
  CreatorRegistry& registry = Registry();
  CHECK_EQ(registry.count(type), 0u) << "Layer type " << type << " already registered.";
  registry[type] = std::move(creator);
}

namespace {

template <typename Dtype>
std::map<string, std::map<LayerEngine, typename LayerRegistry<Dtype>::Engine>>& EngineRegistry() {
  static std::map<string, std::map<LayerEngine, typename LayerRegistry<Dtype>::Engine>> registry;
  return registry;
}

// The inventory row of `type`, or null where the type has no engines.
const EngineInventoryRow* InventoryRow(const string& type) {
  for (const EngineInventoryRow& row : EngineInventory()) {
    if (type == row.type) return &row;
  }
  return nullptr;
}

}  // namespace

template <typename Dtype>
void LayerRegistry<Dtype>::AddEngine(const string& type, LayerEngine which, Engine engine) {
  const EngineInventoryRow* row = InventoryRow(type);
  CHECK(row != nullptr && (which == LayerEngine::kCuDNN ? row->cudnn : row->dnnl))
      << "an engine of layer type " << type << " that layer_engine.cpp's inventory lacks";
  CHECK_EQ(EngineRegistry<Dtype>()[type].count(which), 0u)
      << "an engine of layer type " << type << " registered twice";
  EngineRegistry<Dtype>()[type][which] = std::move(engine);
}

template <typename Dtype>
std::map<LayerEngine, typename LayerRegistry<Dtype>::Engine> LayerRegistry<Dtype>::EnginesOf(
    const string& type) {
  auto found = EngineRegistry<Dtype>().find(type);
  return found == EngineRegistry<Dtype>().end() ? std::map<LayerEngine, Engine>() : found->second;
}

namespace {

// Edit distance, ignoring case: how far a misspelt type is from a known one.
size_t EditDistance(const string& a, const string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

template <typename Dtype>
string LayerRegistry<Dtype>::ClosestLayerType(const string& type) {
  string best;
  size_t best_distance = string::npos;
  for (const string& known : LayerTypeList()) {
    const size_t distance = EditDistance(type, known);
    if (distance < best_distance) {
      best = known;
      best_distance = distance;
    }
  }
  // A suggestion only where it is plausibly what was meant.
  return best_distance <= std::max<size_t>(2, type.size() / 3) ? best : string();
}

template <typename Dtype>
shared_ptr<Layer<Dtype>> LayerRegistry<Dtype>::CreateLayer(const LayerParameter& param) {
  if (Caffe::root_solver()) LOG(INFO) << "Creating layer " << param.name();
  const string& type = param.type();
  CreatorRegistry& registry = Registry();
  auto creator = registry.find(type);
  if (creator == registry.end()) {
    const string closest = ClosestLayerType(type);
    CAFFE_THROW() << "unknown layer type \"" << type << "\" (layer '" << param.name() << "')"
                  << (closest.empty() ? "" : "; did you mean \"" + closest + "\"?")
                  << "; known types: " << LayerTypeListString();
  }
  // The engine the layer gets, where its type has engines and the one chosen takes the layer.
  if (const EngineInventoryRow* row = InventoryRow(type)) {
    const string layer_engine = LayerEngineName(param);
    const std::map<LayerEngine, Engine> engines = EnginesOf(type);
    if (Caffe::mode() == Caffe::GPU) {
      if (row->cudnn && UseCuDNNEngine(param, layer_engine)) {
        auto cudnn = engines.find(LayerEngine::kCuDNN);
        if (cudnn != engines.end() && cudnn->second.takes(param)) {
          return cudnn->second.create(param, false);
        }
      }
    } else if (row->dnnl) {
      const CpuEngine engine = ChooseCpuEngine(param, layer_engine);
      auto dnnl = engines.find(LayerEngine::kDnnl);
      if (engine != CpuEngine::kCaffe && dnnl != engines.end() && dnnl->second.takes(param)) {
        return dnnl->second.create(param, engine == CpuEngine::kDefault);
      }
    }
  }
  return creator->second(param);
}

template <typename Dtype>
vector<string> LayerRegistry<Dtype>::LayerTypeList() {
  vector<string> types;
  for (const auto& entry : Registry()) types.push_back(entry.first);
  return types;
}

template <typename Dtype>
string LayerRegistry<Dtype>::LayerTypeListString() {
  return Join(LayerTypeList(), ", ");
}

template class LayerRegistry<float>;
template class LayerRegistry<double>;

}  // namespace caffe
