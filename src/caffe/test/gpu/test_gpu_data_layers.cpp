// Data layers in GPU mode: a prefetching Data layer over a small LMDB written here hands each
// batch to its tops on the device (both tops current there after Forward) with exactly the values
// of a CPU-mode layer built from the same seed, random crops and mirrors included, across the
// wrap-around of the source. Switching modes between batches and writing a top in place on the
// device does not disturb later batches. Skips without a GPU.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "caffe/layer_factory.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/util/db.hpp"

namespace caffe {

namespace {

// Records are C x H x W = 3 x 5 x 7; record i has label i and value (7 i + j) % 256 at index j.
constexpr int kRecords = 7, kChannels = 3, kHeight = 5, kWidth = 7;
constexpr int kRecordSize = kChannels * kHeight * kWidth;
// 5 batches of 3 from 7 records: the source wraps around twice.
constexpr int kBatchSize = 3, kBatches = 5;

void WriteLMDB(const std::string& source) {
  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  database->Open(source, db::NEW);
  std::unique_ptr<db::Transaction> txn = database->NewTransaction();
  for (int i = 0; i < kRecords; ++i) {
    Datum datum;
    datum.set_channels(kChannels);
    datum.set_height(kHeight);
    datum.set_width(kWidth);
    datum.set_label(i);
    std::string data(kRecordSize, '\0');
    for (int j = 0; j < kRecordSize; ++j) data[j] = static_cast<char>((7 * i + j) % 256);
    datum.set_data(data);
    char key[16];
    snprintf(key, sizeof(key), "%08d", i);
    txn->Put(key, datum.SerializeAsString());
  }
  txn->Commit();
}

// A blob's values as the device holds them, read without touching the host side. (CPU-only
// builds compile the tests but skip them.)
template <typename Dtype>
std::vector<Dtype> DeviceValues(const Blob<Dtype>& blob) {
  std::vector<Dtype> values(blob.count());
#ifndef CPU_ONLY
  caffe_gpu_memcpy(blob.count() * sizeof(Dtype), blob.gpu_data(), values.data());
#else
  ADD_FAILURE() << "no device in a CPU-only build";
#endif
  return values;
}

// What an in-place layer on the device does to its top: x *= factor, on the device.
template <typename Dtype>
void ScaleOnDevice(Blob<Dtype>* blob, Dtype factor) {
#ifndef CPU_ONLY
  caffe_gpu_scal(blob->count(), factor, blob->mutable_gpu_data());
#else
  ADD_FAILURE() << "no device in a CPU-only build";
#endif
}

template <typename Dtype>
std::vector<Dtype> HostValues(const Blob<Dtype>& blob) {
  return std::vector<Dtype>(blob.cpu_data(), blob.cpu_data() + blob.count());
}

}  // namespace

template <typename Dtype>
class GpuDataLayerTest : public GpuLayerTest<Dtype> {
 protected:
  void SetUp() override {
    GpuLayerTest<Dtype>::SetUp();
    if (this->IsSkipped()) return;
    source_ = MakeTempDir("gpu_data_layer") + "/lmdb";
    WriteLMDB(source_);
  }

  // A Data layer set up in `mode` on the tops (data_, label_) or the given ones; the same seed
  // gives the same batches, crops and mirrors.
  std::shared_ptr<Layer<Dtype>> MakeLayer(Caffe::Brew mode, const std::string& transform,
                                          const Blobs<Dtype>& top) {
    Caffe::set_mode(mode);
    Caffe::set_random_seed(1701);
    const LayerParameter param = ParseLayerParam(
        "name: 'data' type: 'Data' top: 'data' top: 'label' data_param { source: '" + source_ +
        "' backend: LMDB batch_size: " + std::to_string(kBatchSize) + " } transform_param { " +
        transform + " }");
    std::shared_ptr<Layer<Dtype>> layer = LayerRegistry<Dtype>::CreateLayer(param);
    layer->SetUp({}, top);
    return layer;
  }

  // kBatches batches of a CPU-mode layer: data then labels, per batch.
  std::vector<std::vector<Dtype>> CpuBatches(const std::string& transform) {
    Blob<Dtype> data, label;
    const Blobs<Dtype> top{&data, &label};
    std::shared_ptr<Layer<Dtype>> layer = MakeLayer(Caffe::CPU, transform, top);
    std::vector<std::vector<Dtype>> batches;
    for (int batch = 0; batch < kBatches; ++batch) {
      layer->Forward({}, top);
      std::vector<Dtype> values = HostValues(data);
      const std::vector<Dtype> labels = HostValues(label);
      values.insert(values.end(), labels.begin(), labels.end());
      batches.push_back(values);
    }
    return batches;
  }

