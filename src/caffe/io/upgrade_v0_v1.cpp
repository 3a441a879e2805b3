// Upgrades of the two oldest net formats, as BVLC's upgrade_proto did them:
//   V0 (2013): `layers { layer { name type ... } bottom top }` with string types and one flat
//       V0LayerParameter; separate "padding" layers in front of conv/pool layers.
//   V1 (2014): `layers { type: CONVOLUTION ... }` with enum types, blobs_lr and weight_decay.
// V0 -> V1 folds padding layers into the next layer's pad and moves each flat field into the
// typed parameter message; V1 -> V2 turns enum types into strings and blobs_lr/weight_decay and
// param names into ParamSpecs. A field that has no place in the layer's type is logged and
// dropped, as BVLC does; a layer type with no V1 equivalent is an error.
#include <map>
#include <string>

#include "caffe/common.hpp"
#include "caffe/io/upgrade_proto.hpp"

namespace caffe {

namespace {

// Logs a V0 field that the layer's type cannot hold; BVLC reported and continued.
bool Incompatible(const string& field, const string& type) {
  LOG(WARNING) << "Unknown parameter " << field << " for layer type " << type << "; ignoring it";
  return false;
}

}  // namespace

void UpgradeV0PaddingLayers(const NetParameter& param, NetParameter* param_upgraded_pad) {
  param_upgraded_pad->CopyFrom(param);
  param_upgraded_pad->clear_layers();
  // The index of the layer that last produced each blob (-1: a net input).
  std::map<string, int> blob_name_to_last_top_idx;
  for (const string& input : param.input()) blob_name_to_last_top_idx[input] = -1;
  for (int i = 0; i < param.layers_size(); ++i) {
    const V1LayerParameter& layer_connection = param.layers(i);
    const V0LayerParameter& layer_param = layer_connection.layer();
    if (layer_param.type() != "padding")
      param_upgraded_pad->add_layers()->CopyFrom(layer_connection);
    for (int j = 0; j < layer_connection.bottom_size(); ++j) {
      const string& blob_name = layer_connection.bottom(j);
      auto source = blob_name_to_last_top_idx.find(blob_name);
      CAFFE_CHECK(source != blob_name_to_last_top_idx.end())
          << "V0 net: unknown bottom blob '" << blob_name << "' of layer '" << layer_param.name()
          << "'";
      if (source->second == -1) continue;
      const V1LayerParameter& source_layer = param.layers(source->second);
      if (source_layer.layer().type() != "padding") continue;
      // A padding layer feeding a conv or pool layer becomes that layer's pad.
      CAFFE_CHECK(layer_param.type() == "conv" || layer_param.type() == "pool")
          << "V0 net: padding layer '" << source_layer.layer().name() << "' feeds layer '"
          << layer_param.name() << "' of type " << layer_param.type()
          << "; only conv and pool layers can absorb padding";
      CAFFE_CHECK(layer_connection.bottom_size() == 1 && source_layer.bottom_size() == 1 &&
                  source_layer.top_size() == 1)
          << "V0 net: padding layer '" << source_layer.layer().name()
          << "' and the layer it feeds must each have a single input and output";
      V1LayerParameter* upgraded =
          param_upgraded_pad->mutable_layers(param_upgraded_pad->layers_size() - 1);
      upgraded->mutable_layer()->set_pad(source_layer.layer().pad());
      upgraded->set_bottom(j, source_layer.bottom(0));
    }
    for (const string& top : layer_connection.top()) blob_name_to_last_top_idx[top] = i;
  }
}

V1LayerParameter_LayerType UpgradeV0LayerType(const string& type) {
  static const std::map<string, V1LayerParameter_LayerType> kTypes = {
      {"accuracy", V1LayerParameter_LayerType_ACCURACY},
      {"bnll", V1LayerParameter_LayerType_BNLL},
      {"concat", V1LayerParameter_LayerType_CONCAT},
      {"conv", V1LayerParameter_LayerType_CONVOLUTION},
      {"data", V1LayerParameter_LayerType_DATA},
      {"dropout", V1LayerParameter_LayerType_DROPOUT},
      {"euclidean_loss", V1LayerParameter_LayerType_EUCLIDEAN_LOSS},
      {"flatten", V1LayerParameter_LayerType_FLATTEN},
      {"hdf5_data", V1LayerParameter_LayerType_HDF5_DATA},
      {"hdf5_output", V1LayerParameter_LayerType_HDF5_OUTPUT},
      {"im2col", V1LayerParameter_LayerType_IM2COL},
      {"images", V1LayerParameter_LayerType_IMAGE_DATA},
      {"infogain_loss", V1LayerParameter_LayerType_INFOGAIN_LOSS},
      {"innerproduct", V1LayerParameter_LayerType_INNER_PRODUCT},
      {"lrn", V1LayerParameter_LayerType_LRN},
      {"multinomial_logistic_loss", V1LayerParameter_LayerType_MULTINOMIAL_LOGISTIC_LOSS},
      {"pool", V1LayerParameter_LayerType_POOLING},
      {"relu", V1LayerParameter_LayerType_RELU},
      {"sigmoid", V1LayerParameter_LayerType_SIGMOID},
      {"softmax", V1LayerParameter_LayerType_SOFTMAX},
      {"softmax_loss", V1LayerParameter_LayerType_SOFTMAX_LOSS},
      {"split", V1LayerParameter_LayerType_SPLIT},
      {"tanh", V1LayerParameter_LayerType_TANH},
      {"window_data", V1LayerParameter_LayerType_WINDOW_DATA},
  };
  auto found = kTypes.find(type);
  CAFFE_CHECK(found != kTypes.end()) << "V0 net: unknown layer type \"" << type << "\"";
  return found->second;
}

namespace {

// What a V0 layer is, for the fields whose V1 home depends on it.
struct V0Kind {
  bool conv, pool, ip, data, hdf5, images, window;
  explicit V0Kind(const string& type)
      : conv(type == "conv"),
        pool(type == "pool"),
        ip(type == "innerproduct"),
        data(type == "data"),
        hdf5(type == "hdf5_data"),
        images(type == "images"),
        window(type == "window_data") {}
};

// The learned blobs' shapes and fillers (convolution and inner product).
bool UpgradeV0LearnedParams(const V0LayerParameter& v0, const V0Kind& kind,
                            V1LayerParameter* layer_param) {
  const string& type = v0.type();
  bool is_fully_compatible = true;
  if (v0.has_num_output()) {
    if (kind.conv) {
      layer_param->mutable_convolution_param()->set_num_output(v0.num_output());
    } else if (kind.ip) {
      layer_param->mutable_inner_product_param()->set_num_output(v0.num_output());
    } else {
      is_fully_compatible &= Incompatible("num_output", type);
    }
  }
  if (v0.has_biasterm()) {
    if (kind.conv) {
      layer_param->mutable_convolution_param()->set_bias_term(v0.biasterm());
    } else if (kind.ip) {
      layer_param->mutable_inner_product_param()->set_bias_term(v0.biasterm());
    } else {
      is_fully_compatible &= Incompatible("biasterm", type);
    }
  }
  if (v0.has_weight_filler()) {
    if (kind.conv) {
      layer_param->mutable_convolution_param()->mutable_weight_filler()->CopyFrom(
          v0.weight_filler());
    } else if (kind.ip) {
      layer_param->mutable_inner_product_param()->mutable_weight_filler()->CopyFrom(
          v0.weight_filler());
    } else {
      is_fully_compatible &= Incompatible("weight_filler", type);
    }
  }
  if (v0.has_bias_filler()) {
    if (kind.conv) {
      layer_param->mutable_convolution_param()->mutable_bias_filler()->CopyFrom(v0.bias_filler());
    } else if (kind.ip) {
      layer_param->mutable_inner_product_param()->mutable_bias_filler()->CopyFrom(v0.bias_filler());
    } else {
      is_fully_compatible &= Incompatible("bias_filler", type);
    }
  }
  return is_fully_compatible;
}

// The windows of convolution and pooling, and the pooling method.
bool UpgradeV0WindowParams(const V0LayerParameter& v0, const V0Kind& kind,
                           V1LayerParameter* layer_param) {
  const string& type = v0.type();
  bool is_fully_compatible = true;
  if (v0.has_pad()) {
    if (kind.conv) {
      layer_param->mutable_convolution_param()->add_pad(v0.pad());
    } else if (kind.pool) {
      layer_param->mutable_pooling_param()->set_pad(v0.pad());
    } else {
      is_fully_compatible &= Incompatible("pad", type);
    }
  }
  if (v0.has_kernelsize()) {
    if (kind.conv) {
      layer_param->mutable_convolution_param()->add_kernel_size(v0.kernelsize());
    } else if (kind.pool) {
      layer_param->mutable_pooling_param()->set_kernel_size(v0.kernelsize());
    } else {
      is_fully_compatible &= Incompatible("kernelsize", type);
    }
  }
  if (v0.has_group()) {
    if (kind.conv) {
      layer_param->mutable_convolution_param()->set_group(v0.group());
    } else {
      is_fully_compatible &= Incompatible("group", type);
    }
  }
  if (v0.has_stride()) {
    if (kind.conv) {
      layer_param->mutable_convolution_param()->add_stride(v0.stride());
    } else if (kind.pool) {
      layer_param->mutable_pooling_param()->set_stride(v0.stride());
    } else {
      is_fully_compatible &= Incompatible("stride", type);
    }
  }
  if (v0.has_pool()) {
    if (kind.pool) {
      // The V0 and current enums have the same values: MAX 0, AVE 1, STOCHASTIC 2.
      layer_param->mutable_pooling_param()->set_pool(
          static_cast<PoolingParameter_PoolMethod>(v0.pool()));
    } else {
      is_fully_compatible &= Incompatible("pool", type);
    }
  }
  return is_fully_compatible;
}

// Dropout, LRN, Concat and HDF5 output.
bool UpgradeV0NeuronParams(const V0LayerParameter& v0, const V0Kind& kind,
                           V1LayerParameter* layer_param) {
  const string& type = v0.type();
  bool is_fully_compatible = true;
  if (v0.has_dropout_ratio()) {
    if (type == "dropout") {
      layer_param->mutable_dropout_param()->set_dropout_ratio(v0.dropout_ratio());
    } else {
      is_fully_compatible &= Incompatible("dropout_ratio", type);
    }
  }
  if (v0.has_local_size() || v0.has_alpha() || v0.has_beta() || v0.has_k()) {
    if (type == "lrn") {
      LRNParameter* lrn = layer_param->mutable_lrn_param();
      if (v0.has_local_size()) lrn->set_local_size(v0.local_size());
      if (v0.has_alpha()) lrn->set_alpha(v0.alpha());
      if (v0.has_beta()) lrn->set_beta(v0.beta());
      if (v0.has_k()) lrn->set_k(v0.k());
    } else {
      is_fully_compatible &= Incompatible("local_size/alpha/beta/k", type);
    }
  }
  if (v0.has_concat_dim()) {
    if (type == "concat") {
      layer_param->mutable_concat_param()->set_concat_dim(v0.concat_dim());
    } else {
      is_fully_compatible &= Incompatible("concat_dim", type);
    }
  }
  if (v0.has_hdf5_output_param()) {
    if (type == "hdf5_output") {
      layer_param->mutable_hdf5_output_param()->CopyFrom(v0.hdf5_output_param());
    } else {
      is_fully_compatible &= Incompatible("hdf5_output_param", type);
    }
  }
  return is_fully_compatible;
}

// Where data layers read from, and how they transform what they read.
bool UpgradeV0DataParams(const V0LayerParameter& v0, const V0Kind& kind,
                         V1LayerParameter* layer_param) {
  const string& type = v0.type();
  bool is_fully_compatible = true;
  if (v0.has_source()) {
    if (kind.data) {
      layer_param->mutable_data_param()->set_source(v0.source());
    } else if (kind.hdf5) {
      layer_param->mutable_hdf5_data_param()->set_source(v0.source());
    } else if (kind.images) {
      layer_param->mutable_image_data_param()->set_source(v0.source());
    } else if (kind.window) {
      layer_param->mutable_window_data_param()->set_source(v0.source());
    } else if (type == "infogain_loss") {
      layer_param->mutable_infogain_loss_param()->set_source(v0.source());
    } else {
      is_fully_compatible &= Incompatible("source", type);
    }
  }
  // The data pre-processing fields go straight to transform_param (BVLC took a detour through
  // the data layers' own deprecated fields, then moved them).
  const bool transforms = kind.data || kind.images || kind.window;
  if (v0.has_scale()) {
    if (transforms) {
      layer_param->mutable_transform_param()->set_scale(v0.scale());
    } else {
      is_fully_compatible &= Incompatible("scale", type);
    }
  }
  if (v0.has_meanfile()) {
    if (transforms) {
      layer_param->mutable_transform_param()->set_mean_file(v0.meanfile());
    } else {
      is_fully_compatible &= Incompatible("meanfile", type);
    }
  }
  if (v0.has_cropsize()) {
    if (transforms) {
      layer_param->mutable_transform_param()->set_crop_size(v0.cropsize());
    } else {
      is_fully_compatible &= Incompatible("cropsize", type);
    }
  }
  if (v0.has_mirror()) {
    if (transforms) {
      layer_param->mutable_transform_param()->set_mirror(v0.mirror());
    } else {
      is_fully_compatible &= Incompatible("mirror", type);
    }
  }
  if (v0.has_batchsize()) {
    if (kind.data) {
      layer_param->mutable_data_param()->set_batch_size(v0.batchsize());
    } else if (kind.hdf5) {
      layer_param->mutable_hdf5_data_param()->set_batch_size(v0.batchsize());
    } else if (kind.images) {
      layer_param->mutable_image_data_param()->set_batch_size(v0.batchsize());
    } else if (kind.window) {
      layer_param->mutable_window_data_param()->set_batch_size(v0.batchsize());
    } else {
      is_fully_compatible &= Incompatible("batchsize", type);
    }
  }
  if (v0.has_rand_skip()) {
    if (kind.data) {
      layer_param->mutable_data_param()->set_rand_skip(v0.rand_skip());
    } else if (kind.images) {
      layer_param->mutable_image_data_param()->set_rand_skip(v0.rand_skip());
    } else {
      is_fully_compatible &= Incompatible("rand_skip", type);
    }
  }
  if (v0.has_shuffle_images()) {
    if (kind.images) {
      layer_param->mutable_image_data_param()->set_shuffle(v0.shuffle_images());
    } else {
      is_fully_compatible &= Incompatible("shuffle", type);
    }
  }
  if (v0.has_new_height() || v0.has_new_width()) {
    if (kind.images) {
      if (v0.has_new_height())
        layer_param->mutable_image_data_param()->set_new_height(v0.new_height());
      if (v0.has_new_width())
        layer_param->mutable_image_data_param()->set_new_width(v0.new_width());
    } else {
      is_fully_compatible &= Incompatible("new_height/new_width", type);
    }
  }
  if (v0.has_det_fg_threshold() || v0.has_det_bg_threshold() || v0.has_det_fg_fraction() ||
      v0.has_det_context_pad() || v0.has_det_crop_mode()) {
    if (kind.window) {
      WindowDataParameter* window_param = layer_param->mutable_window_data_param();
      if (v0.has_det_fg_threshold()) window_param->set_fg_threshold(v0.det_fg_threshold());
      if (v0.has_det_bg_threshold()) window_param->set_bg_threshold(v0.det_bg_threshold());
      if (v0.has_det_fg_fraction()) window_param->set_fg_fraction(v0.det_fg_fraction());
      if (v0.has_det_context_pad()) window_param->set_context_pad(v0.det_context_pad());
      if (v0.has_det_crop_mode()) window_param->set_crop_mode(v0.det_crop_mode());
    } else {
      is_fully_compatible &= Incompatible("det_*", type);
    }
  }
  return is_fully_compatible;
}

}  // namespace

bool UpgradeV0LayerParameter(const V1LayerParameter& v0_layer_connection,
                             V1LayerParameter* layer_param) {
  bool is_fully_compatible = true;
  layer_param->Clear();
  for (const string& bottom : v0_layer_connection.bottom()) layer_param->add_bottom(bottom);
  for (const string& top : v0_layer_connection.top()) layer_param->add_top(top);
  if (!v0_layer_connection.has_layer()) return true;
  const V0LayerParameter& v0 = v0_layer_connection.layer();
  const string& type = v0.type();
  if (v0.has_name()) layer_param->set_name(v0.name());
  if (v0.has_type()) layer_param->set_type(UpgradeV0LayerType(type));
  for (const BlobProto& blob : v0.blobs()) layer_param->add_blobs()->CopyFrom(blob);
  for (float lr : v0.blobs_lr()) layer_param->add_blobs_lr(lr);
  for (float decay : v0.weight_decay()) layer_param->add_weight_decay(decay);
  const V0Kind kind(type);
  is_fully_compatible &= UpgradeV0LearnedParams(v0, kind, layer_param);
  is_fully_compatible &= UpgradeV0WindowParams(v0, kind, layer_param);
  is_fully_compatible &= UpgradeV0NeuronParams(v0, kind, layer_param);
  is_fully_compatible &= UpgradeV0DataParams(v0, kind, layer_param);
  return is_fully_compatible;
}

bool UpgradeV0Net(const NetParameter& v0_net_param_padding_layers, NetParameter* net_param) {
  NetParameter v0_net_param;
  UpgradeV0PaddingLayers(v0_net_param_padding_layers, &v0_net_param);
  bool is_fully_compatible = true;
  net_param->Clear();
  if (v0_net_param.has_name()) net_param->set_name(v0_net_param.name());
  for (const V1LayerParameter& layer : v0_net_param.layers()) {
    is_fully_compatible &= UpgradeV0LayerParameter(layer, net_param->add_layers());
  }
  for (const string& input : v0_net_param.input()) net_param->add_input(input);
  for (int dim : v0_net_param.input_dim()) net_param->add_input_dim(dim);
  if (v0_net_param.has_force_backward()) {
    net_param->set_force_backward(v0_net_param.force_backward());
  }
  return is_fully_compatible;
}

const char* UpgradeV1LayerType(V1LayerParameter_LayerType type) {
  switch (type) {
    case V1LayerParameter_LayerType_NONE:
      return "";
    case V1LayerParameter_LayerType_ABSVAL:
      return "AbsVal";
    case V1LayerParameter_LayerType_ACCURACY:
      return "Accuracy";
    case V1LayerParameter_LayerType_ARGMAX:
      return "ArgMax";
    case V1LayerParameter_LayerType_BNLL:
      return "BNLL";
    case V1LayerParameter_LayerType_CONCAT:
      return "Concat";
    case V1LayerParameter_LayerType_CONTRASTIVE_LOSS:
      return "ContrastiveLoss";
    case V1LayerParameter_LayerType_CONVOLUTION:
      return "Convolution";
    case V1LayerParameter_LayerType_DECONVOLUTION:
      return "Deconvolution";
    case V1LayerParameter_LayerType_DATA:
      return "Data";
    case V1LayerParameter_LayerType_DROPOUT:
      return "Dropout";
    case V1LayerParameter_LayerType_DUMMY_DATA:
      return "DummyData";
    case V1LayerParameter_LayerType_EUCLIDEAN_LOSS:
      return "EuclideanLoss";
    case V1LayerParameter_LayerType_ELTWISE:
      return "Eltwise";
    case V1LayerParameter_LayerType_EXP:
      return "Exp";
    case V1LayerParameter_LayerType_FLATTEN:
      return "Flatten";
    case V1LayerParameter_LayerType_HDF5_DATA:
      return "HDF5Data";
    case V1LayerParameter_LayerType_HDF5_OUTPUT:
      return "HDF5Output";
    case V1LayerParameter_LayerType_HINGE_LOSS:
      return "HingeLoss";
    case V1LayerParameter_LayerType_IM2COL:
      return "Im2col";
    case V1LayerParameter_LayerType_IMAGE_DATA:
      return "ImageData";
    case V1LayerParameter_LayerType_INFOGAIN_LOSS:
      return "InfogainLoss";
    case V1LayerParameter_LayerType_INNER_PRODUCT:
      return "InnerProduct";
    case V1LayerParameter_LayerType_LRN:
      return "LRN";
    case V1LayerParameter_LayerType_MEMORY_DATA:
      return "MemoryData";
    case V1LayerParameter_LayerType_MULTINOMIAL_LOGISTIC_LOSS:
      return "MultinomialLogisticLoss";
    case V1LayerParameter_LayerType_MVN:
      return "MVN";
    case V1LayerParameter_LayerType_POOLING:
      return "Pooling";
    case V1LayerParameter_LayerType_POWER:
      return "Power";
    case V1LayerParameter_LayerType_RELU:
      return "ReLU";
    case V1LayerParameter_LayerType_SIGMOID:
      return "Sigmoid";
    case V1LayerParameter_LayerType_SIGMOID_CROSS_ENTROPY_LOSS:
      return "SigmoidCrossEntropyLoss";
    case V1LayerParameter_LayerType_SILENCE:
      return "Silence";
    case V1LayerParameter_LayerType_SOFTMAX:
      return "Softmax";
    case V1LayerParameter_LayerType_SOFTMAX_LOSS:
      return "SoftmaxWithLoss";
    case V1LayerParameter_LayerType_SPLIT:
      return "Split";
    case V1LayerParameter_LayerType_SLICE:
      return "Slice";
    case V1LayerParameter_LayerType_TANH:
      return "TanH";
    case V1LayerParameter_LayerType_WINDOW_DATA:
      return "WindowData";
    case V1LayerParameter_LayerType_THRESHOLD:
      return "Threshold";
  }
  CAFFE_THROW() << "V1 net: unknown layer type enum value " << static_cast<int>(type);
}

bool UpgradeV1LayerParameter(const V1LayerParameter& v1, LayerParameter* layer_param) {
  layer_param->Clear();
  for (const string& bottom : v1.bottom()) layer_param->add_bottom(bottom);
  for (const string& top : v1.top()) layer_param->add_top(top);
  for (const NetStateRule& rule : v1.include()) layer_param->add_include()->CopyFrom(rule);
  for (const NetStateRule& rule : v1.exclude()) layer_param->add_exclude()->CopyFrom(rule);
  if (v1.has_name()) layer_param->set_name(v1.name());
  if (v1.has_type()) layer_param->set_type(UpgradeV1LayerType(v1.type()));
  for (const BlobProto& blob : v1.blobs()) layer_param->add_blobs()->CopyFrom(blob);
  // Param names, share modes, learning-rate and decay multipliers become ParamSpecs.
  auto param_spec = [layer_param](int i) {
    while (layer_param->param_size() <= i) layer_param->add_param();
    return layer_param->mutable_param(i);
  };
  for (int i = 0; i < v1.param_size(); ++i) param_spec(i)->set_name(v1.param(i));
  for (int i = 0; i < v1.blob_share_mode_size(); ++i) {
    param_spec(i)->set_share_mode(v1.blob_share_mode(i) == V1LayerParameter_DimCheckMode_PERMISSIVE
                                      ? ParamSpec_DimCheckMode_PERMISSIVE
                                      : ParamSpec_DimCheckMode_STRICT);
  }
  for (int i = 0; i < v1.blobs_lr_size(); ++i) param_spec(i)->set_lr_mult(v1.blobs_lr(i));
  for (int i = 0; i < v1.weight_decay_size(); ++i)
    param_spec(i)->set_decay_mult(v1.weight_decay(i));
  for (float weight : v1.loss_weight()) layer_param->add_loss_weight(weight);
#define CAFFE_COPY_V1_PARAM(field) \
  if (v1.has_##field()) layer_param->mutable_##field()->CopyFrom(v1.field())
  CAFFE_COPY_V1_PARAM(accuracy_param);
  CAFFE_COPY_V1_PARAM(argmax_param);
  CAFFE_COPY_V1_PARAM(concat_param);
  CAFFE_COPY_V1_PARAM(contrastive_loss_param);
  CAFFE_COPY_V1_PARAM(convolution_param);
  CAFFE_COPY_V1_PARAM(data_param);
  CAFFE_COPY_V1_PARAM(dropout_param);
  CAFFE_COPY_V1_PARAM(dummy_data_param);
  CAFFE_COPY_V1_PARAM(eltwise_param);
  CAFFE_COPY_V1_PARAM(exp_param);
  CAFFE_COPY_V1_PARAM(hdf5_data_param);
  CAFFE_COPY_V1_PARAM(hdf5_output_param);
  CAFFE_COPY_V1_PARAM(hinge_loss_param);
  CAFFE_COPY_V1_PARAM(image_data_param);
  CAFFE_COPY_V1_PARAM(infogain_loss_param);
  CAFFE_COPY_V1_PARAM(inner_product_param);
  CAFFE_COPY_V1_PARAM(lrn_param);
  CAFFE_COPY_V1_PARAM(memory_data_param);
  CAFFE_COPY_V1_PARAM(mvn_param);
  CAFFE_COPY_V1_PARAM(pooling_param);
  CAFFE_COPY_V1_PARAM(power_param);
  CAFFE_COPY_V1_PARAM(relu_param);
  CAFFE_COPY_V1_PARAM(sigmoid_param);
  CAFFE_COPY_V1_PARAM(softmax_param);
  CAFFE_COPY_V1_PARAM(slice_param);
  CAFFE_COPY_V1_PARAM(tanh_param);
  CAFFE_COPY_V1_PARAM(threshold_param);
  CAFFE_COPY_V1_PARAM(window_data_param);
  CAFFE_COPY_V1_PARAM(transform_param);
  CAFFE_COPY_V1_PARAM(loss_param);
#undef CAFFE_COPY_V1_PARAM
  if (v1.has_layer()) {
    LOG(WARNING) << "Input NetParameter has V0 layer -- ignoring.";
    return false;
  }
  return true;
}

bool UpgradeV1Net(const NetParameter& v1_net_param, NetParameter* net_param) {
  CAFFE_CHECK_EQ(v1_net_param.layer_size(), 0)
      << "this net has both 'layer' and deprecated 'layers' entries; use only one kind";
  bool is_fully_compatible = true;
  net_param->CopyFrom(v1_net_param);
  net_param->clear_layers();
  net_param->clear_layer();
  for (const V1LayerParameter& layer : v1_net_param.layers()) {
    is_fully_compatible &= UpgradeV1LayerParameter(layer, net_param->add_layer());
  }
  return is_fully_compatible;
}

}  // namespace caffe
