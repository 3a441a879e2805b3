// Net: a directed acyclic graph of layers built from a NetParameter. Init filters the layers by the
// net's phase/level/stages, inserts Split layers where one top feeds several bottoms, creates each
// layer through the registry, wires bottom and top blobs (in-place when a top reuses its bottom's
// name), shares parameters by name, works out which layers need backward, and logs the setup the
// way BVLC Caffe does ("Top shape: ...", "Memory required for data: ...").
#ifndef CAFFE_NET_HPP_
#define CAFFE_NET_HPP_

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/layer.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

class PrecisionPlan;

template <typename Dtype>
class Net {
 public:
  explicit Net(const NetParameter& param);
  /// Reads the prototxt at `param_file` (upgrading old formats) and builds it for `phase`, with
  /// the given level and stages added to its state.
  Net(const string& param_file, Phase phase, int level = 0, const vector<string>* stages = nullptr);
  virtual ~Net() = default;

  void Init(const NetParameter& param);

  /// Runs forward over all layers; returns the output blobs, and the total loss in `loss`.
  const Blobs<Dtype>& Forward(Dtype* loss = nullptr);
  /// Forward over layers [start, end] (inclusive); returns the summed loss.
  Dtype ForwardFromTo(int start, int end);
  /// Layer i's step of a forward over [start, end] (without the callbacks): its Forward; the
  /// group's where i heads a group that runs fused (RunsFused) and the whole group is in range;
  /// nothing where i follows in such a group. Returns the loss. `caffe time` runs its steps
  /// one by one.
  Dtype ForwardStep(int i, int start, int end);
  Dtype ForwardFrom(int start);
  Dtype ForwardTo(int end);
  /// Runs backward over all layers that need it.
  void Backward();
  void BackwardFromTo(int start, int end);
  /// Layer i's step of a backward from `start` down to `end`, as ForwardStep: a fused group
  /// runs in its last layer's step, the others' are empty. Runs even if the layer needs no
  /// backward.
  void BackwardStep(int i, int start, int end);
  void BackwardFrom(int start);
  void BackwardTo(int end);
  /// Re-runs every layer's Reshape (after an input changed shape).
  void Reshape();
  /// Loss scaling: backward starts from the loss weights times `scale` (Layer::SetLossScale), so
  /// every gradient comes out `scale` times larger; the losses Forward returns are unscaled.
  void SetLossScale(Dtype scale);
  Dtype ForwardBackward() {
    Dtype loss;
    Forward(&loss);
    Backward();
    return loss;
  }

  /// Applies the param diffs: data -= diff for every learnable (owned) parameter.
  void Update();
  /// Zeroes the diffs of all learnable parameters.
  void ClearParamDiffs();

  /// Shares the learned blobs (not copies) of same-named layers of `other`, after
  /// CheckCanShareTrainedLayersWith.
  void ShareTrainedLayersWith(const Net* other);
  /// Throws caffe::Error naming the layer, the blob and both nets where a same-named layer of
  /// `other` has a different number of learned blobs or blobs of other shapes: a solver's test
  /// net that does not match its training net, found when the solver is made rather than at
  /// the first test.
  void CheckCanShareTrainedLayersWith(const Net& other) const;
  /// Copies weights from a NetParameter by layer name; layers absent here are ignored, a shape
  /// mismatch throws with the layer, blob index and both shapes. Returns how many layers got
  /// weights.
  int CopyTrainedLayersFrom(const NetParameter& param);
  /// Reads weights from a .caffemodel (binary proto) or .caffemodel.h5 / .h5 (HDF5) file. A file
  /// with weights for none of this net's layers that have any (another net's, or an empty or
  /// mangled file that still parses) throws, naming the layers on both sides.
  void CopyTrainedLayersFrom(const string& trained_filename);
  void CopyTrainedLayersFromBinaryProto(const string& trained_filename);
  void CopyTrainedLayersFromHDF5(const string& trained_filename);
  /// Writes the net (layers and learned blobs) to a proto.
  void ToProto(NetParameter* param, bool write_diff = false) const;
  /// Writes the learned blobs as HDF5 (BVLC's layout: /data/<layer>/<i>, /diff/<layer>/<i>).
  void ToHDF5(const string& filename, bool write_diff = false) const;

