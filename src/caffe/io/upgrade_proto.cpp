#include "caffe/io/upgrade_proto.hpp"

#include "caffe/common.hpp"
#include "caffe/io/io.hpp"

namespace caffe {

bool NetNeedsUpgrade(const NetParameter& net_param) {
  return NetNeedsV0ToV1Upgrade(net_param) || NetNeedsV1ToV2Upgrade(net_param) ||
         NetNeedsDataUpgrade(net_param) || NetNeedsInputUpgrade(net_param) ||
         NetNeedsBatchNormUpgrade(net_param);
}

bool NetNeedsV0ToV1Upgrade(const NetParameter& net_param) {
  for (int i = 0; i < net_param.layers_size(); ++i) {
    if (net_param.layers(i).has_layer()) return true;
  }
  return false;
}

bool NetNeedsV1ToV2Upgrade(const NetParameter& net_param) { return net_param.layers_size() > 0; }

bool UpgradeNetAsNeeded(const string& param_file, NetParameter* param, bool* fully_compatible) {
  bool upgraded = false;
  bool compatible = true;
  if (NetNeedsV0ToV1Upgrade(*param)) {
    LOG(INFO) << "Attempting to upgrade input file specified using deprecated "
                 "V0LayerParameter: "
              << param_file;
    const NetParameter original(*param);
    try {
      if (!UpgradeV0Net(original, param)) {
        compatible = false;
        LOG(WARNING) << "Had one or more problems upgrading V0NetParameter to NetParameter (see "
                        "above); continuing anyway.";
      } else {
        LOG(INFO) << "Successfully upgraded file specified using deprecated V0LayerParameter";
      }
    } catch (const Error& error) {
      throw Error(param_file + ": " + error.what());
    }
    upgraded = true;
  }
  if (NetNeedsV1ToV2Upgrade(*param)) {
    LOG(INFO) << "Attempting to upgrade input file specified using deprecated "
                 "V1LayerParameter: "
              << param_file;
    const NetParameter original(*param);
    try {
      if (!UpgradeV1Net(original, param)) {
        compatible = false;
        LOG(WARNING) << "Had one or more problems upgrading V1LayerParameter (see above); "
                        "continuing anyway.";
      } else {
        LOG(INFO) << "Successfully upgraded file specified using deprecated V1LayerParameter";
      }
    } catch (const Error& error) {
      throw Error(param_file + ": " + error.what());
    }
    upgraded = true;
  }
  if (fully_compatible) *fully_compatible = compatible;
  if (NetNeedsDataUpgrade(*param)) {
    LOG(INFO) << "Attempting to upgrade input file specified using deprecated "
                 "transformation parameters: "
              << param_file;
    UpgradeNetDataTransformation(param);
    LOG(INFO) << "Successfully upgraded file specified using deprecated data "
                 "transformation parameters.";
    upgraded = true;
  }
  if (NetNeedsInputUpgrade(*param)) {
    LOG(INFO) << "Attempting to upgrade input file specified using deprecated input fields: "
              << param_file;
    UpgradeNetInput(param);
    LOG(INFO) << "Successfully upgraded file specified using deprecated input fields.";
    upgraded = true;
  }
  if (NetNeedsBatchNormUpgrade(*param)) {
    LOG(INFO) << "Attempting to upgrade batch norm layers using deprecated params: " << param_file;
    UpgradeNetBatchNorm(param);
    LOG(INFO) << "Successfully upgraded batch norm layers using deprecated params.";
    upgraded = true;
  }
  return upgraded;
}

namespace {
bool IsDataLayerType(const string& type) {
  return type == "Data" || type == "ImageData" || type == "WindowData";
}
}  // namespace

bool NetNeedsDataUpgrade(const NetParameter& net_param) {
  for (const LayerParameter& layer : net_param.layer()) {
    if (layer.type() == "Data") {
      const DataParameter& p = layer.data_param();
      if (p.has_scale() || p.has_mean_file() || p.has_crop_size() || p.has_mirror()) return true;
    }
    if (layer.type() == "ImageData") {
      const ImageDataParameter& p = layer.image_data_param();
      if (p.has_scale() || p.has_mean_file() || p.has_crop_size() || p.has_mirror()) return true;
    }
    if (layer.type() == "WindowData") {
      const WindowDataParameter& p = layer.window_data_param();
      if (p.has_scale() || p.has_mean_file() || p.has_crop_size() || p.has_mirror()) return true;
    }
  }
  return false;
}

namespace {
// Moves the deprecated fields of one data layer's parameter into its transform_param.
template <typename DataParam>
void MoveTransformFields(DataParam* source, TransformationParameter* transform) {
  if (source->has_scale()) {
    transform->set_scale(source->scale());
    source->clear_scale();
  }
  if (source->has_mean_file()) {
    transform->set_mean_file(source->mean_file());
    source->clear_mean_file();
  }
  if (source->has_crop_size()) {
    transform->set_crop_size(source->crop_size());
    source->clear_crop_size();
  }
  if (source->has_mirror()) {
    transform->set_mirror(source->mirror());
    source->clear_mirror();
  }
}
}  // namespace

void UpgradeNetDataTransformation(NetParameter* net_param) {
  for (LayerParameter& layer : *net_param->mutable_layer()) {
    if (!IsDataLayerType(layer.type())) continue;
    if (layer.type() == "Data") {
      MoveTransformFields(layer.mutable_data_param(), layer.mutable_transform_param());
    } else if (layer.type() == "ImageData") {
      MoveTransformFields(layer.mutable_image_data_param(), layer.mutable_transform_param());
    } else {
      MoveTransformFields(layer.mutable_window_data_param(), layer.mutable_transform_param());
    }
  }
}

bool NetNeedsInputUpgrade(const NetParameter& net_param) { return net_param.input_size() > 0; }

void UpgradeNetInput(NetParameter* net_param) {
  // A legacy caffemodel can hold input names without shapes: then dropping them is enough.
  const bool has_shape = net_param->input_shape_size() > 0;
  const bool has_dim = net_param->input_dim_size() > 0;
  if (has_shape || has_dim) {
    CAFFE_CHECK(!has_shape || net_param->input_shape_size() == net_param->input_size())
        << "net has " << net_param->input_size() << " inputs but " << net_param->input_shape_size()
        << " input_shape entries";
    CAFFE_CHECK(!has_dim || net_param->input_dim_size() == 4 * net_param->input_size())
        << "net has " << net_param->input_size() << " inputs, so input_dim needs "
        << 4 * net_param->input_size() << " values (N, C, H, W per input), got "
        << net_param->input_dim_size();
    LayerParameter* layer_param = net_param->add_layer();
    layer_param->set_name("input");
    layer_param->set_type("Input");
    InputParameter* input_param = layer_param->mutable_input_param();
    for (int i = 0; i < net_param->input_size(); ++i) {
      layer_param->add_top(net_param->input(i));
      if (has_shape) {
        input_param->add_shape()->CopyFrom(net_param->input_shape(i));
      } else {
        BlobShape* shape = input_param->add_shape();
        for (int j = 4 * i; j < 4 * i + 4; ++j) shape->add_dim(net_param->input_dim(j));
      }
    }
    // Move the Input layer to the front, where its tops are produced before use.
    for (int i = net_param->layer_size() - 1; i > 0; --i) {
      net_param->mutable_layer(i - 1)->Swap(net_param->mutable_layer(i));
    }
  }
  net_param->clear_input();
  net_param->clear_input_shape();
  net_param->clear_input_dim();
}

namespace {
// Old BatchNorm nets listed the three statistics blobs as params, to keep the solver off them.
bool IsOldBatchNorm(const LayerParameter& layer) {
  return layer.type() == "BatchNorm" && layer.param_size() == 3;
}
}  // namespace

bool NetNeedsBatchNormUpgrade(const NetParameter& net_param) {
  for (const LayerParameter& layer : net_param.layer()) {
    if (!IsOldBatchNorm(layer)) continue;
    // Already upgraded (BVLC's upgrade tool writes them back with both multipliers 0).
    for (const ParamSpec& spec : layer.param()) {
      if (spec.lr_mult() != 0 || spec.decay_mult() != 0) return true;
    }
  }
  return false;
}

void UpgradeNetBatchNorm(NetParameter* net_param) {
  // As BVLC: the specs stay (their names may share the statistics between layers), with lr_mult
  // and decay_mult 0 (BatchNormLayer refuses a spec with any other lr_mult).
  for (LayerParameter& layer : *net_param->mutable_layer()) {
    if (!IsOldBatchNorm(layer)) continue;
    for (ParamSpec& spec : *layer.mutable_param()) {
      spec.set_lr_mult(0.f);
      spec.set_decay_mult(0.f);
    }
  }
}

bool SolverNeedsTypeUpgrade(const SolverParameter& solver_param) {
  return solver_param.has_solver_type();
}

void UpgradeSolverType(SolverParameter* solver_param) {
  CAFFE_CHECK(!solver_param->has_solver_type() || !solver_param->has_type())
      << "the solver sets both the old solver_type and the new type; keep only type";
  if (!solver_param->has_solver_type()) return;
  const char* type = "SGD";
  switch (solver_param->solver_type()) {
    case SolverParameter_SolverType_SGD:
      type = "SGD";
      break;
    case SolverParameter_SolverType_NESTEROV:
      type = "Nesterov";
      break;
    case SolverParameter_SolverType_ADAGRAD:
      type = "AdaGrad";
      break;
    case SolverParameter_SolverType_RMSPROP:
      type = "RMSProp";
      break;
    case SolverParameter_SolverType_ADADELTA:
      type = "AdaDelta";
      break;
    case SolverParameter_SolverType_ADAM:
      type = "Adam";
      break;
  }
  solver_param->set_type(type);
  solver_param->clear_solver_type();
}

bool UpgradeSolverAsNeeded(const string& param_file, SolverParameter* param) {
  if (!SolverNeedsTypeUpgrade(*param)) return false;
  LOG(INFO) << "Attempting to upgrade input file specified using deprecated 'solver_type' "
               "field (enum): "
            << param_file;
  UpgradeSolverType(param);
  LOG(INFO) << "Successfully upgraded file specified using deprecated 'solver_type' field "
               "(enum) to 'type' field (string).";
  return true;
}

void ReadNetParamsFromTextFile(const string& param_file, NetParameter* param) {
  ReadProtoFromTextFile(param_file, param);
  UpgradeNetAsNeeded(param_file, param);
}

void ReadNetParamsFromBinaryFile(const string& param_file, NetParameter* param) {
  ReadProtoFromBinaryFile(param_file, param);
  UpgradeNetAsNeeded(param_file, param);
}

void ReadSolverParamsFromTextFile(const string& param_file, SolverParameter* param) {
  ReadProtoFromTextFile(param_file, param);
  UpgradeSolverAsNeeded(param_file, param);
}

}  // namespace caffe
