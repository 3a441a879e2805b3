// BaseDataLayer and BasePrefetchingDataLayer through a counting reader defined here (batch k holds
// k everywhere, labels -k): batches in order with the tops pointing into them, one or two tops,
// the prefetch thread's own Caffe context, a failure in load_batch surfacing in Forward with the
// layer's name, SaveCursor/RestoreCursor replaying from a position, and the errors for bad
// parameters, a foreign cursor and an unreachable position.
// BaseDataLayerGpuTest: a Data layer's batches in GPU mode against CPU mode (skips without a GPU).
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/io/db.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/layers/base_data_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

constexpr int kBatch = 2, kValues = 3;

// A reader that counts: batch k holds the value k (data (2, 3)) and labels -k (2). Its position
// is the number of batches read; positions beyond kLastRecord do not exist.
template <typename Dtype>
class CountingDataLayer : public BasePrefetchingDataLayer<Dtype> {
 public:
  static constexpr int kLastRecord = 1000;
  // load_batch fails at record `fail_at` (-1: never), with a plain caffe::Error or, if
  // `layer_error`, one from LAYER_THROW.
  CountingDataLayer(const LayerParameter& param, int fail_at = -1, bool can_seek = true,
                    bool layer_error = false)
      : BasePrefetchingDataLayer<Dtype>(param),
        fail_at_(fail_at),
        can_seek_(can_seek),
        layer_error_(layer_error) {}
  ~CountingDataLayer() override { this->StopInternalThread(); }
  const char* type() const override { return "CountingData"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 2; }

  void DataLayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {
    top[0]->Reshape({kBatch, kValues});
    if (this->output_labels_) top[1]->Reshape({kBatch});
    for (auto& batch : this->prefetch_) {
      batch->data_.Reshape({kBatch, kValues});
      if (this->output_labels_) batch->label_.Reshape({kBatch});
    }
  }

  bool output_labels() const { return this->output_labels_; }
  const Batch<Dtype>* current_batch() const { return this->prefetch_current_; }
  int prefetch_count() const { return static_cast<int>(this->prefetch_.size()); }

  // Seen on the prefetch thread while it loaded record 0.
  std::atomic<int> thread_solver_rank{-1}, thread_solver_count{-1};
  std::atomic<unsigned> thread_random{0};

 protected:
  void load_batch(Batch<Dtype>* batch) override {
    const int k = next_;
    if (k == fail_at_ && layer_error_) LAYER_THROW() << "record " << k << " is unreadable";
    if (k == fail_at_) CAFFE_THROW() << "record " << k << " is corrupt";
    caffe_set(batch->data_.count(), Dtype(k), batch->data_.mutable_cpu_data());
    if (this->output_labels_) {
      caffe_set(batch->label_.count(), Dtype(-k), batch->label_.mutable_cpu_data());
    }
    if (k == 0) {
      thread_solver_rank = Caffe::solver_rank();
      thread_solver_count = Caffe::solver_count();
      thread_random = caffe_rng_rand();
    }
    next_ = k + 1;
  }
  DataCursor ReaderPosition() const override {
    DataCursor cursor;
    cursor.set_records_read(next_);
    cursor.set_key(std::to_string(next_.load()));
    return cursor;
  }
  void SeekReader(const DataCursor& cursor) override {
    if (!can_seek_) {
      BasePrefetchingDataLayer<Dtype>::SeekReader(cursor);
      return;
    }
    CAFFE_CHECK_LE(cursor.records_read(), static_cast<uint64_t>(kLastRecord))
        << "there is no record " << cursor.records_read();
    next_ = static_cast<int>(cursor.records_read());
  }

 private:
  std::atomic<int> next_{0};
  const int fail_at_;
  const bool can_seek_;
  const bool layer_error_;
};

}  // namespace