  const string& name() const { return name_; }
  const vector<string>& layer_names() const { return layer_names_; }
  const vector<string>& blob_names() const { return blob_names_; }
  const vector<shared_ptr<Blob<Dtype>>>& blobs() const { return blobs_; }
  const vector<shared_ptr<Layer<Dtype>>>& layers() const { return layers_; }
  Phase phase() const { return phase_; }
  const vector<Blobs<Dtype>>& bottom_vecs() const { return bottom_vecs_; }
  const vector<Blobs<Dtype>>& top_vecs() const { return top_vecs_; }
  const vector<int>& top_ids(int i) const { return top_id_vecs_[i]; }
  const vector<int>& bottom_ids(int i) const { return bottom_id_vecs_[i]; }
  const vector<vector<bool>>& bottom_need_backward() const { return bottom_need_backward_; }
  const vector<Dtype>& blob_loss_weights() const { return blob_loss_weights_; }
  const vector<bool>& layer_need_backward() const { return layer_need_backward_; }
  /// All parameter blobs, one per (layer, param) pair; shared params appear once per user.
  const vector<shared_ptr<Blob<Dtype>>>& params() const { return params_; }
  /// The parameters the solver updates: each owned (not shared-from) blob once.
  const Blobs<Dtype>& learnable_params() const { return learnable_params_; }
  const vector<float>& params_lr() const { return params_lr_; }
  const vector<bool>& has_params_lr() const { return has_params_lr_; }
  const vector<float>& params_weight_decay() const { return params_weight_decay_; }
  const vector<bool>& has_params_decay() const { return has_params_decay_; }
  const std::map<string, int>& param_names_index() const { return param_names_index_; }
  /// For each param, -1 if it owns its blob, else the index of the param it shares.
  const vector<int>& param_owners() const { return param_owners_; }
  const vector<string>& param_display_names() const { return param_display_names_; }
  int num_inputs() const { return static_cast<int>(net_input_blobs_.size()); }
  int num_outputs() const { return static_cast<int>(net_output_blobs_.size()); }
  const Blobs<Dtype>& input_blobs() const { return net_input_blobs_; }
  const Blobs<Dtype>& output_blobs() const { return net_output_blobs_; }
  const vector<int>& input_blob_indices() const { return net_input_blob_indices_; }
  const vector<int>& output_blob_indices() const { return net_output_blob_indices_; }
  bool has_blob(const string& blob_name) const { return blob_names_index_.count(blob_name) > 0; }
  /// The blob or layer by name; throws caffe::Error naming the missing one.
  const shared_ptr<Blob<Dtype>> blob_by_name(const string& blob_name) const;
  bool has_layer(const string& layer_name) const {
    return layer_names_index_.count(layer_name) > 0;
  }
  const shared_ptr<Layer<Dtype>> layer_by_name(const string& layer_name) const;
  /// Per-layer debug output (BVLC's debug_info) shows every layer's blobs: groups then run
  /// apart.
  void set_debug_info(bool value) { debug_info_ = value; }

  /// Layers set up to run as one (LayerFusion::FuseWithNext: a BatchNorm, the in-place Scale after
  /// it and the in-place ReLU after that; a sum and its in-place ReLU; on the GPU a cuDNN
  /// convolution and its in-place ReLU): per layer, how many of the layers right after it run
  /// in its passes (0: none, or it follows in a group), and the group's first layer, the head,
  /// for each (the layer itself when alone). RunsFused(i): whether layer i heads a group and the
  /// group runs as one now: in the mode (CPU or GPU) the net was set up in, without debug_info.
  /// ForwardStep and BackwardStep run it as one where the whole group is in range, in its
  /// head's step forward and its last layer's backward (the callbacks of the other steps run
  /// with no work between them); backward as one only after the group's last forward ran as
  /// one (a group's backward may read what only its forward keeps, and the layers' backward
  /// what theirs keep). CAFFE_FUSION=0 in the environment turns it off.
  const vector<int>& fused_followers() const { return fused_followers_; }
  int FusedHead(int i) const { return fused_head_[i]; }
  bool RunsFused(int i) const;
  /// The propagate_down of each follower in the group `head` heads (LayerFusion::BackwardFused).
  vector<vector<bool>> FollowersPropagateDown(int head) const;
  /// "bn, scale and relu": the names of the group `head` heads, for the log.
  string FusedGroupNames(int head) const;

  /// Keeps only the layers whose include/exclude rules match the param's state.
  static void FilterNet(const NetParameter& param, NetParameter* param_filtered);
  /// Whether `state` meets `rule`; logs why not.
  static bool StateMeetsRule(const NetState& state, const NetStateRule& rule,
                             const string& layer_name);

