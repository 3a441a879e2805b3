#include "caffe/diagnostics/nonfinite_origin.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

namespace caffe {

namespace {

// How many of a blob's values are not finite, and the largest magnitude among the others.
struct ValueCensus {
  int64_t nonfinite = 0;
  double largest = 0;
};

template <typename Dtype>
ValueCensus CountValues(const Blob<Dtype>& blob) {
  ValueCensus census;
  if (blob.count() == 0) return census;
  const Dtype* data = blob.cpu_data();
  for (int k = 0; k < blob.count(); ++k) {
    if (!std::isfinite(data[k])) {
      ++census.nonfinite;
    } else {
      census.largest = std::max(census.largest, std::abs(static_cast<double>(data[k])));
    }
  }
  return census;
}

// Each learned blob's census, one per layer and param, counted once per blob.
template <typename Dtype>
class WeightCensus {
 public:
  explicit WeightCensus(const Net<Dtype>& net) {
    for (const auto& layer : net.layers()) {
      layers_.emplace_back();
      for (const auto& blob : layer->blobs()) layers_.back().push_back(CountValues(*blob));
    }
  }
  const vector<ValueCensus>& of(int layer) const { return layers_[layer]; }
  bool Finite(int layer) const {
    for (const ValueCensus& census : layers_[layer]) {
      if (census.nonfinite) return false;
    }
    return true;
  }
  double Largest(int layer) const {
    double largest = 0;
    for (const ValueCensus& census : layers_[layer]) largest = std::max(largest, census.largest);
    return largest;
  }

