// Legend as in spp_layer.hpp: N images, C channels, H/W input size, L levels, b bins per side.
#include "caffe/layers/spp_layer.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "caffe/layers/concat_layer.hpp"
#include "caffe/layers/flatten_layer.hpp"
#include "caffe/layers/pooling_layer.hpp"
#include "caffe/layers/split_layer.hpp"

namespace caffe {

template <typename Dtype>
void SPPLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const SPPParameter& param = this->layer_param_.spp_param();
  LAYER_CHECK(param.has_pyramid_height()) << "spp_param.pyramid_height must be given";
  LAYER_CHECK_GE(param.pyramid_height(), 1u) << "spp_param.pyramid_height must be >= 1";
  LAYER_CHECK_LE(param.pyramid_height(), 16u)
      << "spp_param.pyramid_height must be <= 16 (level l has 4^l bins per channel)";
  LAYER_CHECK(param.pool() == SPPParameter_PoolMethod_MAX ||
              param.pool() == SPPParameter_PoolMethod_AVE)
      << "spp_param.pool must be MAX or AVE (STOCHASTIC pooling is not supported on the CPU)";
  pyramid_height_ = static_cast<int>(param.pyramid_height());
  built_shape_.clear();
}

template <typename Dtype>
LayerParameter SPPLayer<Dtype>::PoolingParam(int level, int height, int width) const {
  const int bins = 1 << level;
  // The smallest kernel whose `bins` windows cover the input; the shortfall is split into
  // padding on both sides (rounding up), as BVLC does.
  const int kernel_h = static_cast<int>(std::ceil(height / static_cast<double>(bins)));
  const int kernel_w = static_cast<int>(std::ceil(width / static_cast<double>(bins)));
  const int pad_h = (kernel_h * bins - height + 1) / 2;
  const int pad_w = (kernel_w * bins - width + 1) / 2;
  LAYER_CHECK(pad_h < kernel_h && pad_w < kernel_w)
      << "bottom[0] (height " << height << ", width " << width << ") is too small for pyramid "
      << "level " << level << " (" << bins << " x " << bins << " bins): it needs pad (" << pad_h
      << ", " << pad_w << ") smaller than the kernel (" << kernel_h << ", " << kernel_w
      << "); reduce spp_param.pyramid_height";
  LayerParameter param;
  param.set_name(this->layer_param_.name() + "/pool" + std::to_string(level));
  param.set_type("Pooling");
  PoolingParameter* pooling = param.mutable_pooling_param();
  pooling->set_kernel_h(kernel_h);
  pooling->set_kernel_w(kernel_w);
  pooling->set_stride_h(kernel_h);
  pooling->set_stride_w(kernel_w);
  pooling->set_pad_h(pad_h);
  pooling->set_pad_w(pad_w);
  pooling->set_pool(this->layer_param_.spp_param().pool() == SPPParameter_PoolMethod_MAX
                        ? PoolingParameter_PoolMethod_MAX
                        : PoolingParameter_PoolMethod_AVE);
  return param;
}

template <typename Dtype>
void SPPLayer<Dtype>::BuildPyramid(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int height = bottom[0]->shape(2);
  const int width = bottom[0]->shape(3);
  pooling_layers_.clear();
  flatten_layers_.clear();
  split_tops_.clear();
  pooled_.clear();
  flattened_.clear();
  split_top_vec_.clear();
  concat_bottom_vec_.clear();
  split_layer_.reset();
  concat_layer_.reset();
  if (pyramid_height_ == 1) {
    // One level: the pooling writes the top directly, unflattened (BVLC's shape).
    pooling_layers_.push_back(
        std::make_shared<PoolingLayer<Dtype>>(PoolingParam(0, height, width)));
    pooling_layers_[0]->SetUp(bottom, top);
    return;
  }
  const string& name = this->layer_param_.name();
  for (int level = 0; level < pyramid_height_; ++level) {
    split_tops_.push_back(std::make_unique<Blob<Dtype>>());
    split_top_vec_.push_back(split_tops_.back().get());
  }
  LayerParameter split_param;
  split_param.set_name(name + "/split");
  split_layer_ = std::make_shared<SplitLayer<Dtype>>(split_param);
  split_layer_->SetUp(bottom, split_top_vec_);
  for (int level = 0; level < pyramid_height_; ++level) {
    pooled_.push_back(std::make_unique<Blob<Dtype>>());
    flattened_.push_back(std::make_unique<Blob<Dtype>>());
    pooling_layers_.push_back(
        std::make_shared<PoolingLayer<Dtype>>(PoolingParam(level, height, width)));
    pooling_layers_[level]->SetUp({split_tops_[level].get()}, {pooled_[level].get()});
    LayerParameter flatten_param;
    flatten_param.set_name(name + "/flatten" + std::to_string(level));
    flatten_layers_.push_back(std::make_shared<FlattenLayer<Dtype>>(flatten_param));
    flatten_layers_[level]->SetUp({pooled_[level].get()}, {flattened_[level].get()});
    concat_bottom_vec_.push_back(flattened_[level].get());
  }
  LayerParameter concat_param;
  concat_param.set_name(name + "/concat");
  concat_layer_ = std::make_shared<ConcatLayer<Dtype>>(concat_param);
  concat_layer_->SetUp(concat_bottom_vec_, top);
}

