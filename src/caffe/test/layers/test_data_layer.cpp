// The Data layer over an LMDB written by the test: values and labels in order, wrap-around,
// sharding between solvers, exact resume with SaveCursor/RestoreCursor (random crop and mirror
// included), encoded (PNG/JPEG) records giving the values of raw ones, the same batches for any
// number of worker threads, errors (missing LMDB, a folder that is no LMDB, LevelDB, corrupt
// record, a damaged page, undecodable image, mean file of another shape, bad resume position) and
// shutdown.
// Its batches in GPU mode (the prefetching base's device batches): BaseDataLayerGpuTest in
// test_base_data_layer.cpp.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/io/db.hpp"
#include "caffe/io/io.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/layers/data_layer.hpp"
#include "caffe/net.hpp"
#include "caffe/solver.hpp"
#include "caffe/solver_factory.hpp"
#include "caffe/test/data_layer_test_util.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/image_test_util.hpp"
#include "caffe/test/lmdb_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

// Records are C x H x W = 2 x 3 x 4; record i has label i and value (i + j) % 256 at index j.
constexpr int kChannels = 2, kHeight = 3, kWidth = 4;
constexpr int kRecordSize = kChannels * kHeight * kWidth;

template <typename TypeParam>
class DataLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;

  DataLayerTest() : dir_(MakeTempDir("caffe_test_data_layer")), source_(dir_.path() + "/lmdb") {}

  void TearDown() override {
    Caffe::set_solver_count(1);
    Caffe::set_solver_rank(0);
  }

  /// Writes `count` records; the record at `corrupt` (if >= 0) is not a Datum.
  void WriteLMDB(int count, int corrupt = -1) {
    WriteDatumLMDB(
        source_, count, kChannels, kHeight, kWidth,
        [](int i, int j) { return static_cast<unsigned char>((i + j) % 256); },
        [](int i) { return i; }, corrupt);
  }

  LayerParameter MakeParam(int batch_size, const string& extra = "", Phase phase = TRAIN) {
    LayerParameter param = ParseLayerParam(
        "name: 'data' type: 'Data' top: 'data' top: 'label' data_param { source: '" + source_ +
        "' backend: LMDB batch_size: " + std::to_string(batch_size) + " } " + extra);
    param.set_phase(phase);
    return param;
  }

  std::unique_ptr<DataLayer<Dtype>> MakeLayer(const LayerParameter& param, bool labels = true) {
    auto layer = std::make_unique<DataLayer<Dtype>>(param);
    layer->SetUp({}, labels ? top_ : Blobs<Dtype>{&data_});
    return layer;
  }

  /// Runs one Forward and returns the labels.
  vector<int> ForwardLabels(DataLayer<Dtype>* layer) { return ForwardBatchLabels(layer, top_); }

  /// Runs one Forward and returns data followed by labels.
  vector<Dtype> ForwardValues(DataLayer<Dtype>* layer) { return ForwardBatchValues(layer, top_); }

  ScopedTempDir dir_;
  string source_;
  Blob<Dtype> data_, label_;
  Blobs<Dtype> top_{&data_, &label_};
};

TYPED_TEST_SUITE(DataLayerTest, TestDtypesAndDevices);

TYPED_TEST(DataLayerTest, ReadsRecordsInOrderWithTheirLabels) {
  using Dtype = typename TypeParam::Dtype;
  this->WriteLMDB(12);
  auto layer = this->MakeLayer(this->MakeParam(5, "transform_param { scale: 0.5 }"));
  EXPECT_EQ(this->data_.shape(), (vector<int>{5, kChannels, kHeight, kWidth}));
  EXPECT_EQ(this->label_.shape(), (vector<int>{5}));
  for (int batch = 0; batch < 2; ++batch) {
    layer->Forward({}, this->top_);
    for (int item = 0; item < 5; ++item) {
      const int record = batch * 5 + item;
      EXPECT_EQ(this->label_.cpu_data()[item], record);
      for (int j = 0; j < kRecordSize; ++j) {
        ASSERT_EQ(this->data_.cpu_data()[item * kRecordSize + j], Dtype((record + j) % 256) / 2)
            << "record " << record << " value " << j;
      }
    }
  }
}

