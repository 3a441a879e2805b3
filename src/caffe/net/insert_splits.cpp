#include "caffe/net/insert_splits.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <utility>

#include "caffe/common.hpp"

namespace caffe {

using BlobIndex = std::pair<int, int>;  // (layer, top or bottom position)

void InsertSplits(const NetParameter& param, NetParameter* param_split) {
  param_split->CopyFrom(param);
  param_split->clear_layer();
  std::map<string, BlobIndex> blob_name_to_last_top;
  std::map<BlobIndex, BlobIndex> bottom_to_source_top;
  std::map<BlobIndex, int> top_consumer_count;
  std::map<BlobIndex, float> top_loss_weight;
  std::map<BlobIndex, int> top_next_split_index;
  for (int i = 0; i < param.layer_size(); ++i) {
    const LayerParameter& layer_param = param.layer(i);
    for (int j = 0; j < layer_param.bottom_size(); ++j) {
      const string& blob_name = layer_param.bottom(j);
      auto source = blob_name_to_last_top.find(blob_name);
      CAFFE_CHECK(source != blob_name_to_last_top.end())
          << "unknown bottom blob '" << blob_name << "' (layer '" << layer_param.name()
          << "', bottom index " << j << "): no earlier layer produces it";
      bottom_to_source_top[{i, j}] = source->second;
      ++top_consumer_count[source->second];
    }
    for (int j = 0; j < layer_param.top_size(); ++j) {
      blob_name_to_last_top[layer_param.top(j)] = {i, j};
    }
    // A top used as a loss counts as one more consumer.
    const int last_loss = std::min(layer_param.loss_weight_size(), layer_param.top_size());
    for (int j = 0; j < last_loss; ++j) {
      const BlobIndex& top = blob_name_to_last_top[layer_param.top(j)];
      top_loss_weight[top] = layer_param.loss_weight(j);
      if (top_loss_weight[top]) ++top_consumer_count[top];
    }
  }
  for (int i = 0; i < param.layer_size(); ++i) {
    LayerParameter* layer_param = param_split->add_layer();
    layer_param->CopyFrom(param.layer(i));
    for (int j = 0; j < layer_param->bottom_size(); ++j) {
      const BlobIndex& top = bottom_to_source_top[{i, j}];
      if (top_consumer_count[top] > 1) {
        const string& producer = param.layer(top.first).name();
        layer_param->set_bottom(j, SplitBlobName(producer, layer_param->bottom(j), top.second,
                                                 top_next_split_index[top]++));
      }
    }
    for (int j = 0; j < layer_param->top_size(); ++j) {
      const BlobIndex top{i, j};
      const int split_count = top_consumer_count[top];
      if (split_count > 1) {
        const float loss_weight = top_loss_weight[top];
        ConfigureSplitLayer(layer_param->name(), layer_param->top(j), j, split_count, loss_weight,
                            param_split->add_layer());
        if (loss_weight) {
          // The loss moves to the split's first top.
          layer_param->clear_loss_weight();
          top_next_split_index[top]++;
        }
      }
    }
  }
}

void ConfigureSplitLayer(const string& layer_name, const string& blob_name, int blob_idx,
                         int split_count, float loss_weight, LayerParameter* split_layer_param) {
  split_layer_param->Clear();
  split_layer_param->add_bottom(blob_name);
  split_layer_param->set_name(SplitLayerName(layer_name, blob_name, blob_idx));
  split_layer_param->set_type("Split");
  for (int k = 0; k < split_count; ++k) {
    split_layer_param->add_top(SplitBlobName(layer_name, blob_name, blob_idx, k));
    if (loss_weight) split_layer_param->add_loss_weight(k == 0 ? loss_weight : 0);
  }
}

string SplitLayerName(const string& layer_name, const string& blob_name, int blob_idx) {
  std::ostringstream name;
  name << blob_name << "_" << layer_name << "_" << blob_idx << "_split";
  return name.str();
}

string SplitBlobName(const string& layer_name, const string& blob_name, int blob_idx,
                     int split_idx) {
  std::ostringstream name;
  name << blob_name << "_" << layer_name << "_" << blob_idx << "_split_" << split_idx;
  return name.str();
}

}  // namespace caffe
