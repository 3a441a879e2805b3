// Loading nets and solvers written for older Caffe versions. Each upgrade rewrites the proto in
// memory, logs that it did, and leaves current files untouched (the tools upgrade_net_proto_text,
// upgrade_net_proto_binary and upgrade_solver_proto_text write the upgraded form out):
//   - V0 nets (`layers { layer { type: "conv" } }`, padding layers) -> V1 (upgrade_v0_v1.cpp)
//   - V1 nets (`layers { type: CONVOLUTION }`, blobs_lr, weight_decay) -> `layer` entries
//   - `input:` with `input_shape`/`input_dim` -> an Input layer at the front of the net
//   - data layers' deprecated scale/mean_file/crop_size/mirror -> transform_param
//   - BatchNorm's three param specs -> kept, with lr_mult and decay_mult 0 (as BVLC does)
//   - the solver's `solver_type` enum -> `type` string
#ifndef CAFFE_IO_UPGRADE_PROTO_HPP_
#define CAFFE_IO_UPGRADE_PROTO_HPP_

#include <string>

#include "caffe/proto/caffe.pb.h"

namespace caffe {

bool NetNeedsUpgrade(const NetParameter& net_param);
/// Applies every needed upgrade, in BVLC's order, and returns whether anything changed.
/// `param_file` names the source in log lines and errors. `fully_compatible`, if given, is set to
/// false when a V0/V1 field had no place in the upgraded layer (logged and dropped, as BVLC did).
bool UpgradeNetAsNeeded(const std::string& param_file, NetParameter* param,
                        bool* fully_compatible = nullptr);

// V0 -> V1 -> V2 (upgrade_v0_v1.cpp). Each returns false if a field had to be dropped.
void UpgradeV0PaddingLayers(const NetParameter& param, NetParameter* param_upgraded_pad);
bool UpgradeV0Net(const NetParameter& v0_net_param, NetParameter* net_param);
bool UpgradeV0LayerParameter(const V1LayerParameter& v0_layer_connection,
                             V1LayerParameter* layer_param);
V1LayerParameter_LayerType UpgradeV0LayerType(const std::string& type);
bool UpgradeV1Net(const NetParameter& v1_net_param, NetParameter* net_param);
bool UpgradeV1LayerParameter(const V1LayerParameter& v1_layer_param, LayerParameter* layer_param);
const char* UpgradeV1LayerType(V1LayerParameter_LayerType type);

bool NetNeedsV0ToV1Upgrade(const NetParameter& net_param);
bool NetNeedsV1ToV2Upgrade(const NetParameter& net_param);
bool NetNeedsDataUpgrade(const NetParameter& net_param);
void UpgradeNetDataTransformation(NetParameter* net_param);
bool NetNeedsInputUpgrade(const NetParameter& net_param);
void UpgradeNetInput(NetParameter* net_param);
bool NetNeedsBatchNormUpgrade(const NetParameter& net_param);
void UpgradeNetBatchNorm(NetParameter* net_param);

bool SolverNeedsTypeUpgrade(const SolverParameter& solver_param);
void UpgradeSolverType(SolverParameter* solver_param);
bool UpgradeSolverAsNeeded(const std::string& param_file, SolverParameter* param);

/// Read (and upgrade) a net or solver; throw caffe::Error naming the file on any problem.
void ReadNetParamsFromTextFile(const std::string& param_file, NetParameter* param);
void ReadNetParamsFromBinaryFile(const std::string& param_file, NetParameter* param);
void ReadSolverParamsFromTextFile(const std::string& param_file, SolverParameter* param);

}  // namespace caffe

#endif  // CAFFE_IO_UPGRADE_PROTO_HPP_