 private:
  vector<vector<ValueCensus>> layers_;
};

// The blobs the loss depends on: those with a loss weight, and every bottom of a layer that
// makes one of them. A net without a loss (a deploy net) depends on all of its blobs.
template <typename Dtype>
vector<bool> BlobsTheLossNeeds(const Net<Dtype>& net) {
  const int num_blobs = static_cast<int>(net.blobs().size());
  vector<bool> needed(num_blobs, false);
  bool any_loss = false;
  for (int b = 0; b < num_blobs; ++b) {
    if (net.blob_loss_weights()[b] != 0) needed[b] = any_loss = true;
  }
  if (!any_loss) return vector<bool>(num_blobs, true);
  for (int i = static_cast<int>(net.layers().size()) - 1; i >= 0; --i) {
    const vector<int>& tops = net.top_ids(i);
    if (std::none_of(tops.begin(), tops.end(), [&](int t) { return needed[t]; })) continue;
    for (int b : net.bottom_ids(i)) needed[b] = true;
  }
  return needed;
}

bool Contains(const vector<int>& ids, int id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

template <typename Dtype>
string LayerLabel(const Net<Dtype>& net, int i) {
  return "'" + net.layer_names()[i] + "' (" + net.layers()[i]->type() + ")";
}

// "param 0: 12 of 500 values, param 1: 1 of 20 values", for the learned blobs not finite.
template <typename Dtype>
string NonFiniteParams(const Net<Dtype>& net, const WeightCensus<Dtype>& weights, int i) {
  std::ostringstream text;
  const vector<ValueCensus>& census = weights.of(i);
  for (size_t p = 0; p < census.size(); ++p) {
    if (!census[p].nonfinite) continue;
    if (text.tellp() > 0) text << ", ";
    text << "param " << p << ": " << census[p].nonfinite << " of "
         << net.layers()[i]->blobs()[p]->count() << " values";
  }
  return text.str();
}

// The other layers whose weights are not finite, in forward order: the first few by name, and
// always the last, the first that backward reaches.
template <typename Dtype>
string OtherNonFiniteLayers(const Net<Dtype>& net, const WeightCensus<Dtype>& weights, int except) {
  const size_t kFirstNamed = 4;
  vector<string> names;
  for (int i = 0; i < static_cast<int>(net.layers().size()); ++i) {
    if (i != except && !weights.Finite(i)) names.push_back("'" + net.layer_names()[i] + "'");
  }
  std::ostringstream text;
  for (size_t k = 0; k < names.size(); ++k) {
    if (k == kFirstNamed && names.size() > kFirstNamed + 2) {
      text << ", " << names.size() - kFirstNamed - 1 << " more";
      k = names.size() - 1;
    }
    text << (k ? ", " : "") << names[k];
  }
  return text.str();
}

}  // namespace

template <typename Dtype>
NonFiniteOrigin FindNonFiniteOrigin(const Net<Dtype>& net) {
  const int num_layers = static_cast<int>(net.layers().size());
  const vector<bool> needed = BlobsTheLossNeeds(net);
  vector<ValueCensus> blobs;
  for (const auto& blob : net.blobs()) blobs.push_back(CountValues(*blob));
  const WeightCensus<Dtype> weights(net);

  NonFiniteOrigin origin;
  int top = -1;  // the blob the origin made
  for (int i = 0; i < num_layers && origin.layer < 0; ++i) {
    const vector<int>& bottoms = net.bottom_ids(i);
    const bool bottoms_finite =
        std::all_of(bottoms.begin(), bottoms.end(), [&](int b) { return blobs[b].nonfinite == 0; });
    if (!bottoms_finite) continue;
    // (An in-place layer's top is a bottom, so a blob written in place is judged at the layer
    // that made it.)
    for (int t : net.top_ids(i)) {
      if (!needed[t] || blobs[t].nonfinite == 0) continue;
      origin.layer = i;
      origin.blob = net.blob_names()[t];
      top = t;
      break;
    }
  }
  if (origin.layer < 0) {
    origin.description = "every blob the loss depends on is finite";
    return origin;
  }

  const int i = origin.layer;
  // The layers whose values the blob holds now: the one that made it, and those after it that
  // wrote it in place.
  vector<int> writers{i};
  for (int j = i + 1; j < num_layers; ++j) {
    if (Contains(net.bottom_ids(j), top) && Contains(net.top_ids(j), top)) writers.push_back(j);
  }
  std::ostringstream text;
  text << (net.bottom_ids(i).empty() ? "the data layer " : "layer ") << LayerLabel(net, i);
  if (writers.size() > 1) {
    text << " (then in place";
    for (size_t k = 1; k < writers.size(); ++k) text << " " << LayerLabel(net, writers[k]);
    text << ")";
  }
  text << " made " << blobs[top].nonfinite << " of " << net.blobs()[top]->count()
       << " values of its top '" << origin.blob << "' non-finite";
  const auto weighted =
      std::find_if(writers.begin(), writers.end(), [&](int j) { return !weights.Finite(j); });
  if (weighted != writers.end()) {
    origin.source = NonFiniteSource::kWeights;
    text << "; the weights of '" << net.layer_names()[*weighted] << "' are not finite ("
         << NonFiniteParams(net, weights, *weighted) << ")";
    const string others = OtherNonFiniteLayers(net, weights, *weighted);
    if (!others.empty()) text << "; so are those of " << others;
  } else if (net.bottom_ids(i).empty()) {
    origin.source = NonFiniteSource::kInputData;
  } else {
    origin.source = NonFiniteSource::kLayer;
    double bottoms_largest = 0;
    for (int b : net.bottom_ids(i)) bottoms_largest = std::max(bottoms_largest, blobs[b].largest);
    double weights_largest = 0;
    for (int j : writers) weights_largest = std::max(weights_largest, weights.Largest(j));
    text << " from finite bottoms (largest magnitude " << bottoms_largest << ")";
    if (weights_largest > 0) {
      text << " and finite weights (largest magnitude " << weights_largest << ")";
    }
    origin.largest_input = std::max(bottoms_largest, weights_largest);
    origin.layer_math = net.layers()[i]->forward_math();
    if (origin.layer_math == BFLOAT16) text << ", computing in bf16";
  }
  for (const auto& layer : net.layers()) {
    origin.bf16_gradients = origin.bf16_gradients || layer->backward_math() == BFLOAT16;
  }
  origin.description = text.str();
  return origin;
}

namespace {

// What to try, for the origin.
std::string NonFiniteAdvice(const NonFiniteOrigin& origin, double base_lr) {
  std::ostringstream lower_lr;
  lower_lr << "lower base_lr (" << base_lr << ") or set clip_gradients";
  // Activations or weights this large are a net diverging, whatever the layer does with them.
  const double kDivergedMagnitude = 1e10;
  switch (origin.source) {
    case NonFiniteSource::kInputData:
      return "The input holds NaN or inf: check the data source.";
    case NonFiniteSource::kWeights:
      if (base_lr <= 0) return "They came with the weights: the training that wrote them diverged.";
      return "An update made them so, from gradients that overflowed or were not finite (backward "
             "reaches the last layer named first): " +
             lower_lr.str() +
             (origin.bf16_gradients
                  ? "; with gradients in 16 bits, dynamic_loss_scale: true in the solver skips "
                    "the steps whose gradients overflow (docs/PRECISION.md)."
                  : ".");
    case NonFiniteSource::kLayer:
      if (origin.layer_math == BFLOAT16) {
        return "In 16 bits: give the layer forward_type: FLOAT and backward_type: FLOAT to "
               "compute it in fp32, and for gradients that overflow or vanish set "
               "dynamic_loss_scale: true in the solver (docs/PRECISION.md).";
      }
      if (origin.largest_input < kDivergedMagnitude) {
        return "The layer's own arithmetic failed on these values (a log of zero or of a "
               "negative value, an exp or power out of range, a division by zero).";
      }
      if (base_lr <= 0) return "Magnitudes this large mean the training diverged.";
      return "Magnitudes this large mean training diverged: " + lower_lr.str() + ".";
    case NonFiniteSource::kNone:
      break;
  }
  return "To find it, set debug_info: true in the solver to see each layer's data and diffs.";
}

}  // namespace

std::string ExplainNonFiniteOrigin(const NonFiniteOrigin& origin, double base_lr) {
  return "where it came from: " + origin.description + ". " + NonFiniteAdvice(origin, base_lr);
}

std::string NonFiniteName(double value) {
  return std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
}

template NonFiniteOrigin FindNonFiniteOrigin<float>(const Net<float>&);
template NonFiniteOrigin FindNonFiniteOrigin<double>(const Net<double>&);

}  // namespace caffe