TYPED_TEST(DataLayerTest, IsCreatedByTheRegistryAndWorksWithoutLabels) {
  this->WriteLMDB(3);
  auto layer = LayerRegistry<typename TypeParam::Dtype>::CreateLayer(this->MakeParam(2));
  EXPECT_STREQ(layer->type(), "Data");
  EXPECT_NE(dynamic_cast<ResumableLayer*>(layer.get()), nullptr) << "solvers save its position";
  layer->SetUp({}, {&this->data_});
  layer->Forward({}, {&this->data_});
  EXPECT_EQ(this->data_.shape(), (vector<int>{2, kChannels, kHeight, kWidth}));
  EXPECT_EQ(this->data_.cpu_data()[kRecordSize], 1);  // record 1's first value
}

TYPED_TEST(DataLayerTest, WrapsAroundToTheFirstRecord) {
  this->WriteLMDB(7);
  auto layer = this->MakeLayer(this->MakeParam(3));
  EXPECT_EQ(this->ForwardLabels(layer.get()), (vector<int>{0, 1, 2}));
  EXPECT_EQ(this->ForwardLabels(layer.get()), (vector<int>{3, 4, 5}));
  EXPECT_EQ(this->ForwardLabels(layer.get()), (vector<int>{6, 0, 1}));
  EXPECT_EQ(this->ForwardLabels(layer.get()), (vector<int>{2, 3, 4}));
}

TYPED_TEST(DataLayerTest, CropsTheCentreInTest) {
  this->WriteLMDB(2);
  auto layer = this->MakeLayer(this->MakeParam(2, "transform_param { crop_size: 2 }", TEST));
  EXPECT_EQ(this->data_.shape(), (vector<int>{2, kChannels, 2, 2}));
  layer->Forward({}, this->top_);
  // Offsets (3-2)/2 = 0 rows, (4-2)/2 = 1 column.
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < kChannels; ++c) {
      for (int h = 0; h < 2; ++h) {
        for (int w = 0; w < 2; ++w) {
          EXPECT_EQ(this->data_.data_at(n, c, h, w), n + (c * kHeight + h) * kWidth + w + 1);
        }
      }
    }
  }
}

TYPED_TEST(DataLayerTest, TwoSolversReadDisjointInterleavedShards) {
  this->WriteLMDB(11);
  using Dtype = typename TypeParam::Dtype;
  Caffe::set_solver_count(2);
  vector<std::unique_ptr<DataLayer<Dtype>>> layers;
  vector<std::unique_ptr<Blob<Dtype>>> blobs;
  vector<Blobs<Dtype>> tops;
  for (int rank = 0; rank < 2; ++rank) {
    Caffe::set_solver_rank(rank);
    blobs.push_back(std::make_unique<Blob<Dtype>>());
    blobs.push_back(std::make_unique<Blob<Dtype>>());
    tops.push_back({blobs[2 * rank].get(), blobs[2 * rank + 1].get()});
    layers.push_back(std::make_unique<DataLayer<Dtype>>(this->MakeParam(3)));
    layers.back()->SetUp({}, tops.back());
  }
  Caffe::set_solver_rank(0);
  // The stream 0..10, 0..10, ... split by position: even positions to rank 0, odd to rank 1,
  // exactly what one solver at batch 6 would read.
  const vector<vector<int>> expected[2] = {{{0, 2, 4}, {6, 8, 10}, {1, 3, 5}},
                                           {{1, 3, 5}, {7, 9, 0}, {2, 4, 6}}};
  for (int step = 0; step < 3; ++step) {
    for (int rank = 0; rank < 2; ++rank) {
      layers[rank]->Forward({}, tops[rank]);
      vector<int> labels;
      for (int i = 0; i < 3; ++i) labels.push_back(static_cast<int>(tops[rank][1]->cpu_data()[i]));
      EXPECT_EQ(labels, expected[rank][step]) << "rank " << rank << " step " << step;
    }
  }
}

TYPED_TEST(DataLayerTest, TestNetsReadEveryRecordWhateverTheSolverCount) {
  this->WriteLMDB(5);
  Caffe::set_solver_count(2);
  Caffe::set_solver_rank(1);
  auto layer = this->MakeLayer(this->MakeParam(4, "", TEST));
  EXPECT_EQ(this->ForwardLabels(layer.get()), (vector<int>{0, 1, 2, 3}));
}

