#include "caffe/parallel/gradient_order.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace caffe {

template <typename Dtype>
GradientOrder BackwardGradientOrder(const Net<Dtype>& net) {
  const Blobs<Dtype>& learnable = net.learnable_params();
  std::map<const Blob<Dtype>*, int> net_param_index;
  for (size_t k = 0; k < net.params().size(); ++k) net_param_index[net.params()[k].get()] = k;
  std::map<const Blob<Dtype>*, int> learnable_index;
  for (size_t i = 0; i < learnable.size(); ++i) learnable_index[learnable[i]] = i;
  GradientOrder result;
  result.ready.assign(learnable.size(), INT_MAX);
  for (size_t layer = 0; layer < net.layers().size(); ++layer) {
    for (const auto& blob : net.layers()[layer]->blobs()) {
      auto found = net_param_index.find(blob.get());
      if (found == net_param_index.end()) continue;
      const int owner =
          net.param_owners()[found->second] < 0 ? found->second : net.param_owners()[found->second];
      const int index = learnable_index.at(net.params()[owner].get());
      result.ready[index] = std::min(result.ready[index], static_cast<int>(layer));
    }
  }
  result.order.resize(learnable.size());
  std::iota(result.order.begin(), result.order.end(), 0);
  std::stable_sort(result.order.begin(), result.order.end(),
                   [&](int a, int b) { return result.ready[a] > result.ready[b]; });
  return result;
}

template GradientOrder BackwardGradientOrder(const Net<float>& net);
template GradientOrder BackwardGradientOrder(const Net<double>& net);

}  // namespace caffe
