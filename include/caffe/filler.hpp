// Fillers initialise a blob from a FillerParameter: constant, uniform, gaussian (optionally
// sparse), positive_unitball, xavier, msra, bilinear. They draw from the calling thread's
// Caffe::rng(), so a fixed random_seed gives the same initial weights every run.
#ifndef CAFFE_FILLER_HPP_
#define CAFFE_FILLER_HPP_

#include "caffe/blob.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// Fills a blob's data in place.
template <typename Dtype>
class Filler {
 public:
  explicit Filler(const FillerParameter& param) : filler_param_(param) {}
  virtual ~Filler() = default;
  virtual void Fill(Blob<Dtype>* blob) = 0;

 protected:
  FillerParameter filler_param_;
};

/// Every value = value.
template <typename Dtype>
class ConstantFiller : public Filler<Dtype> {
 public:
  using Filler<Dtype>::Filler;
  void Fill(Blob<Dtype>* blob) override;
};

/// Uniform on [min, max].
template <typename Dtype>
class UniformFiller : public Filler<Dtype> {
 public:
  using Filler<Dtype>::Filler;
  void Fill(Blob<Dtype>* blob) override;
};

/// N(mean, std^2); with sparse = s >= 0, each value is kept with probability s / shape(0).
template <typename Dtype>
class GaussianFiller : public Filler<Dtype> {
 public:
  using Filler<Dtype>::Filler;
  void Fill(Blob<Dtype>* blob) override;
};

/// Uniform positive values, each row (count / num values) scaled to sum to 1.
template <typename Dtype>
class PositiveUnitballFiller : public Filler<Dtype> {
 public:
  using Filler<Dtype>::Filler;
  void Fill(Blob<Dtype>* blob) override;
};

/// Glorot & Bengio: uniform on [-sqrt(3/n), sqrt(3/n)], n the fan chosen by variance_norm
/// (fan_in = count / shape(0), fan_out = count / shape(1)).
template <typename Dtype>
class XavierFiller : public Filler<Dtype> {
 public:
  using Filler<Dtype>::Filler;
  void Fill(Blob<Dtype>* blob) override;
};

/// He et al.: N(0, 2/n), n as for XavierFiller.
template <typename Dtype>
class MSRAFiller : public Filler<Dtype> {
 public:
  using Filler<Dtype>::Filler;
  void Fill(Blob<Dtype>* blob) override;
};

/// Bilinear upsampling kernels for Deconvolution (4-D blobs with square spatial dims).
template <typename Dtype>
class BilinearFiller : public Filler<Dtype> {
 public:
  using Filler<Dtype>::Filler;
  void Fill(Blob<Dtype>* blob) override;
};

/// Creates the filler named by param.type(); throws caffe::Error for an unknown type.
template <typename Dtype>
std::unique_ptr<Filler<Dtype>> GetFiller(const FillerParameter& param);

}  // namespace caffe

#endif  // CAFFE_FILLER_HPP_
