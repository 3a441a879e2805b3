#include "caffe/net/diff_sharing.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>

namespace caffe {

std::vector<int> PlanDiffSharing(const std::vector<DiffSpan>& spans) {
  const int count = static_cast<int>(spans.size());
  std::vector<int> owner(count);
  std::iota(owner.begin(), owner.end(), 0);
  std::vector<int> order;
  for (int i = 0; i < count; ++i) {
    if (spans[i].shareable && spans[i].bytes > 0) order.push_back(i);
  }
  // Backward meets the spans by their last layer, latest first.
  std::stable_sort(order.begin(), order.end(),
                   [&spans](int a, int b) { return spans[a].last > spans[b].last; });
  // Per size, each buffer's owner and the first layer of the span that holds it now.
  struct Buffer {
    int owner;
    int held_from;
  };
  std::map<size_t, std::vector<Buffer>> buffers;
  for (int i : order) {
    std::vector<Buffer>& same_size = buffers[spans[i].bytes];
    auto free = std::find_if(same_size.begin(), same_size.end(), [&](const Buffer& buffer) {
      return buffer.held_from > spans[i].last;
    });
    if (free == same_size.end()) {
      same_size.push_back({i, spans[i].first});
    } else {
      owner[i] = free->owner;
      free->held_from = spans[i].first;
    }
  }
  return owner;
}

template <typename Dtype>
std::vector<DiffSpan> DiffSpans(const Net<Dtype>& net) {
  std::vector<DiffSpan> spans(net.blobs().size());
  for (size_t b = 0; b < spans.size(); ++b) {
    spans[b].bytes = net.blobs()[b]->count() * sizeof(Dtype);
    spans[b].shareable = net.blob_loss_weights().size() <= b || net.blob_loss_weights()[b] == 0;
  }
  std::vector<bool> read(spans.size(), false);
  std::vector<bool> rewritten_last(spans.size(), false);
  for (int layer = 0; layer < static_cast<int>(net.layers().size()); ++layer) {
    const bool python = std::strcmp(net.layers()[layer]->type(), "Python") == 0;
    const std::vector<int>& bottoms = net.bottom_ids(layer);
    const std::vector<int>& tops = net.top_ids(layer);
    // A fused group's backward reads and writes its layers' gradients in one step, so each of
    // its blobs is taken to span the whole group.
    const int group_first = net.FusedHead(layer);
    const int group_last = group_first + net.fused_followers()[group_first];
    for (size_t k = 0; k < bottoms.size(); ++k) {
      DiffSpan& span = spans[bottoms[k]];
      span.last = std::max(span.last, group_last);
      read[bottoms[k]] = true;
      rewritten_last[bottoms[k]] = std::find(tops.begin(), tops.end(), bottoms[k]) == tops.end();
      if (!net.layer_need_backward()[layer] || !net.bottom_need_backward()[layer][k] || python) {
        span.shareable = false;
      }
    }
    for (int top : tops) {
      DiffSpan& span = spans[top];
      if (span.first < 0) span.first = group_first;
      span.last = std::max(span.last, group_last);
      if (python) span.shareable = false;
      if (std::find(bottoms.begin(), bottoms.end(), top) == bottoms.end()) {
        rewritten_last[top] = false;  // a top only: nothing after it writes its gradient yet
      }
    }
  }
  // A diff that a layer made an alias of another (Flatten, Reshape, a Parameter layer's top, a
  // single-bottom Concat or Slice) is used over both spans, and re-made so at every Reshape.
  std::map<const SyncedMemory*, int> users;
  for (const auto& blob : net.blobs()) ++users[blob->diff().get()];
  for (const auto& param : net.params()) ++users[param->diff().get()];
  for (size_t b = 0; b < spans.size(); ++b) {
    const bool alias = users[net.blobs()[b]->diff().get()] > 1;
    if (!read[b] || !rewritten_last[b] || alias) {
      spans[b].shareable = false;
    }
  }
  return spans;
}

template <typename Dtype>
DiffSharing ShareActivationDiffs(Net<Dtype>* net) {
  const std::vector<DiffSpan> spans = DiffSpans(*net);
  const std::vector<int> owner = PlanDiffSharing(spans);
  DiffSharing sharing;
  int shared = 0;
  for (size_t b = 0; b < spans.size(); ++b) {
    if (!spans[b].shareable) continue;
    sharing.bytes_before += spans[b].bytes;
    if (owner[b] == static_cast<int>(b)) {
      sharing.bytes_after += spans[b].bytes;
    } else {
      net->blobs()[b]->ShareDiff(*net->blobs()[owner[b]]);
      ++shared;
    }
  }
  LOG_IF(INFO, Caffe::root_solver())
      << "Activation gradients share memory: " << shared << " of " << spans.size()
      << " blobs use another's diff; " << sharing.bytes_after << " bytes instead of "
      << sharing.bytes_before << " (CAFFE_SHARE_DIFFS=0 keeps one diff per blob)";
  return sharing;
}

template std::vector<DiffSpan> DiffSpans(const Net<float>& net);
template std::vector<DiffSpan> DiffSpans(const Net<double>& net);
template DiffSharing ShareActivationDiffs(Net<float>* net);
template DiffSharing ShareActivationDiffs(Net<double>* net);

}  // namespace caffe
