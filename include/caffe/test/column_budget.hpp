// Lowers BaseConvolutionLayer's budget of column values for one scope, so that Convolution and
// Deconvolution convolve each image in tiles of output lines, as they do images too large for
// one column buffer.
#ifndef CAFFE_TEST_COLUMN_BUDGET_HPP_
#define CAFFE_TEST_COLUMN_BUDGET_HPP_

#include "caffe/layers/base_conv_layer.hpp"

namespace caffe {

template <typename Dtype>
class ColumnBudget {
 public:
  explicit ColumnBudget(long values)
      : saved_(BaseConvolutionLayer<Dtype>::max_image_column_values()) {
    BaseConvolutionLayer<Dtype>::set_max_image_column_values(values);
  }
  ~ColumnBudget() { BaseConvolutionLayer<Dtype>::set_max_image_column_values(saved_); }
  ColumnBudget(const ColumnBudget&) = delete;
  ColumnBudget& operator=(const ColumnBudget&) = delete;

 private:
  long saved_;
};

}  // namespace caffe

#endif  // CAFFE_TEST_COLUMN_BUDGET_HPP_
