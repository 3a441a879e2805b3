// Net's weights: sharing them with another net, copying them from a .caffemodel (binary
// protobuf or HDF5, by layer name, as BVLC does) and writing them out.
#include <string>

#include "caffe/io/hdf5.hpp"
#include "caffe/io/io.hpp"
#include "caffe/io/upgrade_proto.hpp"
#include "caffe/net.hpp"

namespace caffe {

template <typename Dtype>
void Net<Dtype>::CheckCanShareTrainedLayersWith(const Net& other) const {
  for (size_t i = 0; i < other.layers().size(); ++i) {
    const string& layer_name = other.layer_names()[i];
    auto target = layer_names_index_.find(layer_name);
    if (target == layer_names_index_.end()) continue;
    const auto& source_blobs = other.layers()[i]->blobs();
    const auto& target_blobs = layers_[target->second]->blobs();
    size_t mismatch = 0;  // the first blob whose shapes differ
    while (mismatch < target_blobs.size() && mismatch < source_blobs.size() &&
           target_blobs[mismatch]->shape() == source_blobs[mismatch]->shape()) {
      ++mismatch;
    }
    if (mismatch == target_blobs.size() && mismatch == source_blobs.size()) continue;

    // A solver's nets often share one name: their phases tell them apart.
    auto phase_net = [](Phase phase) { return phase == TRAIN ? "the TRAIN net" : "the TEST net"; };
    const bool phases_differ = phase_ != other.phase();
    const string here = phases_differ ? phase_net(phase_) : "this net";
    const string there = phases_differ ? phase_net(other.phase()) : "the other net";
    std::ostringstream message;
    message << here << " '" << name_ << "' cannot share the weights of layer '" << layer_name
            << "' with " << there << " '" << other.name() << "': ";
    if (target_blobs.size() != source_blobs.size()) {
      message << "it has " << target_blobs.size() << " learned blobs in " << here << " and "
              << source_blobs.size() << " in " << there;
    } else {
      message << "learned blob " << mismatch << " is " << target_blobs[mismatch]->shape_string()
              << " in " << here << " and " << source_blobs[mismatch]->shape_string() << " in "
              << there;
    }
    const auto named_here = std::count(layer_names_.begin(), layer_names_.end(), layer_name);
    const auto named_there =
        std::count(other.layer_names().begin(), other.layer_names().end(), layer_name);
    if (named_here > 1 || named_there > 1) {
      message << " (" << (named_here > 1 ? here : there) << " has "
              << std::max(named_here, named_there) << " layers named '" << layer_name << "')";
    } else {
      message << "; a layer of the same name must have the same weights in both nets";
    }
    CAFFE_THROW() << message.str();
  }
}

template <typename Dtype>
void Net<Dtype>::ShareTrainedLayersWith(const Net* other) {
  CheckCanShareTrainedLayersWith(*other);
  for (size_t i = 0; i < other->layers().size(); ++i) {
    auto target = layer_names_index_.find(other->layer_names()[i]);
    if (target == layer_names_index_.end()) continue;
    const auto& source_blobs = other->layers()[i]->blobs();
    const auto& target_blobs = layers_[target->second]->blobs();
    for (size_t j = 0; j < target_blobs.size(); ++j) target_blobs[j]->ShareData(*source_blobs[j]);
  }
}

template <typename Dtype>
int Net<Dtype>::CopyTrainedLayersFrom(const NetParameter& param) {
  int layers_copied = 0;
  for (const LayerParameter& source_layer : param.layer()) {
    const string& source_layer_name = source_layer.name();
    auto target = layer_names_index_.find(source_layer_name);
    if (target == layer_names_index_.end()) {
      LOG(INFO) << "Ignoring source layer " << source_layer_name;
      continue;
    }
    DLOG(INFO) << "Copying source layer " << source_layer_name;
    auto& target_blobs = layers_[target->second]->blobs();
    CAFFE_CHECK_EQ(static_cast<int>(target_blobs.size()), source_layer.blobs_size())
        << "cannot copy weights into layer '" << source_layer_name << "': the net's layer has "
        << target_blobs.size() << " learnable blobs, the weights file has "
        << source_layer.blobs_size();
    for (size_t j = 0; j < target_blobs.size(); ++j) {
      CAFFE_CHECK(target_blobs[j]->ShapeEquals(source_layer.blobs(j)))
          << "cannot copy param " << j << " weights from layer '" << source_layer_name
          << "': shape mismatch; the weights file has "
          << ShapeString(ProtoShape(source_layer.blobs(j))) << ", the net expects "
          << target_blobs[j]->shape_string()
          << ". To learn this layer's parameters from scratch rather than copying from a saved "
             "net, rename the layer.";
      target_blobs[j]->FromProto(source_layer.blobs(j), false);
    }
    if (!target_blobs.empty()) ++layers_copied;
  }
  return layers_copied;
}

namespace {
// Called where a weights file gave none of the net's layers anything: throws unless the net has
// no weights. A caffemodel of another net, or a truncated or foreign file that happens to parse
// (protobuf reads an empty file, and often random bytes, as a NetParameter without layers),
// would otherwise leave the net on its fillers with nothing said.
template <typename Dtype>
void CheckNetTakesNoWeights(const Net<Dtype>& net, const string& filename,
                            const vector<string>& file_layers) {
  vector<string> net_layers;
  for (size_t i = 0; i < net.layers().size(); ++i) {
    if (!net.layers()[i]->blobs().empty()) net_layers.push_back(net.layer_names()[i]);
  }
  if (net_layers.empty()) return;  // nothing to copy into
  CAFFE_THROW() << "weights file '" << filename << "' matches no layer of net '" << net.name()
                << "': its layers with weights are "
                << (file_layers.empty() ? "none" : Join(file_layers, ", ")) << ", the net's are "
                << Join(net_layers, ", ")
                << " (weights are copied by layer name); is it another net's, or not a weights "
                   "file?";
}
}  // namespace

template <typename Dtype>
void Net<Dtype>::CopyTrainedLayersFrom(const string& trained_filename) {
  if (EndsWith(trained_filename, ".h5")) {
    CopyTrainedLayersFromHDF5(trained_filename);
  } else {
    CopyTrainedLayersFromBinaryProto(trained_filename);
  }
}

template <typename Dtype>
void Net<Dtype>::CopyTrainedLayersFromBinaryProto(const string& trained_filename) {
  NetParameter param;
  ReadNetParamsFromBinaryFile(trained_filename, &param);
  if (CopyTrainedLayersFrom(param) > 0) return;
  vector<string> file_layers;
  for (const LayerParameter& layer : param.layer()) {
    if (layer.blobs_size() > 0) file_layers.push_back(layer.name());
  }
  CheckNetTakesNoWeights(*this, trained_filename, file_layers);
}

template <typename Dtype>
void Net<Dtype>::CopyTrainedLayersFromHDF5(const string& trained_filename) {
  Hdf5File file(trained_filename, H5F_ACC_RDONLY);
  CAFFE_CHECK(hdf5_path_exists(file.id(), "data"))
      << "'" << trained_filename << "' has no 'data' group; it is not a Caffe HDF5 weights file";
  int layers_copied = 0;
  for (size_t layer_id = 0; layer_id < layers_.size(); ++layer_id) {
    const string group = "data/" + layer_names_[layer_id];
    if (!hdf5_path_exists(file.id(), group)) continue;
    auto& target_blobs = layers_[layer_id]->blobs();
    if (!target_blobs.empty()) ++layers_copied;
    for (size_t j = 0; j < target_blobs.size(); ++j) {
      const int net_param_id = param_id_vecs_[layer_id][j];
      const string dataset = group + "/" + std::to_string(j);
      if (!hdf5_path_exists(file.id(), dataset)) {
        // Shared params are stored once, under their owner.
        CAFFE_CHECK(param_owners_[net_param_id] != -1)
            << "'" << trained_filename << "' lacks param " << j << " of layer '"
            << layer_names_[layer_id] << "'";
        continue;
      }
      Blob<Dtype>* target = target_blobs[j].get();
      hdf5_load_nd_dataset(file.id(), dataset.c_str(), 0, kMaxBlobAxes, target, false);
    }
  }
  if (layers_copied > 0) return;
  vector<string> file_layers;  // those of its layer groups that hold datasets, for the error
  const hid_t data = H5Gopen2(file.id(), "data", H5P_DEFAULT);
  for (int i = 0; data >= 0 && i < hdf5_get_num_links(data); ++i) {
    const string name = hdf5_get_name_by_idx(data, i);
    const hid_t group = H5Gopen2(data, name.c_str(), H5P_DEFAULT);
    if (group < 0) continue;
    if (hdf5_get_num_links(group) > 0) file_layers.push_back(name);
    H5Gclose(group);
  }
  if (data >= 0) H5Gclose(data);
  CheckNetTakesNoWeights(*this, trained_filename, file_layers);
}

template <typename Dtype>
void Net<Dtype>::ToProto(NetParameter* param, bool write_diff) const {
  param->Clear();
  param->set_name(name_);
  DVLOG(1) << "Serializing " << layers_.size() << " layers";
  for (const auto& layer : layers_) layer->ToProto(param->add_layer(), write_diff);
}

template <typename Dtype>
void Net<Dtype>::ToHDF5(const string& filename, bool write_diff) const {
  Hdf5File file(filename, H5F_ACC_TRUNC);
  hid_t data_hid = hdf5_create_group(file.id(), "data");
  hid_t diff_hid = write_diff ? hdf5_create_group(file.id(), "diff") : -1;
  for (size_t layer_id = 0; layer_id < layers_.size(); ++layer_id) {
    const string& layer_name = layer_names_[layer_id];
    hid_t layer_data_hid = hdf5_create_group(data_hid, layer_name);
    hid_t layer_diff_hid = write_diff ? hdf5_create_group(diff_hid, layer_name) : -1;
    for (size_t param_id = 0; param_id < layers_[layer_id]->blobs().size(); ++param_id) {
      const string dataset_name = std::to_string(param_id);
      const int net_param_id = param_id_vecs_[layer_id][param_id];
      if (param_owners_[net_param_id] == -1) {
        hdf5_save_nd_dataset<Dtype>(layer_data_hid, dataset_name, *params_[net_param_id]);
      }
      if (write_diff) {
        hdf5_save_nd_dataset<Dtype>(layer_diff_hid, dataset_name, *params_[net_param_id], true);
      }
    }
    H5Gclose(layer_data_hid);
    if (write_diff) H5Gclose(layer_diff_hid);
  }
  H5Gclose(data_hid);
  if (write_diff) H5Gclose(diff_hid);
}

// The members defined here, for the types Net is instantiated with (net.cpp).
#define INSTANTIATE_NET_WEIGHTS(Dtype)                                        \
  template void Net<Dtype>::CheckCanShareTrainedLayersWith(const Net&) const; \
  template void Net<Dtype>::ShareTrainedLayersWith(const Net*);               \
  template int Net<Dtype>::CopyTrainedLayersFrom(const NetParameter&);        \
  template void Net<Dtype>::CopyTrainedLayersFrom(const string&);             \
  template void Net<Dtype>::CopyTrainedLayersFromBinaryProto(const string&);  \
  template void Net<Dtype>::CopyTrainedLayersFromHDF5(const string&);         \
  template void Net<Dtype>::ToProto(NetParameter*, bool) const;               \
  template void Net<Dtype>::ToHDF5(const string&, bool) const
INSTANTIATE_NET_WEIGHTS(float);
INSTANTIATE_NET_WEIGHTS(double);

}  // namespace caffe
