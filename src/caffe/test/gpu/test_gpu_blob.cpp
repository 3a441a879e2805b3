// Blob's arithmetic members on the device: in GPU mode Update, asum, sumsq and scale work on the
// device copy when it is current (HEAD_AT_GPU or SYNCED), give the host's results, and leave the
// values on the device; with the head at the CPU, or in CPU mode, they stay on the host. Also
// Net::ClearParamDiffs, which zeroes the diffs on the device in GPU mode. Skips without a GPU.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/net.hpp"
#include "caffe/test/gpu_layer_check.hpp"

namespace caffe {

namespace {

// Several blocks of 512 threads, and not a multiple of any block or warp size.
constexpr int kCount = 1237;

template <typename Dtype>
GpuTolerance ReductionTolerance() {
  // Sums of kCount terms in another order (cuBLAS against the CPU loop).
  GpuTolerance tolerance;
  tolerance.abs = 0;
  tolerance.rel = sizeof(Dtype) == sizeof(float) ? 1e-5 : 1e-12;
  return tolerance;
}

// A blob holding `source`'s data and diff with both heads at the GPU (uploaded through the
// blob's own memory, so this compiles in CPU-only builds, where the tests skip).
template <typename Dtype>
void CopyToDevice(const Blob<Dtype>& source, Blob<Dtype>* target) {
  target->CopyFrom(source, false, true);
  target->CopyFrom(source, true);
  target->mutable_gpu_data();
  target->mutable_gpu_diff();
}

template <typename Dtype>
void ExpectNear(const std::string& what, double cpu, double gpu, const GpuTolerance& tolerance) {
  const double allowed = tolerance.abs + tolerance.rel * std::max(std::fabs(cpu), std::fabs(gpu));
  EXPECT_LE(std::fabs(cpu - gpu), allowed) << what << ": CPU " << cpu << ", GPU " << gpu;
}

}  // namespace

template <typename Dtype>
class GpuBlobTest : public GpuLayerTest<Dtype> {
 protected:
  // `host` holds data and diff on the CPU; `device` the same values with both heads at the GPU.
  void SetUp() override {
    GpuLayerTest<Dtype>::SetUp();
    if (this->IsSkipped()) return;
    host_ = std::make_unique<Blob<Dtype>>(std::vector<int>{kCount});
    device_ = std::make_unique<Blob<Dtype>>(std::vector<int>{kCount});
    FillGaussian(host_.get(), 31);
    Blob<Dtype> diff({kCount});
    FillGaussian(&diff, 32);
    caffe_copy(kCount, diff.cpu_data(), host_->mutable_cpu_diff());
    CopyToDevice(*host_, device_.get());
    ASSERT_EQ(device_->data()->head(), SyncedMemory::HEAD_AT_GPU);
    ASSERT_EQ(device_->diff()->head(), SyncedMemory::HEAD_AT_GPU);
  }

