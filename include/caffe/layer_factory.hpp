// The layer registry: maps a prototxt `type:` string to a function creating that layer. Each layer's
// .cpp registers itself with REGISTER_LAYER_CLASS(Type) (a class TypeLayer) or, where an engine is
// chosen at creation, REGISTER_LAYER_CREATOR(Type, GetTypeLayer).
#ifndef CAFFE_LAYER_FACTORY_HPP_
#define CAFFE_LAYER_FACTORY_HPP_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

template <typename Dtype>
class Layer;

template <typename Dtype>
class LayerRegistry {
 public:
  using Creator = std::function<shared_ptr<Layer<Dtype>>(const LayerParameter&)>;
  using CreatorRegistry = std::map<string, Creator>;

  static CreatorRegistry& Registry();
  /// Registers a creator; registering a type twice is a programming error.
  static void AddCreator(const string& type, Creator creator);
  /// Creates the layer `param.type()`; throws caffe::Error naming the type and the layer,
  /// suggesting the closest known type and listing them all, when the type is not registered.
  static shared_ptr<Layer<Dtype>> CreateLayer(const LayerParameter& param);
  /// All registered type names, sorted.
  static vector<string> LayerTypeList();
  static string LayerTypeListString();
  /// The registered type nearest to `type` (ignoring case), or "" if none is close.
  static string ClosestLayerType(const string& type);

 private:
  LayerRegistry() = delete;
};

template <typename Dtype>
class LayerRegisterer {
 public:
  LayerRegisterer(const string& type, typename LayerRegistry<Dtype>::Creator creator) {
    LayerRegistry<Dtype>::AddCreator(type, std::move(creator));
  }
};

}  // namespace caffe

#define REGISTER_LAYER_CREATOR(type, creator)                                               \
  static ::caffe::LayerRegisterer<float> g_creator_f_##type(#type, creator<float>);         \
  static ::caffe::LayerRegisterer<double> g_creator_d_##type(#type, creator<double>)

#define REGISTER_LAYER_CLASS(type)                                                   \
  template <typename Dtype>                                                          \
  ::caffe::shared_ptr<::caffe::Layer<Dtype>> Creator_##type##Layer(                  \
      const ::caffe::LayerParameter& param) {                                        \
    return ::caffe::shared_ptr<::caffe::Layer<Dtype>>(new type##Layer<Dtype>(param)); \
  }                                                                                  \
  REGISTER_LAYER_CREATOR(type, Creator_##type##Layer)

#endif  // CAFFE_LAYER_FACTORY_HPP_