template <typename Dtype>
void SPPLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LAYER_CHECK_EQ(bottom[0]->num_axes(), 4)
      << "bottom[0] " << bottom[0]->shape_string() << " must be 4-D (N, C, H, W)";
  LAYER_CHECK(bottom[0]->shape(2) > 0 && bottom[0]->shape(3) > 0)
      << "bottom[0] " << bottom[0]->shape_string() << " has an empty spatial extent";
  if (bottom[0]->shape() != built_shape_) {
    BuildPyramid(bottom, top);
    built_shape_ = bottom[0]->shape();
    return;
  }
  if (pyramid_height_ == 1) {
    pooling_layers_[0]->Reshape(bottom, top);
    return;
  }
  split_layer_->Reshape(bottom, split_top_vec_);
  for (int level = 0; level < pyramid_height_; ++level) {
    pooling_layers_[level]->Reshape({split_tops_[level].get()}, {pooled_[level].get()});
    flatten_layers_[level]->Reshape({pooled_[level].get()}, {flattened_[level].get()});
  }
  concat_layer_->Reshape(concat_bottom_vec_, top);
}

template <typename Dtype>
void SPPLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  if (pyramid_height_ == 1) {
    pooling_layers_[0]->Forward(bottom, top);
    return;
  }
  split_layer_->Forward(bottom, split_top_vec_);
  for (int level = 0; level < pyramid_height_; ++level) {
    pooling_layers_[level]->Forward({split_tops_[level].get()}, {pooled_[level].get()});
    flatten_layers_[level]->Forward({pooled_[level].get()}, {flattened_[level].get()});
  }
  concat_layer_->Forward(concat_bottom_vec_, top);
}

template <typename Dtype>
void SPPLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                   const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  if (pyramid_height_ == 1) {
    pooling_layers_[0]->Backward(top, propagate_down, bottom);
    return;
  }
  concat_layer_->Backward(top, vector<bool>(pyramid_height_, true), concat_bottom_vec_);
  for (int level = 0; level < pyramid_height_; ++level) {
    flatten_layers_[level]->Backward({flattened_[level].get()}, {true}, {pooled_[level].get()});
    pooling_layers_[level]->Backward({pooled_[level].get()}, {true}, {split_tops_[level].get()});
  }
  split_layer_->Backward(split_top_vec_, propagate_down, bottom);
}

template <typename Dtype>
bool SPPLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                       const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                       MemoryUses* uses) const {
  const bool forward = pass == Pass::kForward;
  if (!forward && !propagate_down[0]) return true;  // backward does nothing
  if (pyramid_height_ == 1) {
    return pooling_layers_[0]->DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  }
  bool declared = true;
  auto declare = [&](const Layer<Dtype>& layer, const Blobs<Dtype>& layer_bottom,
                     const Blobs<Dtype>& layer_top, const vector<bool>& down) {
    declared = layer.DeclareMemoryUse(pass, layer_bottom, layer_top, down, uses) && declared;
  };
  // Level l's pooling (split top -> pooled) and flatten (pooled -> flattened).
  const vector<bool> one_down{true};
  auto pool = [&](int level) {
    declare(*pooling_layers_[level], {split_tops_[level].get()}, {pooled_[level].get()}, one_down);
  };
  auto flatten = [&](int level) {
    declare(*flatten_layers_[level], {pooled_[level].get()}, {flattened_[level].get()}, one_down);
  };
  if (forward) {
    declare(*split_layer_, bottom, split_top_vec_, {});
    for (int level = 0; level < pyramid_height_; ++level) {
      pool(level);
      flatten(level);
    }
    declare(*concat_layer_, concat_bottom_vec_, top, {});
  } else {
    declare(*concat_layer_, concat_bottom_vec_, top, vector<bool>(pyramid_height_, true));
    for (int level = 0; level < pyramid_height_; ++level) {
      flatten(level);
      pool(level);
    }
    declare(*split_layer_, bottom, split_top_vec_, propagate_down);
  }
  return declared;
}

INSTANTIATE_CLASS(SPPLayer);
REGISTER_LAYER_CLASS(SPP);

}  // namespace caffe
