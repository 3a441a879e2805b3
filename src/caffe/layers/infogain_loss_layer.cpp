#include "caffe/layers/infogain_loss_layer.hpp"

#include <algorithm>
#include <cmath>

#include "caffe/io/io.hpp"

namespace caffe {

namespace {
// BVLC's kLOG_THRESHOLD: the smallest probability whose log is taken (a float, as in BVLC).
constexpr float kLogThreshold = 1e-20f;
}  // namespace

template <typename Dtype>
void InfogainLossLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LossLayer<Dtype>::LayerSetUp(bottom, top);
  // The inner softmax runs over our axis (its engine from our softmax_param). It gets none of
  // our other parameters: no loss weights (its one top is not a loss), no loss or infogain
  // parameters (a Softmax layer rejects them).
  LayerParameter softmax_param;
  softmax_param.set_name(this->layer_param_.name());
  softmax_param.set_type("Softmax");
  softmax_param.set_phase(this->layer_param_.phase());
  *softmax_param.mutable_softmax_param() = this->layer_param_.softmax_param();
  softmax_param.mutable_softmax_param()->set_axis(this->layer_param_.infogain_loss_param().axis());
  softmax_layer_ = LayerRegistry<Dtype>::CreateLayer(softmax_param);
  softmax_bottom_vec_ = {bottom[0]};
  softmax_top_vec_ = {&prob_};
  softmax_layer_->SetUp(softmax_bottom_vec_, softmax_top_vec_);

  const LossParameter& loss_param = this->layer_param_.loss_param();
  has_ignore_label_ = loss_param.has_ignore_label();
  if (has_ignore_label_) ignore_label_ = loss_param.ignore_label();
  LAYER_CHECK(!loss_param.has_normalize())
      << "loss_param.normalize is deprecated and not accepted by this layer; use "
         "loss_param.normalization (VALID, FULL, BATCH_SIZE or NONE)";
  normalization_ = loss_param.normalization();

  if (bottom.size() < 3) {
    const InfogainLossParameter& param = this->layer_param_.infogain_loss_param();
    LAYER_CHECK(param.has_source())
        << "the infogain matrix H must be given, either as bottom[2] or as a BlobProto file in "
           "infogain_loss_param.source";
    BlobProto blob_proto;
    try {
      ReadProtoFromBinaryFile(param.source(), &blob_proto);
      infogain_.FromProto(blob_proto);
    } catch (const Error& error) {
      LAYER_THROW() << "cannot read the infogain matrix from infogain_loss_param.source '"
                    << param.source() << "': " << error.what();
    }
  }
}

template <typename Dtype>
void InfogainLossLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  // Follow bottom[0] even when a caller passes a different blob than it gave SetUp.
  softmax_bottom_vec_[0] = bottom[0];
  softmax_layer_->Reshape(softmax_bottom_vec_, softmax_top_vec_);
  infogain_axis_ = bottom[0]->CanonicalAxisIndex(this->layer_param_.infogain_loss_param().axis());
  outer_num_ = bottom[0]->count(0, infogain_axis_);
  num_labels_ = bottom[0]->shape(infogain_axis_);
  inner_num_ = bottom[0]->count(infogain_axis_ + 1);
  LAYER_CHECK_EQ(outer_num_ * inner_num_, bottom[1]->count())
      << "needs one label per prediction: bottom[0] " << bottom[0]->shape_string()
      << " with infogain axis " << infogain_axis_ << " makes " << outer_num_ * inner_num_
      << " predictions, but bottom[1] " << bottom[1]->shape_string() << " holds "
      << bottom[1]->count() << " labels";
  const Blob<Dtype>& infogain = InfogainMatrix(bottom);
  LAYER_CHECK_EQ(infogain.count(), num_labels_ * num_labels_)
      << "the infogain matrix H must be " << num_labels_ << " x " << num_labels_ << " for the "
      << num_labels_ << " classes of bottom[0] " << bottom[0]->shape_string() << "; "
      << (bottom.size() >= 3
              ? string("bottom[2]")
              : "the matrix in '" + this->layer_param_.infogain_loss_param().source() + "'")
      << " has shape " << infogain.shape_string() << " (" << infogain.count() << " values)";
  sum_rows_H_.Reshape(vector<int>{num_labels_});
  // A matrix from the file never changes; one from bottom[2] is summed again in every backward.
  if (bottom.size() < 3) SumRowsOfH(infogain);
  if (top.size() >= 2) top[1]->ReshapeLike(*bottom[0]);
}

