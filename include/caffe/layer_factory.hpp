// The layer registry: maps a prototxt `type:` string to a function creating that layer. Each
// layer's .cpp registers itself with REGISTER_LAYER_CLASS(Type) (a class TypeLayer) or
// REGISTER_LAYER_CREATOR(Type, function). An engine of a type (layers/cudnn/, layers/dnnl/)
// registers itself with REGISTER_LAYER_ENGINE; CreateLayer then asks layer_engine.hpp which engine
// the layer gets and makes that one where it takes the layer's parameters.
#ifndef CAFFE_LAYER_FACTORY_HPP_
#define CAFFE_LAYER_FACTORY_HPP_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/layer_engine.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

template <typename Dtype>
class Layer;

template <typename Dtype>
class LayerRegistry {
 public:
  using Creator = std::function<shared_ptr<Layer<Dtype>>(const LayerParameter&)>;
  using CreatorRegistry = std::map<string, Creator>;
  /// An engine of a type: the parameters it takes, and its creator, told whether the engine was
  /// chosen by default (rather than asked for by name).
  struct Engine {
    std::function<bool(const LayerParameter&)> takes;
    std::function<shared_ptr<Layer<Dtype>>(const LayerParameter&, bool by_default)> create;
  };

  static CreatorRegistry& Registry();
  /// Registers a creator; registering a type twice is a programming error.
  static void AddCreator(const string& type, Creator creator);
  /// Registers `engine` for `type` (a type in EngineInventory() that has it).
  static void AddEngine(const string& type, LayerEngine which, Engine engine);
  /// The engines registered for `type`.
  static std::map<LayerEngine, Engine> EnginesOf(const string& type);
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

template <typename Dtype>
class LayerEngineRegisterer {
 public:
  LayerEngineRegisterer(const string& type, LayerEngine which,
                        typename LayerRegistry<Dtype>::Engine engine) {
    LayerRegistry<Dtype>::AddEngine(type, which, std::move(engine));
  }
};

}  // namespace caffe

#define REGISTER_LAYER_CREATOR(type, creator)                                       \
  static ::caffe::LayerRegisterer<float> g_creator_f_##type(#type, creator<float>); \
  static ::caffe::LayerRegisterer<double> g_creator_d_##type(#type, creator<double>)

#define REGISTER_LAYER_CLASS(type)                                                    \
  template <typename Dtype>                                                           \
  ::caffe::shared_ptr<::caffe::Layer<Dtype>> Creator_##type##Layer(                   \
      const ::caffe::LayerParameter& param) {                                         \
    return ::caffe::shared_ptr<::caffe::Layer<Dtype>>(new type##Layer<Dtype>(param)); \
  }                                                                                   \
  REGISTER_LAYER_CREATOR(type, Creator_##type##Layer)

/// Registers class_name<float> and <double> as engine `which` (kCuDNN, kDnnl) of `type`, for the
/// parameters `takes` (a function of the LayerParameter) accepts.
#define REGISTER_LAYER_ENGINE(type, which, class_name, takes)                          \
  template <typename Dtype>                                                            \
  ::caffe::shared_ptr<::caffe::Layer<Dtype>> EngineCreator_##class_name(               \
      const ::caffe::LayerParameter& param, bool) {                                    \
    return ::caffe::shared_ptr<::caffe::Layer<Dtype>>(new class_name<Dtype>(param));   \
  }                                                                                    \
  static ::caffe::LayerEngineRegisterer<float> g_engine_f_##class_name(                \
      #type, ::caffe::LayerEngine::which, {takes, EngineCreator_##class_name<float>}); \
  static ::caffe::LayerEngineRegisterer<double> g_engine_d_##class_name(               \
      #type, ::caffe::LayerEngine::which, {takes, EngineCreator_##class_name<double>})

#endif  // CAFFE_LAYER_FACTORY_HPP_