  /// Hooks run around each layer's forward and backward (parallel training uses them to start
  /// gradient reduction as soon as a layer's backward is done).
  class Callback {
   public:
    virtual ~Callback() = default;
    virtual void run(int layer) = 0;
  };
  void add_before_forward(Callback* value) { before_forward_.push_back(value); }
  void add_after_forward(Callback* value) { after_forward_.push_back(value); }
  void add_before_backward(Callback* value) { before_backward_.push_back(value); }
  void add_after_backward(Callback* value) { after_backward_.push_back(value); }

 protected:
  // What Init keeps while it wires the layers together: which blob each name is, and the blobs
  // produced so far that no layer has consumed yet (the net's outputs at the end).
  struct Wiring {
    std::map<string, int> blob_name_to_idx;
    std::set<string> available_blobs;
    std::set<string> learnable_layer_names;
    PrecisionPlan* precision = nullptr;  // float nets: each layer's arithmetic
  };
  // Init's steps. The parameter filtered by the net's state, with split layers inserted and
  // each layer's phase set.
  NetParameter PrepareParameter(const NetParameter& in_param);
  // Creates layer `layer_id`, wires its bottoms and tops, sets it up and adds its params.
  void AddLayer(NetParameter* param, int layer_id, Wiring* wiring);
  // SetUp of layer `layer_id`, with BVLC's log lines of its tops and the memory they take.
  void SetUpLayer(int layer_id);
  // Adds the learnable blobs of layer `layer_id`; whether any of them learns.
  bool AddLayerParams(const NetParameter& param, int layer_id,
                      std::set<string>* learnable_layer_names);
  // Which layers and bottoms need backward: those under a loss, unless propagate_down says no;
  // every one with force_backward.
  void MarkLayersNeedingBackward(bool force_backward);
  void AppendTop(const NetParameter& param, int layer_id, int top_id,
                 std::set<string>* available_blobs, std::map<string, int>* blob_name_to_idx);
  int AppendBottom(const NetParameter& param, int layer_id, int bottom_id,
                   std::set<string>* available_blobs, std::map<string, int>* blob_name_to_idx);
  void AppendParam(const NetParameter& param, int layer_id, int param_id);

  // Asks each layer whether it runs the next ones (CAFFE_FUSION not 0).
  void FuseLayers();
  // Whether layer i's group runs as one now with all its layers in [low, high].
  bool GroupRunsFused(int i, int low, int high) const;
  void ForwardDebugInfo(int layer_id);
  void BackwardDebugInfo(int layer_id);
  void UpdateDebugInfo(int param_id);

  string name_;
  Phase phase_;
  vector<shared_ptr<Layer<Dtype>>> layers_;
  vector<string> layer_names_;
  std::map<string, int> layer_names_index_;
  vector<bool> layer_need_backward_;
  vector<shared_ptr<Blob<Dtype>>> blobs_;
  vector<string> blob_names_;
  std::map<string, int> blob_names_index_;
  vector<bool> blob_need_backward_;
  vector<Blobs<Dtype>> bottom_vecs_;
  vector<vector<int>> bottom_id_vecs_;
  vector<vector<bool>> bottom_need_backward_;
  vector<Blobs<Dtype>> top_vecs_;
  vector<vector<int>> top_id_vecs_;
  vector<Dtype> blob_loss_weights_;
  vector<vector<int>> param_id_vecs_;
  vector<int> param_owners_;
  vector<string> param_display_names_;
  vector<std::pair<int, int>> param_layer_indices_;
  std::map<string, int> param_names_index_;
  vector<int> net_input_blob_indices_;
  vector<int> net_output_blob_indices_;
  Blobs<Dtype> net_input_blobs_;
  Blobs<Dtype> net_output_blobs_;
  vector<shared_ptr<Blob<Dtype>>> params_;
  Blobs<Dtype> learnable_params_;
  vector<int> learnable_param_ids_;  // index into learnable_params_ for each param
  vector<float> params_lr_;
  vector<bool> has_params_lr_;
  vector<float> params_weight_decay_;
  vector<bool> has_params_decay_;
  size_t memory_used_ = 0;
  bool debug_info_ = false;
  vector<int> fused_followers_;          // per layer: the layers after it that run in its passes
  vector<int> fused_head_;               // per layer: its group's first layer (itself when alone)
  Caffe::Brew fused_mode_ = Caffe::CPU;  // the mode the groups were formed in, and run in
  vector<bool> forward_ran_fused_;       // per head: whether its group's last forward was one
  vector<Callback*> before_forward_;
  vector<Callback*> after_forward_;
  vector<Callback*> before_backward_;
  vector<Callback*> after_backward_;

  DISABLE_COPY_AND_ASSIGN(Net);
};

}  // namespace caffe

#endif  // CAFFE_NET_HPP_
