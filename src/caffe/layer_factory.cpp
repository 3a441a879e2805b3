#include "caffe/layer_factory.hpp"

#include <algorithm>
#include <cctype>

#include "caffe/layer.hpp"
#include "caffe/util/io.hpp"

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
