#include "caffe/filler.hpp"

#include <cmath>

#include "caffe/kernels/math_functions.hpp"

namespace caffe {

namespace {

// The fan the variance of xavier and msra is normalised by.
template <typename Dtype>
Dtype VarianceNormFan(const Blob<Dtype>& blob, const FillerParameter& param) {
  CAFFE_CHECK_GE(blob.num_axes(), 1) << param.type() << " filler needs a blob with axes";
  CAFFE_CHECK_GT(blob.count(), 0) << param.type() << " filler got an empty blob";
  Dtype fan_in = static_cast<Dtype>(blob.count()) / blob.shape(0);
  Dtype fan_out = blob.num_axes() > 1 ? static_cast<Dtype>(blob.count()) / blob.shape(1)
                                      : static_cast<Dtype>(blob.count());
  switch (param.variance_norm()) {
    case FillerParameter_VarianceNorm_AVERAGE:
      return (fan_in + fan_out) / Dtype(2);
    case FillerParameter_VarianceNorm_FAN_OUT:
      return fan_out;
    case FillerParameter_VarianceNorm_FAN_IN:
      break;
  }
  return fan_in;
}

template <typename Dtype>
void CheckNotSparse(const FillerParameter& param) {
  CAFFE_CHECK_EQ(param.sparse(), -1)
      << "sparse is only supported by the gaussian filler, not " << param.type();
}

}  // namespace

template <typename Dtype>
void ConstantFiller<Dtype>::Fill(Blob<Dtype>* blob) {
  CheckNotSparse<Dtype>(this->filler_param_);
  caffe_set(blob->count(), static_cast<Dtype>(this->filler_param_.value()),
            blob->mutable_cpu_data());
}

template <typename Dtype>
void UniformFiller<Dtype>::Fill(Blob<Dtype>* blob) {
  CheckNotSparse<Dtype>(this->filler_param_);
  CAFFE_CHECK_LE(this->filler_param_.min(), this->filler_param_.max())
      << "uniform filler: min must not exceed max";
  caffe_rng_uniform<Dtype>(blob->count(), this->filler_param_.min(), this->filler_param_.max(),
                           blob->mutable_cpu_data());
}

template <typename Dtype>
void GaussianFiller<Dtype>::Fill(Blob<Dtype>* blob) {
  Dtype* data = blob->mutable_cpu_data();
  CAFFE_CHECK_GT(this->filler_param_.std(), 0) << "gaussian filler: std must be positive";
  caffe_rng_gaussian<Dtype>(blob->count(), this->filler_param_.mean(), this->filler_param_.std(),
                            data);
  int sparse = this->filler_param_.sparse();
  CAFFE_CHECK_GE(sparse, -1) << "gaussian filler: sparse must be -1 (off) or >= 0";
  if (sparse >= 0) {
    // Keep each weight with probability sparse / num_outputs, so each output sees `sparse`
    // non-zero inputs on average.
    CAFFE_CHECK_GE(blob->num_axes(), 1) << "sparse gaussian filler needs a blob with axes";
    const int num_outputs = blob->shape(0);
    Dtype non_zero_probability = Dtype(sparse) / Dtype(num_outputs);
    CAFFE_CHECK_LE(non_zero_probability, Dtype(1))
        << "gaussian filler: sparse " << sparse << " exceeds the " << num_outputs << " outputs";
    vector<int> mask(blob->count());
    caffe_rng_bernoulli(blob->count(), non_zero_probability, mask.data());
    for (int i = 0; i < blob->count(); ++i) data[i] *= mask[i];
  }
}

template <typename Dtype>
void PositiveUnitballFiller<Dtype>::Fill(Blob<Dtype>* blob) {
  CheckNotSparse<Dtype>(this->filler_param_);
  Dtype* data = blob->mutable_cpu_data();
  caffe_rng_uniform<Dtype>(blob->count(), 0, 1, data);
  const int num = blob->shape(0);
  const int dim = blob->count() / num;
  for (int i = 0; i < num; ++i) {
    Dtype sum = 0;
    for (int j = 0; j < dim; ++j) sum += data[i * dim + j];
    for (int j = 0; j < dim; ++j) data[i * dim + j] /= sum;
  }
}

template <typename Dtype>
void XavierFiller<Dtype>::Fill(Blob<Dtype>* blob) {
  CheckNotSparse<Dtype>(this->filler_param_);
  Dtype n = VarianceNormFan(*blob, this->filler_param_);
  Dtype scale = std::sqrt(Dtype(3) / n);
  caffe_rng_uniform<Dtype>(blob->count(), -scale, scale, blob->mutable_cpu_data());
}

template <typename Dtype>
void MSRAFiller<Dtype>::Fill(Blob<Dtype>* blob) {
  CheckNotSparse<Dtype>(this->filler_param_);
  Dtype n = VarianceNormFan(*blob, this->filler_param_);
  Dtype std = std::sqrt(Dtype(2) / n);
  caffe_rng_gaussian<Dtype>(blob->count(), Dtype(0), std, blob->mutable_cpu_data());
}

template <typename Dtype>
void BilinearFiller<Dtype>::Fill(Blob<Dtype>* blob) {
  CheckNotSparse<Dtype>(this->filler_param_);
  CAFFE_CHECK_EQ(blob->num_axes(), 4)
      << "bilinear filler needs a 4-D blob, got " << blob->shape_string();
  CAFFE_CHECK_EQ(blob->width(), blob->height())
      << "bilinear filler needs square kernels, got " << blob->shape_string();
  Dtype* data = blob->mutable_cpu_data();
  int f = static_cast<int>(std::ceil(blob->width() / 2.0));
  // The kernel's centre, (k - 1) / 2, in units of f (as in BVLC's current filler; the older
  // (2f - 1 - f % 2) / 2f agrees only for k = 2f - f % 2 and is lopsided for k = 3, 7, 11, ...).
  Dtype c = Dtype(blob->width() - 1) / (2.0 * f);
  for (int i = 0; i < blob->count(); ++i) {
    Dtype x = i % blob->width();
    Dtype y = (i / blob->width()) % blob->height();
    data[i] = (1 - std::fabs(x / f - c)) * (1 - std::fabs(y / f - c));
  }
}

template <typename Dtype>
std::unique_ptr<Filler<Dtype>> GetFiller(const FillerParameter& param) {
  const string& type = param.type();
  if (type == "constant") return std::make_unique<ConstantFiller<Dtype>>(param);
  if (type == "uniform") return std::make_unique<UniformFiller<Dtype>>(param);
  if (type == "gaussian") return std::make_unique<GaussianFiller<Dtype>>(param);
  if (type == "positive_unitball") return std::make_unique<PositiveUnitballFiller<Dtype>>(param);
  if (type == "xavier") return std::make_unique<XavierFiller<Dtype>>(param);
  if (type == "msra") return std::make_unique<MSRAFiller<Dtype>>(param);
  if (type == "bilinear") return std::make_unique<BilinearFiller<Dtype>>(param);
  CAFFE_THROW() << "unknown filler type \"" << type
                << "\"; known: constant, uniform, gaussian, positive_unitball, xavier, msra, "
                   "bilinear";
}

INSTANTIATE_CLASS(ConstantFiller);
INSTANTIATE_CLASS(UniformFiller);
INSTANTIATE_CLASS(GaussianFiller);
INSTANTIATE_CLASS(PositiveUnitballFiller);
INSTANTIATE_CLASS(XavierFiller);
INSTANTIATE_CLASS(MSRAFiller);
INSTANTIATE_CLASS(BilinearFiller);
template std::unique_ptr<Filler<float>> GetFiller<float>(const FillerParameter&);
template std::unique_ptr<Filler<double>> GetFiller<double>(const FillerParameter&);

}  // namespace caffe
