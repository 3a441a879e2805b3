// Split insertion: where one top blob feeds several bottoms (or a bottom and the loss), Caffe
// routes it through a Split layer with one top per consumer, so each consumer's gradient lands in
// its own diff and the Split layer sums them. Names follow BVLC: layer "<blob>_<layer>_<top
// index>_split", tops "<blob>_<layer>_<top index>_split_<k>".
#ifndef CAFFE_NET_INSERT_SPLITS_HPP_
#define CAFFE_NET_INSERT_SPLITS_HPP_

#include <string>

#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// Copies `param` to `param_split` with Split layers inserted; throws caffe::Error for a bottom
/// that no earlier layer produces.
void InsertSplits(const NetParameter& param, NetParameter* param_split);

void ConfigureSplitLayer(const std::string& layer_name, const std::string& blob_name, int blob_idx,
                         int split_count, float loss_weight, LayerParameter* split_layer_param);
std::string SplitLayerName(const std::string& layer_name, const std::string& blob_name,
                           int blob_idx);
std::string SplitBlobName(const std::string& layer_name, const std::string& blob_name, int blob_idx,
                          int split_idx);

}  // namespace caffe

#endif  // CAFFE_NET_INSERT_SPLITS_HPP_