  std::unique_ptr<Blob<Dtype>> host_, device_;
};
TYPED_TEST_SUITE(GpuBlobTest, TestDtypes);

TYPED_TEST(GpuBlobTest, ReductionsRunOnTheDeviceAndMatchTheHost) {
  using Dtype = TypeParam;
  Caffe::set_mode(Caffe::CPU);
  const double asum_data = this->host_->asum_data(), asum_diff = this->host_->asum_diff();
  const double sumsq_data = this->host_->sumsq_data(), sumsq_diff = this->host_->sumsq_diff();
  Caffe::set_mode(Caffe::GPU);
  const GpuTolerance tolerance = ReductionTolerance<Dtype>();
  ExpectNear<Dtype>("asum_data", asum_data, this->device_->asum_data(), tolerance);
  ExpectNear<Dtype>("asum_diff", asum_diff, this->device_->asum_diff(), tolerance);
  ExpectNear<Dtype>("sumsq_data", sumsq_data, this->device_->sumsq_data(), tolerance);
  ExpectNear<Dtype>("sumsq_diff", sumsq_diff, this->device_->sumsq_diff(), tolerance);
  // Nothing was copied to the host for them.
  EXPECT_EQ(this->device_->data()->head(), SyncedMemory::HEAD_AT_GPU);
  EXPECT_EQ(this->device_->diff()->head(), SyncedMemory::HEAD_AT_GPU);
  // SYNCED reads are served by the device too, with the same values.
  this->device_->cpu_data();
  ASSERT_EQ(this->device_->data()->head(), SyncedMemory::SYNCED);
  ExpectNear<Dtype>("asum_data (synced)", asum_data, this->device_->asum_data(), tolerance);
  ExpectNear<Dtype>("sumsq_data (synced)", sumsq_data, this->device_->sumsq_data(), tolerance);
}

TYPED_TEST(GpuBlobTest, ScaleRunsOnTheDeviceAndMatchesTheHost) {
  using Dtype = TypeParam;
  Caffe::set_mode(Caffe::CPU);
  this->host_->scale_data(Dtype(0.37));
  this->host_->scale_diff(Dtype(-2.5));
  Caffe::set_mode(Caffe::GPU);
  this->device_->scale_data(Dtype(0.37));
  this->device_->scale_diff(Dtype(-2.5));
  EXPECT_EQ(this->device_->data()->head(), SyncedMemory::HEAD_AT_GPU);
  EXPECT_EQ(this->device_->diff()->head(), SyncedMemory::HEAD_AT_GPU);
  Caffe::set_mode(Caffe::CPU);
  // One multiplication per value: the results are the same to the last bit.
  const GpuTolerance exact{0, 0};
  gpu_check_detail::ExpectClose("scaled data", kCount, this->host_->cpu_data(),
                                this->device_->cpu_data(), exact);
  gpu_check_detail::ExpectClose("scaled diff", kCount, this->host_->cpu_diff(),
                                this->device_->cpu_diff(), exact);
}

TYPED_TEST(GpuBlobTest, UpdateRunsWhereTheNewestDataIs) {
  using Dtype = TypeParam;
  Caffe::set_mode(Caffe::CPU);
  this->host_->Update();
  const GpuTolerance exact{0, 0};  // data - diff is one rounding on either side

  // Head at the GPU: updated there.
  Caffe::set_mode(Caffe::GPU);
  this->device_->Update();
  EXPECT_EQ(this->device_->data()->head(), SyncedMemory::HEAD_AT_GPU);
  EXPECT_EQ(this->device_->diff()->head(), SyncedMemory::HEAD_AT_GPU);
  Caffe::set_mode(Caffe::CPU);
  gpu_check_detail::ExpectClose("updated (head at GPU)", kCount, this->host_->cpu_data(),
                                this->device_->cpu_data(), exact);

  // SYNCED in GPU mode: updated on the device, as in BVLC, which moves the head there.
  Blob<Dtype> synced({kCount});
  synced.CopyFrom(*this->device_);  // after the update above: the host's updated values
  synced.CopyFrom(*this->device_, true);
  synced.gpu_data();
  synced.gpu_diff();
  ASSERT_EQ(synced.data()->head(), SyncedMemory::SYNCED);
  Caffe::set_mode(Caffe::GPU);
  synced.Update();
  EXPECT_EQ(synced.data()->head(), SyncedMemory::HEAD_AT_GPU);
  Caffe::set_mode(Caffe::CPU);
  this->host_->Update();  // the same second step on the host
  gpu_check_detail::ExpectClose("updated (synced)", kCount, this->host_->cpu_data(),
                                synced.cpu_data(), exact);

  // Head at the CPU in GPU mode: stays on the host.
  Blob<Dtype> on_host({kCount});
  on_host.CopyFrom(*this->host_);
  on_host.CopyFrom(*this->host_, true);
  Caffe::set_mode(Caffe::GPU);
  on_host.Update();
  EXPECT_EQ(on_host.data()->head(), SyncedMemory::HEAD_AT_CPU);
  Caffe::set_mode(Caffe::CPU);
  this->host_->Update();
  gpu_check_detail::ExpectClose("updated (head at CPU)", kCount, this->host_->cpu_data(),
                                on_host.cpu_data(), exact);

  // Head at the GPU in CPU mode: the host does it (CPU mode never launches device work).
  Blob<Dtype> cpu_mode({kCount});
  CopyToDevice(*this->host_, &cpu_mode);
  ASSERT_EQ(cpu_mode.data()->head(), SyncedMemory::HEAD_AT_GPU);
  cpu_mode.Update();
  EXPECT_EQ(cpu_mode.data()->head(), SyncedMemory::HEAD_AT_CPU);
  this->host_->Update();
  gpu_check_detail::ExpectClose("updated (CPU mode)", kCount, this->host_->cpu_data(),
                                cpu_mode.cpu_data(), exact);
}

TYPED_TEST(GpuBlobTest, ClearParamDiffsZeroesTheDiffsOnTheDevice) {
  using Dtype = TypeParam;
  NetParameter param;
  ParseProtoFromText(R"(
      layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 29 } } }
      layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
        inner_product_param { num_output: 47 weight_filler { type: "gaussian" std: 1 } } })",
                     "net", &param);
  Caffe::set_mode(Caffe::CPU);
  Net<Dtype> net(param);
  for (Blob<Dtype>* blob : net.learnable_params()) FillGaussian(blob, 5);  // data only
  for (Blob<Dtype>* blob : net.learnable_params()) {
    caffe_copy(blob->count(), blob->cpu_data(), blob->mutable_cpu_diff());
    blob->gpu_diff();
  }
  Caffe::set_mode(Caffe::GPU);
  net.ClearParamDiffs();
  for (Blob<Dtype>* blob : net.learnable_params()) {
    EXPECT_EQ(blob->diff()->head(), SyncedMemory::HEAD_AT_GPU);
  }
  Caffe::set_mode(Caffe::CPU);
  for (Blob<Dtype>* blob : net.learnable_params()) {
    ASSERT_GT(blob->count(), 0);
    for (int i = 0; i < blob->count(); ++i) {
      ASSERT_EQ(blob->cpu_diff()[i], Dtype(0)) << "param of " << blob->count() << ", value " << i;
    }
  }
}

}  // namespace caffe
