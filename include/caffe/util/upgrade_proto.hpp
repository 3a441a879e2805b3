// Loading nets and solvers written for older Caffe versions. Each upgrade rewrites the proto in
// memory, logs that it did, and leaves current files untouched:
//   - `input:` with `input_shape`/`input_dim` -> an Input layer at the front of the net
//   - data layers' deprecated scale/mean_file/crop_size/mirror -> transform_param
//   - BatchNorm's three param specs -> kept, with lr_mult and decay_mult 0 (as BVLC does)
//   - the solver's `solver_type` enum -> `type` string
// V0 (`layers { layer { type: "conv" } }`) and V1 (`layers { type: CONVOLUTION }`) nets are detected
// and rejected with a clear message until their upgrade path lands.
#ifndef CAFFE_UTIL_UPGRADE_PROTO_HPP_
#define CAFFE_UTIL_UPGRADE_PROTO_HPP_

#include <string>

#include "caffe/proto/caffe.pb.h"

namespace caffe {

bool NetNeedsUpgrade(const NetParameter& net_param);
/// Applies every needed upgrade; `param_file` names the source in log lines and errors.
bool UpgradeNetAsNeeded(const std::string& param_file, NetParameter* param);

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

#endif  // CAFFE_UTIL_UPGRADE_PROTO_HPP_
