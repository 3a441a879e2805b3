// Data layers in GPU mode: a prefetching Data layer over a small LMDB written here hands each
// batch to its tops on the device (the device side current after Forward; the prefetch thread
// put the batch there) with exactly the values of a CPU-mode layer built from the same seed,
// random crops and mirrors included, across the wrap-around of the source. Batches that outgrow
// their room on the device (records of any size, batch_size 1) arrive intact too. Switching
// modes between batches and writing a top in place on the device does not disturb later
// batches, whichever mode the layer was set up in. Skips without a GPU.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "caffe/layer_factory.hpp"
#include "caffe/layers/base_data_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/io/db.hpp"

namespace caffe {

namespace {

// Records are C x H x W = 3 x 5 x 7; record i has label i and value (7 i + j) % 256 at index j.
// With `varied_heights`, record i is 5 + i % 3 high instead.
constexpr int kRecords = 7, kChannels = 3, kHeight = 5, kWidth = 7;
constexpr int kRecordSize = kChannels * kHeight * kWidth;
// 5 batches of 3 from 7 records: the source wraps around twice.
constexpr int kBatchSize = 3, kBatches = 5;

void WriteLMDB(const std::string& source, bool varied_heights) {
  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  database->Open(source, db::NEW);
  std::unique_ptr<db::Transaction> txn = database->NewTransaction();
  for (int i = 0; i < kRecords; ++i) {
    const int height = varied_heights ? kHeight + i % 3 : kHeight;
    const int size = kChannels * height * kWidth;
    Datum datum;
    datum.set_channels(kChannels);
    datum.set_height(height);
    datum.set_width(kWidth);
    datum.set_label(i);
    std::string data(size, '\0');
    for (int j = 0; j < size; ++j) data[j] = static_cast<char>((7 * i + j) % 256);
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

// How many of `layer`'s GPU-mode Forwards took a batch the prefetch thread had put on the device.
template <typename Dtype>
uint64_t BatchesFromDevice(const std::shared_ptr<Layer<Dtype>>& layer) {
  auto* prefetching = dynamic_cast<BasePrefetchingDataLayer<Dtype>*>(layer.get());
  EXPECT_NE(prefetching, nullptr);
  return prefetching ? prefetching->batches_from_device() : 0;
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
    const std::string dir = MakeTempDir("gpu_data_layer");
    source_ = dir + "/lmdb";
    WriteLMDB(source_, false);
    varied_source_ = dir + "/varied_lmdb";
    WriteLMDB(varied_source_, true);
  }

  // A Data layer set up in `mode` on the given tops, reading batches of `batch_size` from
  // `source` (default: source_); the same seed gives the same batches, crops and mirrors.
  std::shared_ptr<Layer<Dtype>> MakeLayer(Caffe::Brew mode, const std::string& transform,
                                          const Blobs<Dtype>& top, int batch_size = kBatchSize,
                                          const std::string& source = "") {
    Caffe::set_mode(mode);
    Caffe::set_random_seed(1701);
    const LayerParameter param = ParseLayerParam(
        "name: 'data' type: 'Data' top: 'data' top: 'label' data_param { source: '" +
        (source.empty() ? source_ : source) + "' backend: LMDB batch_size: " +
        std::to_string(batch_size) + " } transform_param { " + transform + " }");
    std::shared_ptr<Layer<Dtype>> layer = LayerRegistry<Dtype>::CreateLayer(param);
    layer->SetUp({}, top);
    return layer;
  }

  // `count` batches of a CPU-mode layer: data then labels, per batch.
  std::vector<std::vector<Dtype>> CpuBatches(const std::string& transform,
                                             int batch_size = kBatchSize,
                                             const std::string& source = "",
                                             int count = kBatches) {
    Blob<Dtype> data, label;
    const Blobs<Dtype> top{&data, &label};
    std::shared_ptr<Layer<Dtype>> layer =
        MakeLayer(Caffe::CPU, transform, top, batch_size, source);
    std::vector<std::vector<Dtype>> batches;
    for (int batch = 0; batch < count; ++batch) {
      layer->Forward({}, top);
      std::vector<Dtype> values = HostValues(data);
      const std::vector<Dtype> labels = HostValues(label);
      values.insert(values.end(), labels.begin(), labels.end());
      batches.push_back(values);
    }
    return batches;
  }

  std::string source_, varied_source_;
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
    // The device side is the current one: the next layer reads it without another transfer.
    EXPECT_EQ(data.data()->head(), SyncedMemory::HEAD_AT_GPU) << "batch " << batch;
    EXPECT_EQ(label.data()->head(), SyncedMemory::HEAD_AT_GPU) << "batch " << batch;
    std::vector<Dtype> values = DeviceValues(data);
    const std::vector<Dtype> labels = DeviceValues(label);
    values.insert(values.end(), labels.begin(), labels.end());
    // The same transform of the same bytes: identical, not merely close.
    EXPECT_EQ(values, expected[batch]) << "batch " << batch;
    // Read on the host, the batch comes home into the tops' own memory.
    std::vector<Dtype> host = HostValues(data);
    const std::vector<Dtype> host_labels = HostValues(label);
    host.insert(host.end(), host_labels.begin(), host_labels.end());
    EXPECT_EQ(host, expected[batch]) << "batch " << batch;
  }
  EXPECT_EQ(BatchesFromDevice(layer), static_cast<uint64_t>(kBatches));
  Caffe::set_mode(Caffe::CPU);
}

// Batch of 1 from records 5, 6 and 7 high: the rooms on the device, made for the first record,
// are too small for the larger ones, which are copied from the host while their room grows.
TYPED_TEST(GpuDataLayerTest, BatchesThatOutgrowTheirRoomOnTheDeviceArriveIntact) {
  using Dtype = TypeParam;
  const int batches = 2 * kRecords;
  const std::vector<std::vector<Dtype>> expected =
      this->CpuBatches("scale: 0.5", 1, this->varied_source_, batches);
  Blob<Dtype> data, label;
  const Blobs<Dtype> top{&data, &label};
  std::shared_ptr<Layer<Dtype>> layer =
      this->MakeLayer(Caffe::GPU, "scale: 0.5", top, 1, this->varied_source_);
  for (int batch = 0; batch < batches; ++batch) {
    layer->Forward({}, top);
    ASSERT_EQ(data.height(), kHeight + batch % kRecords % 3) << "batch " << batch;
    std::vector<Dtype> values = DeviceValues(data);
    values.push_back(DeviceValues(label)[0]);
    EXPECT_EQ(values, expected[batch]) << "batch " << batch;
  }
  // Batch 1 (6 high) found no room; each of the 4 rooms grows at most twice, and then its
  // batches come from the device again.
  const uint64_t from_device = BatchesFromDevice(layer);
  EXPECT_LT(from_device, static_cast<uint64_t>(batches));
  EXPECT_GE(from_device, static_cast<uint64_t>(batches - 2 * 4));
  Caffe::set_mode(Caffe::CPU);
}

// The batches cross to the device every iteration: for a layer set up in GPU mode their host
// memory is pinned, so the copy runs at the link's full speed; in CPU mode it is ordinary
// memory. (A CPU-mode Forward shows the batch's memory through the tops.)
TYPED_TEST(GpuDataLayerTest, BatchesArePinnedWhenSetUpInGpuMode) {
#ifndef CPU_ONLY
  for (Caffe::Brew mode : {Caffe::GPU, Caffe::CPU}) {
    Blob<TypeParam> data, label;
    const Blobs<TypeParam> top{&data, &label};
    std::shared_ptr<Layer<TypeParam>> layer = this->MakeLayer(mode, "", top);
    Caffe::set_mode(Caffe::CPU);
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
  const int data_count = kBatchSize * kRecordSize;
  for (Caffe::Brew setup_mode : {Caffe::CPU, Caffe::GPU}) {
    const std::string setup = setup_mode == Caffe::GPU ? "set up on the GPU" : "on the CPU";
    Blob<Dtype> data, label;
    const Blobs<Dtype> top{&data, &label};
    std::shared_ptr<Layer<Dtype>> layer = this->MakeLayer(setup_mode, transform, top);
    for (int batch = 0; batch < kBatches; ++batch) {
      // GPU, CPU, GPU, ... from a layer set up on the GPU, CPU, GPU, ... from one set up on the
      // CPU: the tops' host side must never be left pointing at a batch the prefetch thread is
      // refilling, nor a copy into a top read a room the prefetch thread is refilling.
      const bool on_gpu = (batch % 2 == 0) == (setup_mode == Caffe::GPU);
      Caffe::set_mode(on_gpu ? Caffe::GPU : Caffe::CPU);
      layer->Forward({}, top);
      std::vector<Dtype> values = on_gpu ? DeviceValues(data) : HostValues(data);
      const std::vector<Dtype> labels = on_gpu ? DeviceValues(label) : HostValues(label);
      values.insert(values.end(), labels.begin(), labels.end());
      EXPECT_EQ(values, expected[batch]) << setup << ", batch " << batch;
      if (on_gpu) {
        // An in-place layer writing the data top on the device, then a host reader: the
        // values come home into memory the layer still holds.
        ScaleOnDevice(&data, Dtype(2));
        const std::vector<Dtype> doubled = HostValues(data);
        ASSERT_EQ(static_cast<int>(doubled.size()), data_count);
        for (int i = 0; i < data_count; ++i) {
          ASSERT_EQ(doubled[i], 2 * expected[batch][i])
              << setup << ", batch " << batch << " value " << i;
        }
      }
    }
    // Only the first Forward, before the tops first pointed into a batch.
    EXPECT_EQ(BatchesFromDevice(layer), setup_mode == Caffe::GPU ? 1u : 0u) << setup;
  }
  Caffe::set_mode(Caffe::CPU);
}

}  // namespace caffe