TYPED_TEST(DataLayerTest, CursorIsThePositionAfterTheLastConsumedBatch) {
  this->WriteLMDB(20);
  LayerParameter param = this->MakeParam(3);
  param.mutable_data_param()->set_prefetch(4);
  auto layer = this->MakeLayer(param);
  DataCursor start = layer->SaveCursor();
  EXPECT_EQ(start.layer(), "data");
  EXPECT_EQ(start.key(), DatumLMDBKey(0));
  EXPECT_EQ(start.records_read(), 0u);
  this->ForwardLabels(layer.get());
  // Let the thread read ahead as far as it can; the cursor must not move with it.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  DataCursor after_one = layer->SaveCursor();
  EXPECT_EQ(after_one.key(), DatumLMDBKey(3));
  EXPECT_EQ(after_one.records_read(), 3u);
  this->ForwardLabels(layer.get());
  EXPECT_EQ(layer->SaveCursor().key(), DatumLMDBKey(6));
}

TYPED_TEST(DataLayerTest, RestoredCursorContinuesWithIdenticalBatches) {
  using Dtype = typename TypeParam::Dtype;
  // 13 records at batch 4 wrap around within the continuation; crop and mirror are random.
  this->WriteLMDB(13);
  const LayerParameter param =
      this->MakeParam(4, "transform_param { crop_size: 2 mirror: true scale: 0.25 }");
  Caffe::set_random_seed(11);
  auto layer = this->MakeLayer(param);
  for (int i = 0; i < 3; ++i) this->ForwardValues(layer.get());
  const DataCursor saved = layer->SaveCursor();
  vector<vector<Dtype>> continuation;
  for (int i = 0; i < 5; ++i) continuation.push_back(this->ForwardValues(layer.get()));
  std::set<vector<Dtype>> distinct(continuation.begin(), continuation.end());
  EXPECT_EQ(distinct.size(), continuation.size());

  // The same layer, rewound.
  layer->RestoreCursor(saved);
  EXPECT_EQ(layer->SaveCursor().SerializeAsString(), saved.SerializeAsString());
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(this->ForwardValues(layer.get()), continuation[i]) << "batch " << i;
  }
  layer.reset();

  // A new layer (another seed, already moved on) given the saved cursor, as after a restart.
  Caffe::set_random_seed(12345);
  auto resumed = this->MakeLayer(param);
  this->ForwardValues(resumed.get());
  resumed->RestoreCursor(saved);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(this->ForwardValues(resumed.get()), continuation[i]) << "batch " << i;
  }
}

TYPED_TEST(DataLayerTest, RestoredCursorKeepsTheShardOfTheRank) {
  this->WriteLMDB(9);
  Caffe::set_solver_count(3);
  Caffe::set_solver_rank(2);
  auto layer = this->MakeLayer(this->MakeParam(2));
  EXPECT_EQ(this->ForwardLabels(layer.get()), (vector<int>{2, 5}));
  const DataCursor saved = layer->SaveCursor();
  EXPECT_EQ(this->ForwardLabels(layer.get()), (vector<int>{8, 2}));
  layer->RestoreCursor(saved);
  EXPECT_EQ(this->ForwardLabels(layer.get()), (vector<int>{8, 2}));
}

TYPED_TEST(DataLayerTest, UnknownCursorKeyIsAnErrorAndForwardDoesNotHang) {
  this->WriteLMDB(4);
  auto layer = this->MakeLayer(this->MakeParam(2));
  this->ForwardLabels(layer.get());
  DataCursor bad = layer->SaveCursor();
  bad.set_key("zzz");
  try {
    layer->RestoreCursor(bad);
    FAIL() << "a key that is not in the LMDB was accepted";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("'zzz'"), string::npos) << error.what();
    EXPECT_NE(string(error.what()).find(this->source_), string::npos) << error.what();
  }
  EXPECT_THROW(layer->Forward({}, this->top_), Error);
  // A good position brings the layer back.
  DataCursor good = bad;
  good.set_key(DatumLMDBKey(3));
  good.set_records_read(3);
  layer->RestoreCursor(good);
  EXPECT_EQ(this->ForwardLabels(layer.get()), (vector<int>{3, 0}));
}

