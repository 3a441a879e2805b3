#include "caffe/layers/crop_layer.hpp"

#include <vector>

namespace caffe {

template <typename Dtype>
void CropLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const CropParameter& param = this->layer_param_.crop_param();
  const int num_axes = bottom[0]->num_axes();
  LAYER_CHECK_EQ(num_axes, bottom[1]->num_axes())
      << "bottom[0] " << bottom[0]->shape_string() << " and the reference bottom[1] "
      << bottom[1]->shape_string() << " must have the same number of axes";
  LAYER_CHECK(param.axis() >= -num_axes && param.axis() < num_axes)
      << "crop_param.axis is " << param.axis() << ", but bottom[0] " << bottom[0]->shape_string()
      << " has " << num_axes << " axes; must be in [" << -num_axes << ", " << num_axes << ")";
  const int start_axis = bottom[0]->CanonicalAxisIndex(param.axis());
  if (param.offset_size() > 1) {
    LAYER_CHECK_EQ(param.offset_size(), num_axes - start_axis)
        << "crop_param.offset must be given once, or once per cropped axis (axes " << start_axis
        << " to " << num_axes - 1 << " of bottom[0] " << bottom[0]->shape_string() << ")";
  }
}

template <typename Dtype>
void CropLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const CropParameter& param = this->layer_param_.crop_param();
  const int num_axes = bottom[0]->num_axes();
  LAYER_CHECK_EQ(num_axes, bottom[1]->num_axes())
      << "bottom[0] " << bottom[0]->shape_string() << " and the reference bottom[1] "
      << bottom[1]->shape_string() << " must have the same number of axes";
  const int start_axis = bottom[0]->CanonicalAxisIndex(param.axis());
  std::vector<int> top_shape = bottom[0]->shape();
  offsets_.assign(num_axes, 0);
  for (int axis = start_axis; axis < num_axes; ++axis) {
    int offset = 0;
    if (param.offset_size() == 1) {
      offset = static_cast<int>(param.offset(0));
    } else if (param.offset_size() > 1) {
      offset = static_cast<int>(param.offset(axis - start_axis));
    }
    LAYER_CHECK_LE(offset + bottom[1]->shape(axis), bottom[0]->shape(axis))
        << "the crop of axis " << axis << " (offset " << offset << " + size "
        << bottom[1]->shape(axis) << " from bottom[1] " << bottom[1]->shape_string()
        << ") does not fit in bottom[0] " << bottom[0]->shape_string();
    top_shape[axis] = bottom[1]->shape(axis);
    offsets_[axis] = offset;
  }
  top[0]->Reshape(top_shape);
}

template <typename Dtype>
template <typename Copy>
void CropLayer<Dtype>::ForEachRow(const Blob<Dtype>& bottom, const Blob<Dtype>& top,
                                  Copy copy) const {
  const int num_axes = top.num_axes();
  if (top.count() == 0) return;
  if (num_axes == 0) {
    copy(0, 0, 1);
    return;
  }
  const int row = top.shape(num_axes - 1);
  const int rows = top.count() / row;
  // Walk the top's rows with an index over the leading axes, tracking the bottom's offset.
  std::vector<int> index(num_axes - 1, 0);
  for (int r = 0; r < rows; ++r) {
    int bottom_offset = 0;
    for (int axis = 0; axis < num_axes; ++axis) {
      const int position = (axis < num_axes - 1 ? index[axis] : 0) + offsets_[axis];
      bottom_offset = bottom_offset * bottom.shape(axis) + position;
    }
    copy(bottom_offset, r * row, row);
    for (int axis = num_axes - 2; axis >= 0; --axis) {
      if (++index[axis] < top.shape(axis)) break;
      index[axis] = 0;
    }
  }
}

template <typename Dtype>
void CropLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  ForEachRow(*bottom[0], *top[0], [=](int bottom_offset, int top_offset, int length) {
    caffe_copy(length, bottom_data + bottom_offset, top_data + top_offset);
  });
}

template <typename Dtype>
void CropLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                    const Blobs<Dtype>& bottom) {
  if (propagate_down[1]) {
    // The reference contributes only its shape.
    caffe_set(bottom[1]->count(), Dtype(0), bottom[1]->mutable_cpu_diff());
  }
  if (!propagate_down[0]) return;
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  caffe_set(bottom[0]->count(), Dtype(0), bottom_diff);
  ForEachRow(*bottom[0], *top[0], [=](int bottom_offset, int top_offset, int length) {
    caffe_copy(length, top_diff + top_offset, bottom_diff + bottom_offset);
  });
}

INSTANTIATE_CLASS(CropLayer);
REGISTER_LAYER_CLASS(Crop);

}  // namespace caffe
