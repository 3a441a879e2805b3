#include "caffe/net.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <type_traits>

#include "caffe/io/hdf5.hpp"
#include "caffe/io/io.hpp"
#include "caffe/io/upgrade_proto.hpp"
#include "caffe/kernels/denormals.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/net/insert_splits.hpp"
#include "caffe/net/layer_param_check.hpp"
#include "caffe/net/layer_precision.hpp"
#include "caffe/timeline/gpu_slice.hpp"
#include "caffe/timeline/timeline.hpp"
#include "caffe/util/environment.hpp"

namespace caffe {

namespace {
// Errors raised below a layer (blob reshapes, fillers, device memory) do not know which layer
// failed: the net says it, before what the layer was doing.
template <typename Dtype>
Error NamingTheLayer(const Error& error, const Layer<Dtype>& layer, const string& doing) {
  const string message = error.what();
  const string prefix = layer.error_prefix();
  if (message.compare(0, prefix.size(), prefix) == 0) return error;
  return Error(doing + prefix + message);
}

}  // namespace

template <typename Dtype>
Net<Dtype>::Net(const NetParameter& param) {
  Init(param);
}

template <typename Dtype>
Net<Dtype>::Net(const string& param_file, Phase phase, int level, const vector<string>* stages) {
  NetParameter param;
  ReadNetParamsFromTextFile(param_file, &param);
  // The caller's phase, level and stages replace whatever state the file sets.
  param.mutable_state()->set_phase(phase);
  if (stages != nullptr) {
    for (const string& stage : *stages) param.mutable_state()->add_stage(stage);
  }
  param.mutable_state()->set_level(level);
  Init(param);
}

template <typename Dtype>
void Net<Dtype>::Init(const NetParameter& in_param) {
  FlushDenormalsEnabled();  // a bad CAFFE_FLUSH_DENORMALS is an error now, not in a layer's step
  phase_ = in_param.state().phase();
  NetParameter param = PrepareParameter(in_param);
  name_ = param.name();
  memory_used_ = 0;
  const int num_layers = param.layer_size();
  bottom_vecs_.resize(num_layers);
  top_vecs_.resize(num_layers);
  bottom_id_vecs_.resize(num_layers);
  param_id_vecs_.resize(num_layers);
  top_id_vecs_.resize(num_layers);
  bottom_need_backward_.resize(num_layers);
  Wiring wiring;
  PrecisionPlan precision(param, Caffe::mode() == Caffe::GPU);
  if (std::is_same<Dtype, float>::value) wiring.precision = &precision;
  for (int layer_id = 0; layer_id < num_layers; ++layer_id) AddLayer(&param, layer_id, &wiring);
  precision.Log();
  MarkLayersNeedingBackward(param.force_backward());
  // Blobs no layer consumed are the net's outputs (in name order, as BVLC lists them).
  for (const string& blob_name : wiring.available_blobs) {
    LOG_IF(INFO, Caffe::root_solver()) << "This network produces output " << blob_name;
    net_output_blobs_.push_back(blobs_[wiring.blob_name_to_idx[blob_name]].get());
    net_output_blob_indices_.push_back(wiring.blob_name_to_idx[blob_name]);
  }
  for (size_t blob_id = 0; blob_id < blob_names_.size(); ++blob_id) {
    blob_names_index_[blob_names_[blob_id]] = static_cast<int>(blob_id);
  }
  for (size_t layer_id = 0; layer_id < layer_names_.size(); ++layer_id) {
    layer_names_index_[layer_names_[layer_id]] = static_cast<int>(layer_id);
  }
  // Shared params use their owner's memory for data and diff.
  for (size_t i = 0; i < params_.size(); ++i) {
    if (param_owners_[i] < 0) continue;
    params_[i]->ShareData(*params_[param_owners_[i]]);
    params_[i]->ShareDiff(*params_[param_owners_[i]]);
  }
  debug_info_ = param.debug_info();
  FuseLayers();
  LOG_IF(INFO, Caffe::root_solver()) << "Network initialization done.";
}

template <typename Dtype>
NetParameter Net<Dtype>::PrepareParameter(const NetParameter& in_param) {
  NetParameter filtered_param;
  FilterNet(in_param, &filtered_param);
  LOG_IF(INFO, Caffe::root_solver()) << "Initializing net from parameters: " << std::endl
                                     << filtered_param.DebugString();
  NetParameter param;
  InsertSplits(filtered_param, &param);
  for (LayerParameter& layer_param : *param.mutable_layer()) {
    if (!layer_param.has_phase()) layer_param.set_phase(phase_);
  }
  return param;
}

template <typename Dtype>
void Net<Dtype>::AddLayer(NetParameter* param, int layer_id, Wiring* wiring) {
  const LayerParameter& layer_param = param->layer(layer_id);
  CAFFE_CHECK(layer_param.propagate_down_size() == 0 ||
              layer_param.propagate_down_size() == layer_param.bottom_size())
      << "layer '" << layer_param.name() << "' (" << layer_param.type()
      << "): propagate_down must be given 0 times or once per bottom (" << layer_param.bottom_size()
      << " bottoms), got " << layer_param.propagate_down_size();
  // A net's own layers only: layers build internal layers from copies of their parameters.
  const string stray = StrayLayerParams(layer_param);
  LOG_IF(WARNING, !stray.empty()) << stray;
  layers_.push_back(LayerRegistry<Dtype>::CreateLayer(layer_param));
  if (wiring->precision) {
    const LayerMath math = wiring->precision->Choose(layer_param, layers_.back()->HasBf16Math());
    layers_.back()->set_math(math.forward, math.backward);
  }
  layer_names_.push_back(layer_param.name());
  LOG_IF(INFO, Caffe::root_solver()) << "Creating Layer " << layer_param.name();
  bool need_backward = false;
  for (int bottom_id = 0; bottom_id < layer_param.bottom_size(); ++bottom_id) {
    const int blob_id = AppendBottom(*param, layer_id, bottom_id, &wiring->available_blobs,
                                     &wiring->blob_name_to_idx);
    need_backward |= blob_need_backward_[blob_id];
  }
  int num_top = layer_param.top_size();
  for (int top_id = 0; top_id < num_top; ++top_id) {
    AppendTop(*param, layer_id, top_id, &wiring->available_blobs, &wiring->blob_name_to_idx);
    if (layer_param.type() == "Input") {
      const int blob_id = static_cast<int>(blobs_.size()) - 1;
      net_input_blob_indices_.push_back(blob_id);
      net_input_blobs_.push_back(blobs_[blob_id].get());
    }
  }
  Layer<Dtype>* layer = layers_[layer_id].get();
  if (layer->AutoTopBlobs()) {
    // Anonymous tops (e.g. a loss layer's output nobody named) are not usable as inputs.
    const int needed_num_top = std::max(layer->MinTopBlobs(), layer->ExactNumTopBlobs());
    for (; num_top < needed_num_top; ++num_top) {
      AppendTop(*param, layer_id, num_top, nullptr, nullptr);
    }
  }
  SetUpLayer(layer_id);
  need_backward |= AddLayerParams(*param, layer_id, &wiring->learnable_layer_names);
  layer_need_backward_.push_back(need_backward);
  if (need_backward) {
    for (int blob_id : top_id_vecs_[layer_id]) blob_need_backward_[blob_id] = true;
  }
}

template <typename Dtype>
void Net<Dtype>::SetUpLayer(int layer_id) {
  Layer<Dtype>* layer = layers_[layer_id].get();
  try {
    layer->SetUp(bottom_vecs_[layer_id], top_vecs_[layer_id]);
  } catch (const Error& error) {
    throw NamingTheLayer(error, *layer, "failed to set up ");
  }
  LOG_IF(INFO, Caffe::root_solver()) << "Setting up " << layer_names_[layer_id];
  for (size_t top_id = 0; top_id < top_vecs_[layer_id].size(); ++top_id) {
    const int blob_id = top_id_vecs_[layer_id][top_id];
    if (static_cast<int>(blob_loss_weights_.size()) <= blob_id) {
      blob_loss_weights_.resize(blob_id + 1, Dtype(0));
    }
    blob_loss_weights_[blob_id] = layer->loss(static_cast<int>(top_id));
    LOG_IF(INFO, Caffe::root_solver())
        << "Top shape: " << top_vecs_[layer_id][top_id]->shape_string();
    if (layer->loss(static_cast<int>(top_id))) {
      LOG_IF(INFO, Caffe::root_solver())
          << "    with loss weight " << layer->loss(static_cast<int>(top_id));
    }
    memory_used_ += top_vecs_[layer_id][top_id]->count();
  }
  LOG_IF(INFO, Caffe::root_solver())
      << "Memory required for data: " << memory_used_ * sizeof(Dtype);
}

template <typename Dtype>
bool Net<Dtype>::AddLayerParams(const NetParameter& param, int layer_id,
                                std::set<string>* learnable_layer_names) {
  const LayerParameter& layer_param = param.layer(layer_id);
  Layer<Dtype>* layer = layers_[layer_id].get();
  const int param_size = layer_param.param_size();
  const int num_param_blobs = static_cast<int>(layer->blobs().size());
  // Weights are copied by layer name: two learnable layers of one name cannot both get theirs.
  if (num_param_blobs > 0 && !learnable_layer_names->insert(layer_param.name()).second) {
    LOG(WARNING) << "two layers with weights are named '" << layer_param.name()
                 << "'; weights are copied by layer name, so only the last one will get them";
  }
  CAFFE_CHECK_LE(param_size, num_param_blobs)
      << "layer '" << layer_param.name() << "' (" << layer_param.type() << "): " << param_size
      << " param specs given for a layer with " << num_param_blobs << " learnable blobs";
  bool need_backward = false;
  ParamSpec default_param_spec;
  for (int param_id = 0; param_id < num_param_blobs; ++param_id) {
    const ParamSpec* param_spec =
        (param_id < param_size) ? &layer_param.param(param_id) : &default_param_spec;
    const bool param_need_backward = param_spec->lr_mult() != 0;
    need_backward |= param_need_backward;
    layer->set_param_propagate_down(param_id, param_need_backward);
  }
  for (int param_id = 0; param_id < num_param_blobs; ++param_id) {
    AppendParam(param, layer_id, param_id);
  }
  return need_backward;
}

template <typename Dtype>
void Net<Dtype>::MarkLayersNeedingBackward(bool force_backward) {
  // Walk backwards to find the blobs that contribute to a loss; layers that feed no loss, or
  // whose bottoms all skip backward (propagate_down: false), need no backward pass.
  std::set<string> blobs_under_loss;
  std::set<string> blobs_skip_backp;
  const int num_layers = static_cast<int>(layers_.size());
  for (int layer_id = num_layers - 1; layer_id >= 0; --layer_id) {
    bool layer_contributes_loss = false;
    bool layer_skip_propagate_down = true;
    for (size_t top_id = 0; top_id < top_vecs_[layer_id].size(); ++top_id) {
      const string& blob_name = blob_names_[top_id_vecs_[layer_id][top_id]];
      if (layers_[layer_id]->loss(static_cast<int>(top_id)) || blobs_under_loss.count(blob_name)) {
        layer_contributes_loss = true;
      }
      if (!blobs_skip_backp.count(blob_name)) layer_skip_propagate_down = false;
      if (layer_contributes_loss && !layer_skip_propagate_down) break;
    }
    if (layer_need_backward_[layer_id] && layer_skip_propagate_down) {
      layer_need_backward_[layer_id] = false;
      for (size_t bottom_id = 0; bottom_id < bottom_vecs_[layer_id].size(); ++bottom_id) {
        bottom_need_backward_[layer_id][bottom_id] = false;
      }
    }
    if (!layer_contributes_loss) layer_need_backward_[layer_id] = false;
    if (Caffe::root_solver()) {
      LOG(INFO) << layer_names_[layer_id]
                << (layer_need_backward_[layer_id] ? " needs backward computation."
                                                   : " does not need backward computation.");
    }
    for (size_t bottom_id = 0; bottom_id < bottom_vecs_[layer_id].size(); ++bottom_id) {
      const string& blob_name = blob_names_[bottom_id_vecs_[layer_id][bottom_id]];
      if (layer_contributes_loss) {
        blobs_under_loss.insert(blob_name);
      } else {
        bottom_need_backward_[layer_id][bottom_id] = false;
      }
      if (!bottom_need_backward_[layer_id][bottom_id]) blobs_skip_backp.insert(blob_name);
    }
  }
  if (!force_backward) return;
  for (int layer_id = 0; layer_id < num_layers; ++layer_id) {
    layer_need_backward_[layer_id] = true;
    for (size_t bottom_id = 0; bottom_id < bottom_need_backward_[layer_id].size(); ++bottom_id) {
      bool need = bottom_need_backward_[layer_id][bottom_id] ||
                  layers_[layer_id]->AllowForceBackward(static_cast<int>(bottom_id));
      bottom_need_backward_[layer_id][bottom_id] = need;
      int blob_id = bottom_id_vecs_[layer_id][bottom_id];
      blob_need_backward_[blob_id] = blob_need_backward_[blob_id] || need;
    }
    for (size_t param_id = 0; param_id < layers_[layer_id]->blobs().size(); ++param_id) {
      layers_[layer_id]->set_param_propagate_down(static_cast<int>(param_id), true);
    }
  }
}

template <typename Dtype>
void Net<Dtype>::FilterNet(const NetParameter& param, NetParameter* param_filtered) {
  NetState net_state(param.state());
  param_filtered->CopyFrom(param);
  param_filtered->clear_layer();
  for (const LayerParameter& layer_param : param.layer()) {
    const string& layer_name = layer_param.name();
    CAFFE_CHECK(layer_param.include_size() == 0 || layer_param.exclude_size() == 0)
        << "layer '" << layer_name << "' has both include and exclude rules; give only one kind";
    // With no include rules a layer is in by default; with some, it is out unless one is met.
    bool layer_included = (layer_param.include_size() == 0);
    for (const NetStateRule& rule : layer_param.exclude()) {
      if (StateMeetsRule(net_state, rule, layer_name)) layer_included = false;
    }
    for (const NetStateRule& rule : layer_param.include()) {
      if (StateMeetsRule(net_state, rule, layer_name)) layer_included = true;
    }
    if (layer_included) param_filtered->add_layer()->CopyFrom(layer_param);
  }
}

template <typename Dtype>
bool Net<Dtype>::StateMeetsRule(const NetState& state, const NetStateRule& rule,
                                const string& layer_name) {
  if (rule.has_phase() && rule.phase() != state.phase()) {
    LOG_IF(INFO, Caffe::root_solver())
        << "The NetState phase (" << state.phase() << ") differed from the phase (" << rule.phase()
        << ") specified by a rule in layer " << layer_name;
    return false;
  }
  if (rule.has_min_level() && state.level() < rule.min_level()) {
    LOG_IF(INFO, Caffe::root_solver())
        << "The NetState level (" << state.level() << ") is below the min_level ("
        << rule.min_level() << ") specified by a rule in layer " << layer_name;
    return false;
  }
  if (rule.has_max_level() && state.level() > rule.max_level()) {
    LOG_IF(INFO, Caffe::root_solver())
        << "The NetState level (" << state.level() << ") is above the max_level ("
        << rule.max_level() << ") specified by a rule in layer " << layer_name;
    return false;
  }
  for (const string& stage : rule.stage()) {
    if (std::find(state.stage().begin(), state.stage().end(), stage) == state.stage().end()) {
      LOG_IF(INFO, Caffe::root_solver()) << "The NetState did not contain stage '" << stage
                                         << "' specified by a rule in layer " << layer_name;
      return false;
    }
  }
  for (const string& stage : rule.not_stage()) {
    if (std::find(state.stage().begin(), state.stage().end(), stage) != state.stage().end()) {
      LOG_IF(INFO, Caffe::root_solver()) << "The NetState contained a not_stage '" << stage
                                         << "' specified by a rule in layer " << layer_name;
      return false;
    }
  }
  return true;
}

template <typename Dtype>
void Net<Dtype>::AppendTop(const NetParameter& param, int layer_id, int top_id,
                           std::set<string>* available_blobs,
                           std::map<string, int>* blob_name_to_idx) {
  const LayerParameter& layer_param = param.layer(layer_id);
  const string blob_name =
      (layer_param.top_size() > top_id) ? layer_param.top(top_id) : "(automatic)";
  if (blob_name_to_idx && layer_param.bottom_size() > top_id &&
      blob_name == layer_param.bottom(top_id)) {
    LOG_IF(INFO, Caffe::root_solver())
        << layer_param.name() << " -> " << blob_name << " (in-place)";
    top_vecs_[layer_id].push_back(blobs_[(*blob_name_to_idx)[blob_name]].get());
    top_id_vecs_[layer_id].push_back((*blob_name_to_idx)[blob_name]);
  } else if (blob_name_to_idx && blob_name_to_idx->count(blob_name)) {
    CAFFE_THROW() << "top blob '" << blob_name << "' of layer '" << layer_param.name()
                  << "' is produced by more than one layer; a top may reuse a name only "
                     "in place (top "
                  << top_id << " = bottom " << top_id << ")";
  } else {
    LOG_IF(INFO, Caffe::root_solver()) << layer_param.name() << " -> " << blob_name;
    auto blob_pointer = std::make_shared<Blob<Dtype>>();
    const int blob_id = static_cast<int>(blobs_.size());
    blobs_.push_back(blob_pointer);
    blob_names_.push_back(blob_name);
    blob_need_backward_.push_back(false);
    if (blob_name_to_idx) (*blob_name_to_idx)[blob_name] = blob_id;
    top_id_vecs_[layer_id].push_back(blob_id);
    top_vecs_[layer_id].push_back(blob_pointer.get());
  }
  if (available_blobs) available_blobs->insert(blob_name);
}

template <typename Dtype>
int Net<Dtype>::AppendBottom(const NetParameter& param, int layer_id, int bottom_id,
                             std::set<string>* available_blobs,
                             std::map<string, int>* blob_name_to_idx) {
  const LayerParameter& layer_param = param.layer(layer_id);
  const string& blob_name = layer_param.bottom(bottom_id);
  CAFFE_CHECK(available_blobs->count(blob_name))
      << "unknown bottom blob '" << blob_name << "' (layer '" << layer_param.name()
      << "', bottom index " << bottom_id << ")";
  const int blob_id = (*blob_name_to_idx)[blob_name];
  LOG_IF(INFO, Caffe::root_solver()) << layer_names_[layer_id] << " <- " << blob_name;
  bottom_vecs_[layer_id].push_back(blobs_[blob_id].get());
  bottom_id_vecs_[layer_id].push_back(blob_id);
  available_blobs->erase(blob_name);
  bool need_backward = blob_need_backward_[blob_id];
  if (layer_param.propagate_down_size() > 0) {
    need_backward = layer_param.propagate_down(bottom_id);
  }
  bottom_need_backward_[layer_id].push_back(need_backward);
  return blob_id;
}

template <typename Dtype>
void Net<Dtype>::AppendParam(const NetParameter& param, int layer_id, int param_id) {
  // The layer's own copy of its parameter: layers may add ParamSpecs in LayerSetUp (BatchNorm
  // masks its statistics with lr_mult 0).
  const LayerParameter& layer_param = layers_[layer_id]->layer_param();
  const int param_size = layer_param.param_size();
  const string param_name = (param_size > param_id) ? layer_param.param(param_id).name() : "";
  param_display_names_.push_back(param_name.empty() ? std::to_string(param_id) : param_name);
  const int net_param_id = static_cast<int>(params_.size());
  params_.push_back(layers_[layer_id]->blobs()[param_id]);
  param_id_vecs_[layer_id].push_back(net_param_id);
  param_layer_indices_.push_back({layer_id, param_id});
  ParamSpec default_param_spec;
  const ParamSpec* param_spec =
      (param_size > param_id) ? &layer_param.param(param_id) : &default_param_spec;
  if (param_name.empty() || !param_names_index_.count(param_name)) {
    // This layer owns the blob: it is anonymous or the first with its name.
    param_owners_.push_back(-1);
    if (!param_name.empty()) param_names_index_[param_name] = net_param_id;
    const int learnable_param_id = static_cast<int>(learnable_params_.size());
    learnable_params_.push_back(params_[net_param_id].get());
    learnable_param_ids_.push_back(learnable_param_id);
    has_params_lr_.push_back(param_spec->has_lr_mult());
    has_params_decay_.push_back(param_spec->has_decay_mult());
    params_lr_.push_back(param_spec->lr_mult());
    params_weight_decay_.push_back(param_spec->decay_mult());
    return;
  }
  // A name seen before: share the owner's blob.
  const int owner_net_param_id = param_names_index_[param_name];
  param_owners_.push_back(owner_net_param_id);
  const int owner_layer_id = param_layer_indices_[owner_net_param_id].first;
  const int owner_param_id = param_layer_indices_[owner_net_param_id].second;
  LOG_IF(INFO, Caffe::root_solver())
      << "Sharing parameters '" << param_name << "' owned by layer '"
      << layer_names_[owner_layer_id] << "', param index " << owner_param_id;
  Blob<Dtype>* this_blob = layers_[layer_id]->blobs()[param_id].get();
  Blob<Dtype>* owner_blob = layers_[owner_layer_id]->blobs()[owner_param_id].get();
  if (param_spec->share_mode() == ParamSpec_DimCheckMode_PERMISSIVE) {
    CAFFE_CHECK_EQ(this_blob->count(), owner_blob->count())
        << "cannot share param '" << param_name << "' owned by layer '"
        << layer_names_[owner_layer_id] << "' with layer '" << layer_names_[layer_id]
        << "': count mismatch; owner shape " << owner_blob->shape_string() << ", sharer shape "
        << this_blob->shape_string();
  } else {
    CAFFE_CHECK(this_blob->shape() == owner_blob->shape())
        << "cannot share param '" << param_name << "' owned by layer '"
        << layer_names_[owner_layer_id] << "' with layer '" << layer_names_[layer_id]
        << "': shape mismatch; owner shape " << owner_blob->shape_string() << ", sharer shape "
        << this_blob->shape_string();
  }
  const int learnable_param_id = learnable_param_ids_[owner_net_param_id];
  learnable_param_ids_.push_back(learnable_param_id);
  if (param_spec->has_lr_mult()) {
    if (has_params_lr_[learnable_param_id]) {
      CAFFE_CHECK_EQ(param_spec->lr_mult(), params_lr_[learnable_param_id])
          << "shared param '" << param_name << "' has different lr_mult in layer '"
          << layer_names_[layer_id] << "' and its owner";
    } else {
      has_params_lr_[learnable_param_id] = true;
      params_lr_[learnable_param_id] = param_spec->lr_mult();
    }
  }
  if (param_spec->has_decay_mult()) {
    if (has_params_decay_[learnable_param_id]) {
      CAFFE_CHECK_EQ(param_spec->decay_mult(), params_weight_decay_[learnable_param_id])
          << "shared param '" << param_name << "' has different decay_mult in layer '"
          << layer_names_[layer_id] << "' and its owner";
    } else {
      has_params_decay_[learnable_param_id] = true;
      params_weight_decay_[learnable_param_id] = param_spec->decay_mult();
    }
  }
}

template <typename Dtype>
Dtype Net<Dtype>::ForwardFromTo(int start, int end) {
  CHECK_GE(start, 0);
  CHECK_LT(end, static_cast<int>(layers_.size()));
  Dtype loss = 0;
  for (int i = start; i <= end; ++i) {
    for (Callback* callback : before_forward_) callback->run(i);
    loss += ForwardStep(i, start, end);
    if (debug_info_) ForwardDebugInfo(i);
    for (Callback* callback : after_forward_) callback->run(i);
  }
  return loss;
}

template <typename Dtype>
Dtype Net<Dtype>::ForwardStep(int i, int start, int end) {
  timeline::Slice slice("forward", layer_names_[i]);
  slice.Arg("type", layers_[i]->type());
  timeline::GpuSlice gpu_slice("forward", layer_names_[i]);
  ScopedFlushDenormals flush_denormals;
  const int head = fused_head_[i];
  try {
    if (GroupRunsFused(i, start, end)) {
      // The head's step runs the whole group; its followers' steps are empty. Each layer of
      // the group is reshaped first, as Layer::Forward reshapes a layer that runs alone.
      if (i != head) return 0;
      for (int j = head; j <= head + fused_followers_[head]; ++j) {
        layers_[j]->Reshape(bottom_vecs_[j], top_vecs_[j]);
      }
      layers_[head]->fusion()->ForwardFused(bottom_vecs_[head], top_vecs_[head]);
      forward_ran_fused_[head] = true;
      return 0;
    }
    forward_ran_fused_[head] = false;  // a layer of the group (or one alone) ran by itself
    return layers_[i]->Forward(bottom_vecs_[i], top_vecs_[i]);
  } catch (const Error& error) {
    throw NamingTheLayer(error, *layers_[i], "forward pass of ");
  }
}

template <typename Dtype>
void Net<Dtype>::FuseLayers() {
  const int num_layers = static_cast<int>(layers_.size());
  fused_followers_.assign(num_layers, 0);
  fused_head_.resize(num_layers);
  for (int i = 0; i < num_layers; ++i) fused_head_[i] = i;
  forward_ran_fused_.assign(num_layers, false);
  fused_mode_ = Caffe::mode();
  if (!FusionFromEnvironment()) return;
  const auto has_loss = [this](int i) {
    for (size_t t = 0; t < top_vecs_[i].size(); ++t) {
      if (layers_[i]->loss(static_cast<int>(t)) != Dtype(0)) return true;
    }
    return false;
  };
  for (int head = 0; head + 1 < num_layers; ++head) {
    LayerFusion<Dtype>* fusion = layers_[head]->fusion();
    if (fusion == nullptr || has_loss(head)) continue;
    int next = head + 1;
    while (next < num_layers && !has_loss(next) &&
           fusion->FuseWithNext(layers_[next].get(), bottom_vecs_[head], top_vecs_[head],
                                bottom_vecs_[next], top_vecs_[next])) {
      fused_head_[next++] = head;
    }
    fused_followers_[head] = next - head - 1;
    if (next == head + 1) continue;
    LOG_IF(INFO, Caffe::root_solver()) << FusedGroupNames(head) << " run as one";
    head = next - 1;  // a layer is in one group at most
  }
}

template <typename Dtype>
bool Net<Dtype>::RunsFused(int i) const {
  return i >= 0 && i < static_cast<int>(fused_followers_.size()) && fused_followers_[i] > 0 &&
         Caffe::mode() == fused_mode_ && !debug_info_;
}

template <typename Dtype>
string Net<Dtype>::FusedGroupNames(int head) const {
  const int last = head + fused_followers_[head];
  string names = layer_names_[head];
  for (int i = head + 1; i <= last; ++i) names += (i == last ? " and " : ", ") + layer_names_[i];
  return names;
}

template <typename Dtype>
vector<vector<bool>> Net<Dtype>::FollowersPropagateDown(int head) const {
  const auto first = bottom_need_backward_.begin() + head + 1;
  return vector<vector<bool>>(first, first + fused_followers_[head]);
}

template <typename Dtype>
bool Net<Dtype>::GroupRunsFused(int i, int low, int high) const {
  const int head = fused_head_[i];
  return RunsFused(head) && head >= low && head + fused_followers_[head] <= high;
}

template <typename Dtype>
Dtype Net<Dtype>::ForwardFrom(int start) {
  return ForwardFromTo(start, static_cast<int>(layers_.size()) - 1);
}

template <typename Dtype>
Dtype Net<Dtype>::ForwardTo(int end) {
  return ForwardFromTo(0, end);
}

template <typename Dtype>
const Blobs<Dtype>& Net<Dtype>::Forward(Dtype* loss) {
  Dtype total = ForwardFromTo(0, static_cast<int>(layers_.size()) - 1);
  if (loss != nullptr) *loss = total;
  return net_output_blobs_;
}

template <typename Dtype>
void Net<Dtype>::BackwardFromTo(int start, int end) {
  CHECK_GE(end, 0);
  CHECK_LT(start, static_cast<int>(layers_.size()));
  for (int i = start; i >= end; --i) {
    for (Callback* callback : before_backward_) callback->run(i);
    if (layer_need_backward_[i]) {
      BackwardStep(i, start, end);
      if (debug_info_) BackwardDebugInfo(i);
    }
    for (Callback* callback : after_backward_) callback->run(i);
  }
}

template <typename Dtype>
void Net<Dtype>::BackwardStep(int i, int start, int end) {
  // A fused group runs in its last layer's step, the first of its steps in backward: the
  // group's parameter gradients are all ready after it, as the callbacks expect.
  const int head = fused_head_[i];
  const bool fused = GroupRunsFused(i, end, start) && forward_ran_fused_[head];
  if (fused && i != head + fused_followers_[head]) return;  // runs in the last layer's step
  timeline::Slice slice("backward", layer_names_[i]);
  slice.Arg("type", layers_[i]->type());
  timeline::GpuSlice gpu_slice("backward", layer_names_[i]);
  ScopedFlushDenormals flush_denormals;
  try {
    if (fused) {
      layers_[head]->fusion()->BackwardFused(top_vecs_[head], bottom_need_backward_[head],
                                             bottom_vecs_[head], FollowersPropagateDown(head));
    } else {
      layers_[i]->Backward(top_vecs_[i], bottom_need_backward_[i], bottom_vecs_[i]);
    }
  } catch (const Error& error) {
    throw NamingTheLayer(error, *layers_[fused ? head : i], "backward pass of ");
  }
}

template <typename Dtype>
void Net<Dtype>::BackwardFrom(int start) {
  BackwardFromTo(start, 0);
}

template <typename Dtype>
void Net<Dtype>::BackwardTo(int end) {
  BackwardFromTo(static_cast<int>(layers_.size()) - 1, end);
}

template <typename Dtype>
void Net<Dtype>::Backward() {
  BackwardFromTo(static_cast<int>(layers_.size()) - 1, 0);
  if (debug_info_) {
    Dtype asum_data = 0, asum_diff = 0, sumsq_data = 0, sumsq_diff = 0;
    for (Blob<Dtype>* param : learnable_params_) {
      asum_data += param->asum_data();
      asum_diff += param->asum_diff();
      sumsq_data += param->sumsq_data();
      sumsq_diff += param->sumsq_diff();
    }
    LOG(INFO) << "    [Backward] All net params (data, diff): L1 norm = (" << asum_data << ", "
              << asum_diff << "); L2 norm = (" << std::sqrt(sumsq_data) << ", "
              << std::sqrt(sumsq_diff) << ")";
  }
}

template <typename Dtype>
void Net<Dtype>::Reshape() {
  for (size_t i = 0; i < layers_.size(); ++i) layers_[i]->Reshape(bottom_vecs_[i], top_vecs_[i]);
}

template <typename Dtype>
void Net<Dtype>::SetLossScale(Dtype scale) {
  for (size_t i = 0; i < layers_.size(); ++i) layers_[i]->SetLossScale(scale, top_vecs_[i]);
}

template <typename Dtype>
void Net<Dtype>::ForwardDebugInfo(int layer_id) {
  for (size_t top_id = 0; top_id < top_vecs_[layer_id].size(); ++top_id) {
    const Blob<Dtype>& blob = *top_vecs_[layer_id][top_id];
    const Dtype data_abs_val_mean = blob.asum_data() / std::max(blob.count(), 1);
    LOG_IF(INFO, Caffe::root_solver())
        << "    [Forward] Layer " << layer_names_[layer_id] << ", top blob "
        << blob_names_[top_id_vecs_[layer_id][top_id]] << " data: " << data_abs_val_mean;
  }
  for (size_t param_id = 0; param_id < layers_[layer_id]->blobs().size(); ++param_id) {
    const Blob<Dtype>& blob = *layers_[layer_id]->blobs()[param_id];
    const int net_param_id = param_id_vecs_[layer_id][param_id];
    const Dtype data_abs_val_mean = blob.asum_data() / std::max(blob.count(), 1);
    LOG_IF(INFO, Caffe::root_solver())
        << "    [Forward] Layer " << layer_names_[layer_id] << ", param blob "
        << param_display_names_[net_param_id] << " data: " << data_abs_val_mean;
  }
}

template <typename Dtype>
void Net<Dtype>::BackwardDebugInfo(int layer_id) {
  const Blobs<Dtype>& bottom_vec = bottom_vecs_[layer_id];
  for (size_t bottom_id = 0; bottom_id < bottom_vec.size(); ++bottom_id) {
    if (!bottom_need_backward_[layer_id][bottom_id]) continue;
    const Blob<Dtype>& blob = *bottom_vec[bottom_id];
    const Dtype diff_abs_val_mean = blob.asum_diff() / std::max(blob.count(), 1);
    LOG_IF(INFO, Caffe::root_solver())
        << "    [Backward] Layer " << layer_names_[layer_id] << ", bottom blob "
        << blob_names_[bottom_id_vecs_[layer_id][bottom_id]] << " diff: " << diff_abs_val_mean;
  }
  for (size_t param_id = 0; param_id < layers_[layer_id]->blobs().size(); ++param_id) {
    if (!layers_[layer_id]->param_propagate_down(static_cast<int>(param_id))) continue;
    const Blob<Dtype>& blob = *layers_[layer_id]->blobs()[param_id];
    const Dtype diff_abs_val_mean = blob.asum_diff() / std::max(blob.count(), 1);
    LOG_IF(INFO, Caffe::root_solver())
        << "    [Backward] Layer " << layer_names_[layer_id] << ", param blob " << param_id
        << " diff: " << diff_abs_val_mean;
  }
}

template <typename Dtype>
void Net<Dtype>::UpdateDebugInfo(int param_id) {
  const Blob<Dtype>& blob = *params_[param_id];
  const int param_owner = param_owners_[param_id];
  const string& layer_name = layer_names_[param_layer_indices_[param_id].first];
  const string& param_display_name = param_display_names_[param_id];
  const Dtype diff_abs_val_mean = blob.asum_diff() / std::max(blob.count(), 1);
  if (param_owner < 0) {
    const Dtype data_abs_val_mean = blob.asum_data() / std::max(blob.count(), 1);
    LOG_IF(INFO, Caffe::root_solver())
        << "    [Update] Layer " << layer_name << ", param " << param_display_name
        << " data: " << data_abs_val_mean << "; diff: " << diff_abs_val_mean;
  } else {
    const string& owner_layer_name = layer_names_[param_layer_indices_[param_owner].first];
    LOG_IF(INFO, Caffe::root_solver())
        << "    [Update] Layer " << layer_name << ", param blob " << param_display_name
        << " (owned by layer " << owner_layer_name << ", param "
        << param_display_names_[param_owners_[param_id]] << ")"
        << " diff: " << diff_abs_val_mean;
  }
}

template <typename Dtype>
void Net<Dtype>::Update() {
  if (debug_info_) {
    for (size_t i = 0; i < params_.size(); ++i) UpdateDebugInfo(static_cast<int>(i));
  }
  for (Blob<Dtype>* param : learnable_params_) param->Update();
}

template <typename Dtype>
void Net<Dtype>::ClearParamDiffs() {
  for (Blob<Dtype>* param : learnable_params_) {
#ifndef CPU_ONLY
    // In GPU mode the diffs are cleared where backward accumulates them, not pulled to the host.
    if (Caffe::mode() == Caffe::GPU) {
      if (param->count() > 0) caffe_gpu_set(param->count(), Dtype(0), param->mutable_gpu_diff());
      continue;
    }
#endif
    caffe_set(param->count(), Dtype(0), param->mutable_cpu_diff());
  }
}

template <typename Dtype>
const shared_ptr<Blob<Dtype>> Net<Dtype>::blob_by_name(const string& blob_name) const {
  auto found = blob_names_index_.find(blob_name);
  CAFFE_CHECK(found != blob_names_index_.end())
      << "net '" << name_ << "' has no blob named '" << blob_name << "'";
  return blobs_[found->second];
}

template <typename Dtype>
const shared_ptr<Layer<Dtype>> Net<Dtype>::layer_by_name(const string& layer_name) const {
  auto found = layer_names_index_.find(layer_name);
  CAFFE_CHECK(found != layer_names_index_.end())
      << "net '" << name_ << "' has no layer named '" << layer_name << "'";
  return layers_[found->second];
}

INSTANTIATE_CLASS(Net);

}  // namespace caffe