TYPED_TEST(DataLayerTest, MissingLMDBIsAnErrorNamingThePath) {
  auto layer = std::make_unique<DataLayer<typename TypeParam::Dtype>>(this->MakeParam(2));
  try {
    layer->SetUp({}, this->top_);
    FAIL() << "a missing LMDB was accepted";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find(this->source_), string::npos) << error.what();
    EXPECT_NE(string(error.what()).find("Data layer 'data'"), string::npos) << error.what();
  }
}

// BVLC's default backend is LEVELDB: with none set, an LMDB is read as one; an explicit LEVELDB
// over it is an error that says to set LMDB (in builds with LevelDB and without).
TYPED_TEST(DataLayerTest, AnLMDBIsReadWhenNoBackendIsSetAndRefusedAsLevelDB) {
  this->WriteLMDB(2);
  LayerParameter param = this->MakeParam(2);
  param.mutable_data_param()->clear_backend();  // the proto's default: LEVELDB
  auto layer = std::make_unique<DataLayer<typename TypeParam::Dtype>>(param);
  layer->SetUp({}, this->top_);
  layer->Forward({}, this->top_);
  EXPECT_EQ(this->top_[1]->cpu_data()[1], 1);  // record 1's label
  param.mutable_data_param()->set_backend(DataParameter::LEVELDB);
  layer = std::make_unique<DataLayer<typename TypeParam::Dtype>>(param);
  try {
    layer->SetUp({}, this->top_);
    FAIL() << "an LMDB was read as a LevelDB";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("backend: LMDB"), string::npos) << error.what();
    EXPECT_NE(string(error.what()).find(this->source_), string::npos) << error.what();
  }
}

TYPED_TEST(DataLayerTest, CorruptRecordSurfacesInTheForwardThatReachesIt) {
  this->WriteLMDB(10, /*corrupt=*/7);
  auto layer = this->MakeLayer(this->MakeParam(4));
  EXPECT_EQ(this->ForwardLabels(layer.get()), (vector<int>{0, 1, 2, 3}));
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      layer->Forward({}, this->top_);
      FAIL() << "the batch holding a corrupt record was delivered";
    } catch (const Error& error) {
      const string message = error.what();
      EXPECT_NE(message.find("Data layer 'data'"), string::npos) << message;
      EXPECT_NE(message.find("record '" + DatumLMDBKey(7) + "'"), string::npos) << message;
      EXPECT_NE(message.find("not a valid Datum"), string::npos) << message;
    }
  }
}