template <typename Dtype>
class BaseDataLayerTest : public ::testing::Test {
 protected:
  BaseDataLayerTest() {
    Caffe::set_mode(Caffe::CPU);
    Caffe::set_random_seed(1701);
  }
  void TearDown() override {
    Caffe::set_solver_count(1);
    Caffe::set_solver_rank(0);
  }
  static LayerParameter Param(const std::string& extra = "") {
    return ParseLayerParam("name: 'd' type: 'CountingData' " + extra);
  }
  // The value batch k holds, checked in data and labels; returns the data value.
  Dtype Next(CountingDataLayer<Dtype>* layer) {
    layer->Forward(bottom_, top_);
    const Dtype value = data_.cpu_data()[0];
    for (int i = 0; i < data_.count(); ++i) EXPECT_EQ(data_.cpu_data()[i], value);
    if (top_.size() > 1) {
      for (int i = 0; i < label_.count(); ++i) EXPECT_EQ(label_.cpu_data()[i], -value);
    }
    return value;
  }
  std::string ForwardError(CountingDataLayer<Dtype>* layer) {
    try {
      layer->Forward(bottom_, top_);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  Blob<Dtype> data_, label_;
  Blobs<Dtype> bottom_, top_{&data_, &label_};
};
TYPED_TEST_SUITE(BaseDataLayerTest, TestDtypes);

TYPED_TEST(BaseDataLayerTest, BatchesArriveInOrderAndTheTopsPointIntoThem) {
  CountingDataLayer<TypeParam> layer(this->Param("data_param { prefetch: 2 }"));
  layer.SetUp(this->bottom_, this->top_);
  EXPECT_EQ(layer.prefetch_count(), 2);
  EXPECT_TRUE(layer.output_labels());
  EXPECT_EQ(this->data_.shape(), (std::vector<int>{kBatch, kValues}));
  for (int k = 0; k < 7; ++k) {  // more batches than the ring holds
    EXPECT_EQ(this->Next(&layer), k);
    ASSERT_NE(layer.current_batch(), nullptr);
    // No copy: the top's memory is the batch's.
    EXPECT_EQ(this->data_.cpu_data(), layer.current_batch()->data_.cpu_data());
    EXPECT_EQ(this->label_.cpu_data(), layer.current_batch()->label_.cpu_data());
  }
}

TYPED_TEST(BaseDataLayerTest, OneTopMeansNoLabels) {
  CountingDataLayer<TypeParam> layer(this->Param());
  this->top_ = {&this->data_};
  layer.SetUp(this->bottom_, this->top_);
  EXPECT_FALSE(layer.output_labels());
  EXPECT_EQ(layer.prefetch_count(), 4);  // the default
  EXPECT_EQ(this->Next(&layer), 0);
  EXPECT_EQ(this->Next(&layer), 1);
}

TYPED_TEST(BaseDataLayerTest, PrefetchThreadHasTheOwnersSolverPlaceAndASeedFromItsGenerator) {
  Caffe::set_solver_count(4);
  Caffe::set_solver_rank(3);
  Caffe::set_random_seed(5);
  auto first = std::make_unique<CountingDataLayer<TypeParam>>(this->Param());
  first->SetUp(this->bottom_, this->top_);
  this->Next(first.get());
  EXPECT_EQ(first->thread_solver_rank, 3);
  EXPECT_EQ(first->thread_solver_count, 4);
  const unsigned first_random = first->thread_random;
  first.reset();
  // The same owner seed gives the thread the same random stream.
  Caffe::set_random_seed(5);
  CountingDataLayer<TypeParam> second(this->Param());
  second.SetUp(this->bottom_, this->top_);
  this->Next(&second);
  EXPECT_EQ(second.thread_random, first_random);
}

TYPED_TEST(BaseDataLayerTest, LoadFailureSurfacesInForwardWithTheLayerName) {
  CountingDataLayer<TypeParam> layer(this->Param("data_param { prefetch: 1 }"), /*fail_at=*/2);
  layer.SetUp(this->bottom_, this->top_);
  EXPECT_EQ(this->Next(&layer), 0);
  EXPECT_EQ(this->Next(&layer), 1);
  const std::string message = this->ForwardError(&layer);
  EXPECT_EQ(message, "CountingData layer 'd': loading data failed: record 2 is corrupt");
  // Every later Forward reports the same failure rather than waiting forever.
  EXPECT_EQ(this->ForwardError(&layer), message);
}

TYPED_TEST(BaseDataLayerTest, LayerErrorsFromTheThreadDoNotRepeatThePrefix) {
  // load_batch throws with LAYER_THROW, which already names the layer.
  CountingDataLayer<TypeParam> layer(this->Param(), /*fail_at=*/0, true, /*layer_error=*/true);
  layer.SetUp(this->bottom_, this->top_);
  EXPECT_EQ(this->ForwardError(&layer),
            "CountingData layer 'd': loading data failed: record 0 is unreadable");
}

TYPED_TEST(BaseDataLayerTest, SaveCursorIsThePositionAfterTheLastConsumedBatch) {
  CountingDataLayer<TypeParam> layer(this->Param());
  layer.SetUp(this->bottom_, this->top_);
  DataCursor cursor = layer.SaveCursor();
  EXPECT_EQ(cursor.layer(), "d");
  EXPECT_EQ(cursor.records_read(), 0u);
  for (int k = 0; k < 3; ++k) this->Next(&layer);
  // The thread has read ahead, but the cursor is where the net stands.
  cursor = layer.SaveCursor();
  EXPECT_EQ(cursor.records_read(), 3u);
  EXPECT_EQ(cursor.key(), "3");
  EXPECT_EQ(cursor.layer(), "d");
}

TYPED_TEST(BaseDataLayerTest, RestoreCursorReplaysTheBatchesThatFollowedIt) {
  CountingDataLayer<TypeParam> layer(this->Param());
  layer.SetUp(this->bottom_, this->top_);
  this->Next(&layer);
  this->Next(&layer);
  const DataCursor saved = layer.SaveCursor();
  for (int k = 2; k < 6; ++k) EXPECT_EQ(this->Next(&layer), k);
  layer.RestoreCursor(saved);
  EXPECT_EQ(layer.SaveCursor().records_read(), 2u);
  for (int k = 2; k < 6; ++k) EXPECT_EQ(this->Next(&layer), k);
  // A cursor of an earlier run of a layer with this name, or with no name, works the same.
  DataCursor earlier;
  earlier.set_records_read(40);
  layer.RestoreCursor(earlier);
  EXPECT_EQ(this->Next(&layer), 40);
}

TYPED_TEST(BaseDataLayerTest, RestoreCursorOfAnotherLayerIsRefused) {
  CountingDataLayer<TypeParam> layer(this->Param());
  layer.SetUp(this->bottom_, this->top_);
  DataCursor other;
  other.set_layer("mnist");
  other.set_records_read(1);
  try {
    layer.RestoreCursor(other);
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("belongs to layer 'mnist'"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(this->Next(&layer), 0);  // nothing changed
}

TYPED_TEST(BaseDataLayerTest, UnreachablePositionFailsEveryForwardUntilAGoodRestore) {
  CountingDataLayer<TypeParam> layer(this->Param());
  layer.SetUp(this->bottom_, this->top_);
  this->Next(&layer);
  DataCursor far;
  far.set_records_read(CountingDataLayer<TypeParam>::kLastRecord + 1);
  EXPECT_THROW(layer.RestoreCursor(far), Error);
  const std::string message = this->ForwardError(&layer);
  EXPECT_EQ(message.rfind("CountingData layer 'd': the saved data position could not be "
                          "restored: there is no record 1001",
                          0),
            0u)
      << message;
  EXPECT_EQ(this->ForwardError(&layer), message);
  DataCursor good;
  good.set_records_read(7);
  layer.RestoreCursor(good);
  EXPECT_EQ(this->Next(&layer), 7);
}

TYPED_TEST(BaseDataLayerTest, ReadersThatCannotSeekContinueFromWhereTheyStand) {
  CountingDataLayer<TypeParam> layer(this->Param("data_param { prefetch: 1 }"), -1,
                                     /*can_seek=*/false);
  layer.SetUp(this->bottom_, this->top_);
  for (int k = 0; k < 3; ++k) this->Next(&layer);
  DataCursor start;
  start.set_records_read(0);
  EXPECT_NO_THROW(layer.RestoreCursor(start));
  // With one batch in the ring the reader has not run ahead (the net holds that batch): it goes
  // on from record 3, not back to 0.
  EXPECT_EQ(this->Next(&layer), 3);
  EXPECT_EQ(this->Next(&layer), 4);
}

TYPED_TEST(BaseDataLayerTest, RandomTransformStateTravelsWithTheCursor) {
  // mirror in TRAIN makes the transformer random; its state is part of the saved position.
  CountingDataLayer<TypeParam> layer(this->Param("phase: TRAIN transform_param { mirror: true }"));
  layer.SetUp(this->bottom_, this->top_);
  const DataCursor cursor = layer.SaveCursor();
  EXPECT_FALSE(cursor.rng_state().empty());
  DataCursor garbage = cursor;
  garbage.set_rng_state("not a generator state");
  EXPECT_THROW(layer.RestoreCursor(garbage), Error);
  layer.RestoreCursor(cursor);
  EXPECT_EQ(layer.SaveCursor().rng_state(), cursor.rng_state());
  // Without random transforms there is no state to save.
  CountingDataLayer<TypeParam> plain(this->Param("phase: TEST transform_param { mirror: true }"));
  Blob<TypeParam> data, label;
  Blobs<TypeParam> tops{&data, &label};
  plain.SetUp(this->bottom_, tops);
  EXPECT_TRUE(plain.SaveCursor().rng_state().empty());
}

TYPED_TEST(BaseDataLayerTest, BadParametersAreErrorsNamingTheLayer) {
  CountingDataLayer<TypeParam> no_prefetch(this->Param("data_param { prefetch: 0 }"));
  try {
    no_prefetch.SetUp(this->bottom_, this->top_);
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("CountingData layer 'd': ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("prefetch"), std::string::npos) << e.what();
  }
  CountingDataLayer<TypeParam> two_means(
      this->Param("transform_param { mean_file: 'mean.binaryproto' mean_value: 104 }"));
  try {
    two_means.SetUp(this->bottom_, this->top_);
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("CountingData layer 'd': ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("mean"), std::string::npos) << e.what();
  }
  Blob<TypeParam> extra;
  Blobs<TypeParam> three_tops{&this->data_, &this->label_, &extra};
  CountingDataLayer<TypeParam> too_many(this->Param());
  EXPECT_THROW(too_many.SetUp(this->bottom_, three_tops), Error);
}

TYPED_TEST(BaseDataLayerTest, DestroyingAWaitingLayerDoesNotHang) {
  // The thread fills the ring and then waits for a free batch; the destructor must release it.
  for (int i = 0; i < 5; ++i) {
    CountingDataLayer<TypeParam> layer(this->Param("data_param { prefetch: 1 }"));
    layer.SetUp(this->bottom_, this->top_);
    if (i % 2) this->Next(&layer);
  }
}

// ---- The batches in GPU mode (skips without a GPU) ----
// A prefetching Data layer over a small LMDB written here hands each batch to its tops on the
// device (the device side current after Forward; the prefetch thread put the batch there) with
// exactly the values of a CPU-mode layer built from the same seed, random crops and mirrors
// included, across the wrap-around of the source. Batches that outgrow their room on the device
// (records of any size, batch_size 1) arrive intact too. Switching modes between batches and
// writing a top in place on the device does not disturb later batches, whichever mode the layer
// was set up in.

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
class BaseDataLayerGpuTest : public GpuLayerTest<Dtype> {
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
                                             const std::string& source = "", int count = kBatches) {
    Blob<Dtype> data, label;
    const Blobs<Dtype> top{&data, &label};
    std::shared_ptr<Layer<Dtype>> layer = MakeLayer(Caffe::CPU, transform, top, batch_size, source);
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
TYPED_TEST_SUITE(BaseDataLayerGpuTest, TestDtypes);

TYPED_TEST(BaseDataLayerGpuTest, TopsHoldTheBatchOnTheDevice) {
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
TYPED_TEST(BaseDataLayerGpuTest, BatchesThatOutgrowTheirRoomOnTheDeviceArriveIntact) {
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
TYPED_TEST(BaseDataLayerGpuTest, BatchesArePinnedWhenSetUpInGpuMode) {
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
      EXPECT_EQ(attributes.type,
                mode == Caffe::GPU ? cudaMemoryTypeHost : cudaMemoryTypeUnregistered)
          << (mode == Caffe::GPU ? "GPU" : "CPU") << " mode";
    }
  }
  Caffe::set_mode(Caffe::CPU);
#endif
}

TYPED_TEST(BaseDataLayerGpuTest, ModeSwitchesAndInPlaceDeviceWritesKeepLaterBatchesIntact) {
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
