#include "caffe/layer_factory.hpp"

#include <sstream>

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

template <typename Dtype>
shared_ptr<Layer<Dtype>> LayerRegistry<Dtype>::CreateLayer(const LayerParameter& param) {
  if (Caffe::root_solver()) LOG(INFO) << "Creating layer " << param.name();
  const string& type = param.type();
  CreatorRegistry& registry = Registry();
  auto creator = registry.find(type);
  CAFFE_CHECK(creator != registry.end())
      << "unknown layer type \"" << type << "\" (layer '" << param.name()
      << "'); known types: " << LayerTypeListString();
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
  std::ostringstream list;
  bool first = true;
  for (const string& type : LayerTypeList()) {
    list << (first ? "" : ", ") << type;
    first = false;
  }
  return list.str();
}

template class LayerRegistry<float>;
template class LayerRegistry<double>;

}  // namespace caffe