TYPED_TEST(DataLayerTest, RecordsOfAnotherSizeInABatchAreAnError) {
  this->WriteLMDB(3);
  {
    // Append a 1x1x1 record after the 2x3x4 ones.
    std::unique_ptr<db::DB> database = db::GetDB("lmdb");
    database->Open(this->source_, db::WRITE);
    std::unique_ptr<db::Transaction> txn = database->NewTransaction();
    Datum small;
    small.set_channels(1);
    small.set_height(1);
    small.set_width(1);
    small.set_data("x");
    txn->Put(DatumLMDBKey(3), small.SerializeAsString());
    txn->Commit();
  }
  auto layer = this->MakeLayer(this->MakeParam(2));
  this->ForwardLabels(layer.get());
  EXPECT_THROW(layer->Forward({}, this->top_), Error);
  // With batch_size 1 every batch takes its record's shape.
  auto single = this->MakeLayer(this->MakeParam(1));
  for (int i = 0; i < 3; ++i) this->ForwardLabels(single.get());
  single->Forward({}, this->top_);
  EXPECT_EQ(this->data_.shape(), (vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(this->data_.cpu_data()[0], 'x');
}

TYPED_TEST(DataLayerTest, DestroyingWithAFullQueueReturnsPromptly) {
  this->WriteLMDB(50);
  for (int prefetch : {1, 3}) {
    LayerParameter param = this->MakeParam(2);
    param.mutable_data_param()->set_prefetch(prefetch);
    auto layer = this->MakeLayer(param);
    if (prefetch == 3) this->ForwardLabels(layer.get());         // one batch held by the tops
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the queue fills up
    const auto start = std::chrono::steady_clock::now();
    layer.reset();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  }
}

TYPED_TEST(DataLayerTest, BadParametersAreRefused) {
  this->WriteLMDB(2);
  LayerParameter no_prefetch = this->MakeParam(2);
  no_prefetch.mutable_data_param()->set_prefetch(0);
  LayerParameter big_crop = this->MakeParam(2, "transform_param { crop_size: 4 }");
  for (const LayerParameter& param : {no_prefetch, big_crop}) {
    auto layer = std::make_unique<DataLayer<typename TypeParam::Dtype>>(param);
    EXPECT_THROW(layer->SetUp({}, this->top_), Error) << param.DebugString();
  }
  LayerParameter no_batch = this->MakeParam(2);
  no_batch.mutable_data_param()->clear_batch_size();
  auto layer = std::make_unique<DataLayer<typename TypeParam::Dtype>>(no_batch);
  EXPECT_THROW(layer->SetUp({}, this->top_), Error);
}

TYPED_TEST(DataLayerTest, AnyNumberOfThreadsGivesTheSameBatches) {
  using Dtype = typename TypeParam::Dtype;
  this->WriteLMDB(11);
  ExpectSameBatchesForAnyThreadCount<Dtype>(
      {1, 2, 4}, /*batches=*/4, /*seed=*/31,
      [this](int threads) -> std::unique_ptr<Layer<Dtype>> {
        LayerParameter param =
            this->MakeParam(4, "transform_param { crop_size: 2 mirror: true scale: 2 }");
        param.mutable_data_param()->set_threads(threads);
        return this->MakeLayer(param);
      },
      this->top_);
}

TYPED_TEST(DataLayerTest, MeanFileOfAnotherShapeNamesBothShapes) {
  this->WriteLMDB(2);
  Blob<float> mean(1, 3, 4, 4);
  BlobProto proto;
  mean.ToProto(&proto);
  const string mean_file = this->dir_.path() + "/mean.binaryproto";
  WriteProtoToBinaryFile(proto, mean_file);
  auto layer = std::make_unique<DataLayer<typename TypeParam::Dtype>>(
      this->MakeParam(2, "transform_param { mean_file: '" + mean_file + "' }"));
  try {
    layer->SetUp({}, this->top_);
    FAIL() << "a 3x4x4 mean for 2x3x4 records was accepted";
  } catch (const Error& error) {
    const string message = error.what();
    EXPECT_NE(message.find("mean file '" + mean_file + "' has shape 1 3 4 4"), string::npos)
        << message;
    EXPECT_NE(message.find("the records are 2x3x4"), string::npos) << message;
  }
}

TYPED_TEST(DataLayerTest, FolderThatIsNotAnLMDBIsAnError) {
  std::filesystem::create_directory(this->source_);
  std::ofstream(this->source_ + "/notes.txt") << "not a database";
  auto layer = std::make_unique<DataLayer<typename TypeParam::Dtype>>(this->MakeParam(2));
  try {
    layer->SetUp({}, this->top_);
    FAIL() << "a folder without data.mdb was accepted";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("'" + this->source_ + "' is not an LMDB"), string::npos)
        << error.what();
  }
  // A data.mdb that is no LMDB file.
  std::ofstream(this->source_ + "/data.mdb") << string(8192, 'x');
  layer = std::make_unique<DataLayer<typename TypeParam::Dtype>>(this->MakeParam(2));
  try {
    layer->SetUp({}, this->top_);
    FAIL() << "a data.mdb of garbage was accepted";
  } catch (const Error& error) {
    EXPECT_NE(
        string(error.what()).find("'" + this->source_ + "/data.mdb' is not an LMDB data file"),
        string::npos)
        << error.what();
  }
}

// A page lost in the middle of the database: the prefetch thread's read fails inside LMDB (its own
// check, or a fault), and Forward ends with an error naming the database and the last good key.
TYPED_TEST(DataLayerTest, ADamagedPageEndsForwardWithAnErrorNamingTheDatabase) {
  WriteDatumLMDB(this->source_, 1000);
  const string data_file = this->source_ + "/data.mdb";
  const uint64_t page = MiddleLMDBLeafPage(data_file);
  const string last_good = DatumLMDBKey(std::stoi(FirstKeyOnLMDBPage(data_file, page)) - 1);
  ZeroLMDBPage(data_file, page);
  auto layer = this->MakeLayer(this->MakeParam(16));
  string message;
  for (int batch = 0; batch < 70 && message.empty(); ++batch) {  // 1120 records: past the page
    message = ErrorOf([&] { layer->Forward({}, this->top_); });
  }
  EXPECT_EQ(
      message.rfind("Data layer 'data': loading data failed: LMDB '" + this->source_ +
                        "' is damaged: reading the record after key '" + last_good + "' failed: ",
                    0),
      0u)
      << message;
  EXPECT_NE(message.find("; check every record with `caffe_db verify " + this->source_ + "`"),
            string::npos)
      << message;
}

#ifdef USE_OPENCV
TYPED_TEST(DataLayerTest, EncodedImagesGiveTheValuesOfRawOnes) {
  using Dtype = typename TypeParam::Dtype;
  // The same five pictures stored raw and as PNG (lossless) or JPEG bytes.
  const string raw_source = this->dir_.path() + "/raw_lmdb";
  for (const string& format : {string(".png"), string(".jpg")}) {
    std::filesystem::remove_all(raw_source);
    std::filesystem::remove_all(this->source_);
    std::unique_ptr<db::DB> raw_db = db::GetDB("lmdb");
    std::unique_ptr<db::DB> encoded_db = db::GetDB("lmdb");
    raw_db->Open(raw_source, db::NEW);
    encoded_db->Open(this->source_, db::NEW);
    auto raw_txn = raw_db->NewTransaction();
    auto encoded_txn = encoded_db->NewTransaction();
    for (int i = 0; i < 5; ++i) {
      std::vector<uchar> bytes;
      cv::imencode(format, PatternImage(9, 7, 3, i), bytes);
      Datum encoded;
      encoded.set_data(bytes.data(), bytes.size());
      encoded.set_encoded(true);
      encoded.set_label(i);
      encoded_txn->Put(DatumLMDBKey(i), encoded.SerializeAsString());
      const cv::Mat decoded = cv::imdecode(bytes, cv::IMREAD_COLOR);  // what Caffe should see
      Datum raw;
      raw.set_channels(3);
      raw.set_height(9);
      raw.set_width(7);
      raw.set_label(i);
      string data;
      for (int value : ImageValues(decoded)) data.push_back(static_cast<char>(value));
      raw.set_data(data);
      raw_txn->Put(DatumLMDBKey(i), raw.SerializeAsString());
    }
    raw_txn->Commit();
    encoded_txn->Commit();
    raw_txn.reset();
    encoded_txn.reset();
    raw_db->Close();
    encoded_db->Close();

    const string transform = " transform_param { crop_size: 5 mirror: true mean_value: 9 } ";
    Caffe::set_random_seed(8);
    LayerParameter encoded_param = this->MakeParam(3, transform);
    encoded_param.mutable_data_param()->set_threads(2);
    auto encoded_layer = this->MakeLayer(encoded_param);
    vector<vector<Dtype>> encoded_batches;
    for (int batch = 0; batch < 3; ++batch) {
      encoded_batches.push_back(this->ForwardValues(encoded_layer.get()));
    }
    EXPECT_EQ(this->data_.shape(), (vector<int>{3, 3, 5, 5}));
    encoded_layer.reset();
    LayerParameter raw_param = this->MakeParam(3, transform);
    raw_param.mutable_data_param()->set_source(raw_source);
    Caffe::set_random_seed(8);
    auto raw_layer = this->MakeLayer(raw_param);
    for (int batch = 0; batch < 3; ++batch) {
      EXPECT_EQ(this->ForwardValues(raw_layer.get()), encoded_batches[batch])
          << format << " batch " << batch;
    }
  }
  // force_gray decodes to one channel.
  auto gray = this->MakeLayer(this->MakeParam(2, "transform_param { force_gray: true }"));
  EXPECT_EQ(this->data_.shape(), (vector<int>{2, 1, 9, 7}));
  this->ForwardValues(gray.get());
}

TYPED_TEST(DataLayerTest, UndecodableEncodedRecordNamesTheRecord) {
  this->WriteLMDB(4);
  {
    std::unique_ptr<db::DB> database = db::GetDB("lmdb");
    database->Open(this->source_, db::WRITE);
    auto txn = database->NewTransaction();
    Datum broken;
    broken.set_encoded(true);
    broken.set_data("\x89PNG but not really");
    txn->Put(DatumLMDBKey(2), broken.SerializeAsString());
    txn->Commit();
  }
  auto layer = this->MakeLayer(this->MakeParam(2));
  this->ForwardLabels(layer.get());
  try {
    layer->Forward({}, this->top_);
    FAIL() << "an undecodable record was delivered";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("record '" + DatumLMDBKey(2) + "'"), string::npos)
        << error.what();
    EXPECT_NE(string(error.what()).find("not an image OpenCV can decode"), string::npos)
        << error.what();
  }
}
#else
TYPED_TEST(DataLayerTest, EncodedRecordsWithoutOpenCVAreAClearError) {
  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  database->Open(this->source_, db::NEW);
  auto txn = database->NewTransaction();
  Datum encoded;
  encoded.set_encoded(true);
  encoded.set_data("\x89PNG");
  txn->Put(DatumLMDBKey(0), encoded.SerializeAsString());
  txn->Commit();
  txn.reset();
  database->Close();
  auto layer = std::make_unique<DataLayer<typename TypeParam::Dtype>>(this->MakeParam(1));
  try {
    layer->SetUp({}, this->top_);
    FAIL() << "an encoded record was accepted without OpenCV";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("needs OpenCV"), string::npos) << error.what();
  }
}
#endif  // USE_OPENCV

