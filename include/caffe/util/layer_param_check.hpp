// Which parameter messages each layer type reads. A prototxt that gives a layer a parameter message
// of another type (`pooling_param` on a Convolution layer, a typo'd copy-paste) is an error naming
// the message, where BVLC silently ignored it and the user wondered why nothing changed. Net checks
// the layers of the prototxt; layers that create internal layers from copies of their own
// parameters (SoftmaxWithLoss's Softmax) are not checked.
#ifndef CAFFE_UTIL_LAYER_PARAM_CHECK_HPP_
#define CAFFE_UTIL_LAYER_PARAM_CHECK_HPP_

#include <string>
#include <vector>

#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// The LayerParameter message fields (e.g. "convolution_param") a layer of `type` reads, or
/// nullptr for a type this table does not know (such layers are not checked).
const std::vector<std::string>* LayerParamsReadBy(const std::string& type);

/// Throws caffe::Error if `param` sets a *_param message its type does not read.
void CheckLayerParamsApply(const LayerParameter& param);

}  // namespace caffe

#endif  // CAFFE_UTIL_LAYER_PARAM_CHECK_HPP_
