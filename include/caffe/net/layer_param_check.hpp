// Which parameter messages each layer type reads. A prototxt that gives a layer a parameter message
// of another type (`pooling_param` on a Convolution layer, a copy-paste left-over) gets a warning
// naming the message, where BVLC silently ignored it and the user wondered why nothing changed.
// It is a warning, not an error, because published nets carry such left-overs (V-Net's Softmax
// has a loss_param) and must still load. Fields a message does not have at all ("tpye") are
// parse errors naming the file, line and column. Net checks the layers of the prototxt; layers
// that create internal layers from copies of their own parameters are not checked.
#ifndef CAFFE_NET_LAYER_PARAM_CHECK_HPP_
#define CAFFE_NET_LAYER_PARAM_CHECK_HPP_

#include <string>
#include <vector>

#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// The LayerParameter message fields (e.g. "convolution_param") a layer of `type` reads, or
/// nullptr for a type this table does not know (such layers are not checked).
const std::vector<std::string>* LayerParamsReadBy(const std::string& type);

/// A one-line description of the *_param messages `param` sets that its type does not read, or
/// "" if there are none (or the type is not in the table).
std::string StrayLayerParams(const LayerParameter& param);

}  // namespace caffe

#endif  // CAFFE_NET_LAYER_PARAM_CHECK_HPP_