// Through the solver: a run interrupted by a snapshot and resumed (in a "new process": another
// seed) trains on exactly the records, crops and flips of an uninterrupted run.
TEST(DataLayerSolverTest, ResumedTrainingEndsWithTheSameWeights) {
  ScopedTempDir dir(MakeTempDir("caffe_test_data_resume"));
  const string source = dir.path() + "/lmdb";
  {
    std::unique_ptr<db::DB> database = db::GetDB("lmdb");
    database->Open(source, db::NEW);
    std::unique_ptr<db::Transaction> txn = database->NewTransaction();
    for (int i = 0; i < 13; ++i) {  // 13 records at batch 4: the resume point is mid-epoch
      Datum datum;
      datum.set_channels(kChannels);
      datum.set_height(kHeight);
      datum.set_width(kWidth);
      datum.set_label(i % 4);
      string data(kRecordSize, '\0');
      for (int j = 0; j < kRecordSize; ++j) data[j] = static_cast<char>((i * 37 + j * 11) % 256);
      datum.set_data(data);
      txn->Put(DatumLMDBKey(i), datum.SerializeAsString());
    }
    txn->Commit();
  }
  auto make_solver = [&](const string& prefix, int max_iter) {
    SolverParameter param;
    ParseProtoFromText(
        "base_lr: 0.1 lr_policy: 'fixed' momentum: 0.9 display: 0 random_seed: 1701 "
        "solver_mode: CPU max_iter: " +
            std::to_string(max_iter) + " snapshot_prefix: '" + dir.path() + "/" + prefix +
            "' net_param { name: 'ResumeData' "
            "layer { name: 'data' type: 'Data' top: 'data' top: 'label' "
            "  data_param { source: '" +
            source +
            "' backend: LMDB batch_size: 4 } "
            "  transform_param { crop_size: 2 mirror: true scale: 0.01 } } "
            "layer { name: 'ip' type: 'InnerProduct' bottom: 'data' top: 'ip' "
            "  inner_product_param { num_output: 4 weight_filler { type: 'xavier' } } } "
            "layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip' bottom: 'label' "
            "  top: 'loss' } }",
        "test solver", &param);
    Caffe::set_mode(Caffe::CPU);
    return std::unique_ptr<Solver<float>>(SolverRegistry<float>::CreateSolver(param));
  };
  auto straight = make_solver("straight", 10);
  straight->Solve();
  auto first_part = make_solver("part", 3);
  first_part->Solve();
  const string state = dir.path() + "/part_iter_3.solverstate";
  ASSERT_TRUE(FileExists(state)) << state;
  Caffe::set_random_seed(555);
  auto resumed = make_solver("resumed", 10);
  resumed->Solve(state);
  ASSERT_EQ(resumed->iter(), 10);
  const auto& expected = straight->net()->learnable_params();
  const auto& actual = resumed->net()->learnable_params();
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    for (int j = 0; j < expected[i]->count(); ++j) {
      ASSERT_EQ(expected[i]->cpu_data()[j], actual[i]->cpu_data()[j]) << "param " << i << "," << j;
    }
  }
}

}  // namespace
}  // namespace caffe