  std::string source_;
};
TYPED_TEST_SUITE(GpuDataLayerTest, TestDtypes);

TYPED_TEST(GpuDataLayerTest, TopsHoldTheBatchOnTheDevice) {
  using Dtype = TypeParam;
  const std::string transform = "scale: 0.25 mean_value: 10 crop_size: 4 mirror: true";
  const std::vector<std::vector<Dtype>> expected = this->CpuBatches(transform);

  Blob<Dtype> data, label;
  const Blobs<Dtype> top{&data, &label};
  std::shared_ptr<Layer<Dtype>> layer = this->MakeLayer(Caffe::GPU, transform, top);
  for (int batch = 0; batch < kBatches; ++batch) {
    Caffe::set_mode(Caffe::GPU);
    layer->Forward({}, top);
    ASSERT_EQ(data.shape(), (std::vector<int>{kBatchSize, kChannels, 4, 4}));
    ASSERT_EQ(label.shape(), (std::vector<int>{kBatchSize}));
    // Both sides current: the next layer reads the device copy without another transfer.
    EXPECT_EQ(data.data()->head(), SyncedMemory::SYNCED) << "batch " << batch;
    EXPECT_EQ(label.data()->head(), SyncedMemory::SYNCED) << "batch " << batch;
    std::vector<Dtype> values = DeviceValues(data);
    const std::vector<Dtype> labels = DeviceValues(label);
    values.insert(values.end(), labels.begin(), labels.end());
    // The same transform of the same bytes: identical, not merely close.
    EXPECT_EQ(values, expected[batch]) << "batch " << batch;
  }
  Caffe::set_mode(Caffe::CPU);
}

// The batches cross to the device every iteration: in GPU mode their host memory is pinned, so
// the copy runs at the link's full speed; in CPU mode it is ordinary memory.
TYPED_TEST(GpuDataLayerTest, BatchesArePinnedInGpuModeOnly) {
#ifndef CPU_ONLY
  for (Caffe::Brew mode : {Caffe::GPU, Caffe::CPU}) {
    Blob<TypeParam> data, label;
    const Blobs<TypeParam> top{&data, &label};
    std::shared_ptr<Layer<TypeParam>> layer = this->MakeLayer(mode, "", top);
    layer->Forward({}, top);
    for (const Blob<TypeParam>* blob : top) {
      cudaPointerAttributes attributes;
      ASSERT_EQ(cudaPointerGetAttributes(&attributes, blob->cpu_data()), cudaSuccess);
      EXPECT_EQ(attributes.type, mode == Caffe::GPU ? cudaMemoryTypeHost
                                                    : cudaMemoryTypeUnregistered)
          << (mode == Caffe::GPU ? "GPU" : "CPU") << " mode";
    }
  }
  Caffe::set_mode(Caffe::CPU);
#endif
}

TYPED_TEST(GpuDataLayerTest, ModeSwitchesAndInPlaceDeviceWritesKeepLaterBatchesIntact) {
  using Dtype = TypeParam;
  const std::string transform = "scale: 0.5 mean_value: 3";
  const std::vector<std::vector<Dtype>> expected = this->CpuBatches(transform);

  Blob<Dtype> data, label;
  const Blobs<Dtype> top{&data, &label};
  std::shared_ptr<Layer<Dtype>> layer = this->MakeLayer(Caffe::CPU, transform, top);
  const int data_count = kBatchSize * kRecordSize;
  for (int batch = 0; batch < kBatches; ++batch) {
    // CPU, GPU, CPU, ... : the tops' host side must never be left pointing at a batch the
    // prefetch thread is refilling.
    const bool on_gpu = batch % 2 == 1;
    Caffe::set_mode(on_gpu ? Caffe::GPU : Caffe::CPU);
    layer->Forward({}, top);
    std::vector<Dtype> values = on_gpu ? DeviceValues(data) : HostValues(data);
    const std::vector<Dtype> labels = on_gpu ? DeviceValues(label) : HostValues(label);
    values.insert(values.end(), labels.begin(), labels.end());
    EXPECT_EQ(values, expected[batch]) << "batch " << batch;
    if (on_gpu) {
      // An in-place layer writing the data top on the device, then a host reader: the values
      // come home into memory the layer still holds.
      ScaleOnDevice(&data, Dtype(2));
      const std::vector<Dtype> doubled = HostValues(data);
      ASSERT_EQ(static_cast<int>(doubled.size()), data_count);
      for (int i = 0; i < data_count; ++i) {
        ASSERT_EQ(doubled[i], 2 * expected[batch][i]) << "batch " << batch << " value " << i;
      }
    }
  }
  Caffe::set_mode(Caffe::CPU);
}

}  // namespace caffe
