#include "caffe/net/layer_param_check.hpp"

#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "caffe/common.hpp"

namespace caffe {

const std::vector<std::string>* LayerParamsReadBy(const std::string& type) {
  // transform_param: data layers; loss_param: loss layers; the rest: the type's own message.
  static const std::map<std::string, std::vector<std::string>> kParams = {
      {"AbsVal", {}},
      {"Accuracy", {"accuracy_param"}},
      {"ArgMax", {"argmax_param"}},
      {"BatchNorm", {"batch_norm_param"}},
      {"BatchReindex", {}},
      {"Bias", {"bias_param"}},
      {"BNLL", {}},
      {"Clip", {"clip_param"}},
      {"Concat", {"concat_param"}},
      {"ContrastiveLoss", {"contrastive_loss_param", "loss_param"}},
      {"Convolution", {"convolution_param"}},
      {"Crop", {"crop_param"}},
      {"Data", {"data_param", "transform_param"}},
      {"Deconvolution", {"convolution_param"}},
      {"Dropout", {"dropout_param"}},
      {"DummyData", {"dummy_data_param"}},
      {"Eltwise", {"eltwise_param"}},
      {"ELU", {"elu_param"}},
      {"Embed", {"embed_param"}},
      {"EuclideanLoss", {"loss_param"}},
      {"Exp", {"exp_param"}},
      {"Filter", {}},
      {"Flatten", {"flatten_param"}},
      {"HDF5Data", {"hdf5_data_param"}},
      {"HDF5Output", {"hdf5_output_param"}},
      {"HingeLoss", {"hinge_loss_param", "loss_param"}},
      {"Im2col", {"convolution_param"}},
      {"ImageData", {"image_data_param", "transform_param"}},
      {"InfogainLoss", {"infogain_loss_param", "loss_param", "softmax_param"}},
      {"InnerProduct", {"inner_product_param"}},
      {"Input", {"input_param"}},
      {"Log", {"log_param"}},
      {"LRN", {"lrn_param"}},
      {"LSTM", {"recurrent_param"}},
      {"LSTMUnit", {}},
      {"MemoryData", {"memory_data_param", "transform_param"}},
      {"MultinomialLogisticLoss", {"loss_param"}},
      {"MVN", {"mvn_param"}},
      {"Parameter", {"parameter_param"}},
      {"Pooling", {"pooling_param"}},
      {"Power", {"power_param"}},
      {"PReLU", {"prelu_param"}},
      {"Python", {"python_param"}},
      {"Reduction", {"reduction_param"}},
      {"ReLU", {"relu_param"}},
      {"Reshape", {"reshape_param"}},
      {"RNN", {"recurrent_param"}},
      {"Scale", {"scale_param"}},
      {"Sigmoid", {"sigmoid_param"}},
      {"SigmoidCrossEntropyLoss", {"loss_param"}},
      {"Silence", {}},
      {"Slice", {"slice_param"}},
      {"Softmax", {"softmax_param"}},
      {"SoftmaxWithLoss", {"softmax_param", "loss_param"}},
      {"Split", {}},
      {"SPP", {"spp_param"}},
      {"Swish", {"swish_param"}},
      {"TanH", {"tanh_param"}},
      {"Threshold", {"threshold_param"}},
      {"Tile", {"tile_param"}},
      {"WindowData", {"window_data_param", "transform_param"}},
  };
  auto found = kParams.find(type);
  return found == kParams.end() ? nullptr : &found->second;
}

std::string StrayLayerParams(const LayerParameter& param) {
  const std::vector<std::string>* allowed = LayerParamsReadBy(param.type());
  if (allowed == nullptr) return "";
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  param.GetReflection()->ListFields(param, &fields);
  for (const auto* field : fields) {
    const std::string& name = field->name();
    const bool is_layer_param = field->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE &&
                                name.size() > 6 && name.compare(name.size() - 6, 6, "_param") == 0;
    if (!is_layer_param) continue;
    if (std::find(allowed->begin(), allowed->end(), name) != allowed->end()) continue;
    std::ostringstream reads;
    for (size_t i = 0; i < allowed->size(); ++i) reads << (i ? ", " : "") << (*allowed)[i];
    std::ostringstream message;
    message << param.type() << " layer '" << param.name() << "': " << name
            << " does not apply to a " << param.type() << " layer ("
            << (allowed->empty() ? "it takes no parameters" : "it reads " + reads.str())
            << ") and is ignored; remove it or fix the layer type";
    return message.str();
  }
  return "";
}

}  // namespace caffe
