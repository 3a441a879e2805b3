#include "caffe/layers/memory_data_layer.hpp"

namespace caffe {

template <typename Dtype>
void MemoryDataLayer<Dtype>::DataLayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const MemoryDataParameter& param = this->layer_param_.memory_data_param();
  batch_size_ = static_cast<int>(param.batch_size());
  channels_ = static_cast<int>(param.channels());
  height_ = static_cast<int>(param.height());
  width_ = static_cast<int>(param.width());
  LAYER_CHECK(batch_size_ > 0 && channels_ > 0 && height_ > 0 && width_ > 0)
      << "memory_data_param batch_size, channels, height and width must all be set and positive; "
      << "got " << batch_size_ << ", " << channels_ << ", " << height_ << ", " << width_;
  size_ = channels_ * height_ * width_;
  top[0]->Reshape(batch_size_, channels_, height_, width_);
  top[1]->Reshape(vector<int>{batch_size_});
  added_data_.Reshape(batch_size_, channels_, height_, width_);
  added_label_.Reshape(vector<int>{batch_size_});
  data_ = nullptr;
  labels_ = nullptr;
  added_data_.cpu_data();
  added_label_.cpu_data();
}

template <typename Dtype>
void MemoryDataLayer<Dtype>::AddDatumVector(const std::vector<Datum>& datum_vector) {
  LAYER_CHECK(!has_new_data_)
      << "cannot add data until the previously added data has been consumed by Forward";
  const int num = static_cast<int>(datum_vector.size());
  LAYER_CHECK_GT(num, 0) << "AddDatumVector was given no records";
  LAYER_CHECK_EQ(num % batch_size_, 0)
      << "AddDatumVector was given " << num << " records, which is not a multiple of batch_size "
      << batch_size_;
  added_data_.Reshape(num, channels_, height_, width_);
  added_label_.Reshape(num, 1, 1, 1);
  try {
    this->data_transformer_->Transform(datum_vector, &added_data_);
  } catch (const Error& error) {
    LAYER_THROW() << "AddDatumVector: records do not fit memory_data_param (" << channels_ << " x "
                  << height_ << " x " << width_ << "): " << error.what();
  }
  Dtype* label = added_label_.mutable_cpu_data();
  for (int i = 0; i < num; ++i) label[i] = datum_vector[i].label();
  Reset(added_data_.mutable_cpu_data(), label, num);
  has_new_data_ = true;
}

template <typename Dtype>
void MemoryDataLayer<Dtype>::Reset(Dtype* data, Dtype* labels, int n) {
  LAYER_CHECK(data != nullptr) << "Reset was given no data array";
  LAYER_CHECK(labels != nullptr) << "Reset was given no label array";
  LAYER_CHECK(n > 0 && n % batch_size_ == 0)
      << "Reset was given n = " << n << " items; n must be a positive multiple of batch_size "
      << batch_size_;
  // Arrays are generic: transform_param applies to AddDatumVector only.
  if (this->layer_param_.has_transform_param()) {
    LOG(WARNING) << this->type() << " does not transform array data on Reset()";
  }
  data_ = data;
  labels_ = labels;
  n_ = n;
  pos_ = 0;
}

template <typename Dtype>
void MemoryDataLayer<Dtype>::set_batch_size(int new_size) {
  LAYER_CHECK(!has_new_data_)
      << "cannot change batch_size until the added data has been consumed by Forward";
  LAYER_CHECK_GT(new_size, 0) << "batch_size must be positive";
  // Batches must tile the arrays exactly, or a batch would run past their end.
  LAYER_CHECK(data_ == nullptr || n_ % new_size == 0)
      << "cannot set batch_size " << new_size << ": the " << n_
      << " items given to Reset are not a multiple of it";
  batch_size_ = new_size;
  added_data_.Reshape(batch_size_, channels_, height_, width_);
  added_label_.Reshape(batch_size_, 1, 1, 1);
}

template <typename Dtype>
void MemoryDataLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LAYER_CHECK(data_ != nullptr) << "has no data; call Reset (or AddDatumVector) before Forward";
  top[0]->Reshape(batch_size_, channels_, height_, width_);
  top[1]->Reshape(batch_size_, 1, 1, 1);
  top[0]->set_cpu_data(data_ + pos_ * size_);
  top[1]->set_cpu_data(labels_ + pos_);
  pos_ = (pos_ + batch_size_) % n_;
  if (pos_ == 0) has_new_data_ = false;
}

INSTANTIATE_CLASS(MemoryDataLayer);
REGISTER_LAYER_CLASS(MemoryData);

}  // namespace caffe