template <typename Dtype>
void InfogainLossLayer<Dtype>::SumRowsOfH(const Blob<Dtype>& infogain) {
  const Dtype* infogain_mat = infogain.cpu_data();
  Dtype* sum = sum_rows_H_.mutable_cpu_data();
  for (int row = 0; row < num_labels_; ++row) {
    sum[row] = 0;
    for (int col = 0; col < num_labels_; ++col) sum[row] += infogain_mat[row * num_labels_ + col];
  }
}

template <typename Dtype>
void InfogainLossLayer<Dtype>::CheckLabel(int label_value, int position) const {
  LAYER_CHECK(label_value >= 0 && label_value < num_labels_)
      << "label " << label_value << " at position " << position << " of bottom[1] is out of range; "
      << "labels must be in [0, " << num_labels_ << ") for " << num_labels_ << " classes"
      << (has_ignore_label_ ? "" : " (or set loss_param.ignore_label)");
}

template <typename Dtype>
void InfogainLossLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  softmax_layer_->Forward(softmax_bottom_vec_, softmax_top_vec_);
  const Dtype* prob_data = prob_.cpu_data();
  const Dtype* label = bottom[1]->cpu_data();
  const Dtype* infogain_mat = InfogainMatrix(bottom).cpu_data();
  const int dim = num_labels_ * inner_num_;
  int valid_count = 0;
  Dtype loss = 0;
  for (int o = 0; o < outer_num_; ++o) {
    for (int i = 0; i < inner_num_; ++i) {
      const int position = o * inner_num_ + i;
      const int label_value = static_cast<int>(label[position]);
      if (has_ignore_label_ && label_value == ignore_label_) continue;
      CheckLabel(label_value, position);
      for (int k = 0; k < num_labels_; ++k) {
        loss -= infogain_mat[label_value * num_labels_ + k] *
                std::log(std::max(prob_data[o * dim + k * inner_num_ + i], Dtype(kLogThreshold)));
      }
      ++valid_count;
    }
  }
  top[0]->mutable_cpu_data()[0] =
      loss / LossLayer<Dtype>::GetNormalizer(normalization_, outer_num_, inner_num_, valid_count);
  if (top.size() == 2) top[1]->ShareData(prob_);
}

template <typename Dtype>
void InfogainLossLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top,
                                            const vector<bool>& propagate_down,
                                            const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[1]) << "cannot backpropagate to the labels (bottom[1])";
  LAYER_CHECK(propagate_down.size() < 3 || !propagate_down[2])
      << "cannot backpropagate to the infogain matrix (bottom[2])";
  if (!propagate_down[0]) return;
  const Blob<Dtype>& infogain = InfogainMatrix(bottom);
  if (bottom.size() >= 3) SumRowsOfH(infogain);
  const Dtype* prob_data = prob_.cpu_data();
  const Dtype* label = bottom[1]->cpu_data();
  const Dtype* infogain_mat = infogain.cpu_data();
  const Dtype* sum_rows_H = sum_rows_H_.cpu_data();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int dim = num_labels_ * inner_num_;
  int valid_count = 0;
  for (int o = 0; o < outer_num_; ++o) {
    for (int i = 0; i < inner_num_; ++i) {
      const int position = o * inner_num_ + i;
      const int label_value = static_cast<int>(label[position]);
      if (has_ignore_label_ && label_value == ignore_label_) {
        for (int k = 0; k < num_labels_; ++k) bottom_diff[o * dim + k * inner_num_ + i] = 0;
        continue;
      }
      CheckLabel(label_value, position);
      for (int k = 0; k < num_labels_; ++k) {
        const int index = o * dim + k * inner_num_ + i;
        bottom_diff[index] = prob_data[index] * sum_rows_H[label_value] -
                             infogain_mat[label_value * num_labels_ + k];
      }
      ++valid_count;
    }
  }
  const Dtype scale =
      top[0]->cpu_diff()[0] /
      LossLayer<Dtype>::GetNormalizer(normalization_, outer_num_, inner_num_, valid_count);
  caffe_scal(bottom[0]->count(), scale, bottom_diff);
}

INSTANTIATE_CLASS(InfogainLossLayer);
REGISTER_LAYER_CLASS(InfogainLoss);

}  // namespace caffe
