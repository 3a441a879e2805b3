// MemoryData: top shapes, batches served from the caller's arrays (no copy) with wrap-around,
// AddDatumVector through the DataTransformer, set_batch_size, and the errors for missing data,
// sizes that are not multiples of the batch, and bad parameters.
#include <string>
#include <vector>

#include "caffe/layers/memory_data_layer.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

// Legend: B batch, C/H/W item shape, n items given.
template <typename TypeParam>
class MemoryDataLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  static constexpr int kBatch = 2, kChannels = 3, kHeight = 2, kWidth = 4;
  static constexpr int kItemSize = kChannels * kHeight * kWidth;
  static constexpr int kItems = 3 * kBatch;

  MemoryDataLayerTest() : data_(kItems * kItemSize), labels_(kItems) {
    for (size_t i = 0; i < data_.size(); ++i) data_[i] = Dtype(i);
    for (int n = 0; n < kItems; ++n) labels_[n] = Dtype(10 + n);
  }

  LayerParameter Param(const std::string& extra = "") const {
    return ParseLayerParam("name: 'mem' type: 'MemoryData' " + extra +
                           " memory_data_param { batch_size: 2 channels: 3 height: 2 width: 4 }");
  }

  // A record of C x H x W bytes with value (first + j) % 256 at index j.
  static Datum MakeDatum(int first, int label, int channels = kChannels) {
    Datum datum;
    datum.set_channels(channels);
    datum.set_height(kHeight);
    datum.set_width(kWidth);
    datum.set_label(label);
    std::string bytes(channels * kHeight * kWidth, '\0');
    for (size_t j = 0; j < bytes.size(); ++j) bytes[j] = static_cast<char>((first + j) % 256);
    datum.set_data(bytes);
    return datum;
  }

  vector<Dtype> data_, labels_;
  Blob<Dtype> data_top_, label_top_;
  Blobs<Dtype> bottom_vec_, top_vec_{&data_top_, &label_top_};
};
TYPED_TEST_SUITE(MemoryDataLayerTest, TestDtypesAndDevices);

// Expects `run` to throw a caffe::Error containing every part.
template <typename Run>
void ExpectError(Run run, const vector<std::string>& parts) {
  try {
    run();
    ADD_FAILURE() << "expected caffe::Error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("MemoryData layer 'mem': "), std::string::npos) << message;
    for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
  }
}

TYPED_TEST(MemoryDataLayerTest, TopsHaveParameterShapes) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(this->Param());
  EXPECT_STREQ(layer->type(), "MemoryData");
  layer->SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->data_top_.shape(), (vector<int>{2, 3, 2, 4}));
  EXPECT_EQ(this->label_top_.shape(), vector<int>{2});
  auto* memory = dynamic_cast<MemoryDataLayer<Dtype>*>(layer.get());
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(memory->batch_size(), 2);
  EXPECT_EQ(memory->channels(), 3);
  EXPECT_EQ(memory->height(), 2);
  EXPECT_EQ(memory->width(), 4);
}

TYPED_TEST(MemoryDataLayerTest, ServesTheCallersArraysInBatchesAndWrapsAround) {
  using Dtype = typename TypeParam::Dtype;
  MemoryDataLayer<Dtype> layer(this->Param());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Reset(this->data_.data(), this->labels_.data(), this->kItems);
  for (int step = 0; step < 5; ++step) {
    layer.Forward(this->bottom_vec_, this->top_vec_);
    const int first = (step % 3) * 2;  // three batches, then around again
    EXPECT_EQ(this->data_top_.shape(), (vector<int>{2, 3, 2, 4}));
    EXPECT_EQ(this->label_top_.shape(), (vector<int>{2, 1, 1, 1}));
    // No copy: the tops point into the arrays.
    EXPECT_EQ(this->data_top_.cpu_data(), this->data_.data() + first * this->kItemSize);
    EXPECT_EQ(this->label_top_.cpu_data(), this->labels_.data() + first);
    EXPECT_EQ(this->data_top_.cpu_data()[0], Dtype(first * this->kItemSize));
    EXPECT_EQ(this->label_top_.cpu_data()[1], Dtype(10 + first + 1));
  }
  // Reset starts again from the first item.
  layer.Reset(this->data_.data() + 2 * this->kItemSize, this->labels_.data() + 2, 4);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->label_top_.cpu_data()[0], Dtype(12));
}

TYPED_TEST(MemoryDataLayerTest, AddDatumVectorTransformsRecordsAndCopiesLabels) {
  using Dtype = typename TypeParam::Dtype;
  MemoryDataLayer<Dtype> layer(this->Param("transform_param { scale: 0.5 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  vector<Datum> records;
  for (int n = 0; n < 4; ++n) records.push_back(this->MakeDatum(20 * n, 7 - n));
  layer.AddDatumVector(records);
  for (int batch = 0; batch < 2; ++batch) {
    layer.Forward(this->bottom_vec_, this->top_vec_);
    for (int item = 0; item < 2; ++item) {
      const int n = 2 * batch + item;
      EXPECT_EQ(this->label_top_.cpu_data()[item], Dtype(7 - n));
      for (int j = 0; j < this->kItemSize; ++j) {
        EXPECT_EQ(this->data_top_.cpu_data()[item * this->kItemSize + j],
                  Dtype(0.5) * Dtype((20 * n + j) % 256))
            << "record " << n << " value " << j;
      }
    }
  }
  // Everything was served, so new records may come.
  layer.AddDatumVector({this->MakeDatum(1, 1), this->MakeDatum(2, 2)});
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->label_top_.cpu_data()[1], Dtype(2));
}

TYPED_TEST(MemoryDataLayerTest, AddDatumVectorRejectsBadInputAndUnservedData) {
  using Dtype = typename TypeParam::Dtype;
  MemoryDataLayer<Dtype> layer(this->Param());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  ExpectError([&] { layer.AddDatumVector({}); }, {"no records"});
  ExpectError([&] { layer.AddDatumVector({this->MakeDatum(0, 0)}); },
              {"1 records", "not a multiple of batch_size 2"});
  ExpectError(
      [&] {
        layer.AddDatumVector({this->MakeDatum(0, 0, 1), this->MakeDatum(0, 0, 1)});
      },
      {"do not fit memory_data_param (3 x 2 x 4)"});
  layer.AddDatumVector(
      {this->MakeDatum(0, 0), this->MakeDatum(1, 1), this->MakeDatum(2, 2), this->MakeDatum(3, 3)});
  layer.Forward(this->bottom_vec_, this->top_vec_);  // half served
  ExpectError(
      [&] {
        layer.AddDatumVector({this->MakeDatum(0, 0), this->MakeDatum(1, 1)});
      },
      {"cannot add data until"});
  ExpectError([&] { layer.set_batch_size(4); }, {"cannot change batch_size"});
}

TYPED_TEST(MemoryDataLayerTest, ResetRejectsSizesThatAreNotMultiplesOfTheBatch) {
  using Dtype = typename TypeParam::Dtype;
  MemoryDataLayer<Dtype> layer(this->Param());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  ExpectError([&] { layer.Reset(this->data_.data(), this->labels_.data(), 5); },
              {"n = 5", "positive multiple of batch_size 2"});
  ExpectError([&] { layer.Reset(this->data_.data(), this->labels_.data(), 0); }, {"n = 0"});
  ExpectError([&] { layer.Reset(nullptr, this->labels_.data(), 2); }, {"no data array"});
  ExpectError([&] { layer.Reset(this->data_.data(), nullptr, 2); }, {"no label array"});
}

TYPED_TEST(MemoryDataLayerTest, ForwardWithoutDataIsAnError) {
  using Dtype = typename TypeParam::Dtype;
  MemoryDataLayer<Dtype> layer(this->Param());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  ExpectError([&] { layer.Forward(this->bottom_vec_, this->top_vec_); },
              {"has no data", "call Reset"});
}

TYPED_TEST(MemoryDataLayerTest, SetBatchSizeChangesTheBatch) {
  using Dtype = typename TypeParam::Dtype;
  MemoryDataLayer<Dtype> layer(this->Param());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Reset(this->data_.data(), this->labels_.data(), this->kItems);
  layer.set_batch_size(3);
  EXPECT_EQ(layer.batch_size(), 3);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->data_top_.shape(0), 3);
  EXPECT_EQ(this->label_top_.cpu_data()[0], Dtype(13));
  // A batch that does not divide the items would run past their end.
  ExpectError([&] { layer.set_batch_size(4); }, {"6 items", "not a multiple"});
}

TYPED_TEST(MemoryDataLayerTest, RejectsMissingShapeParameters) {
  using Dtype = typename TypeParam::Dtype;
  MemoryDataLayer<Dtype> layer(
      ParseLayerParam("name: 'mem' memory_data_param { batch_size: 2 channels: 3 height: 2 }"));
  ExpectError([&] { layer.SetUp(this->bottom_vec_, this->top_vec_); },
              {"must all be set and positive", "got 2, 3, 2, 0"});
}

}  // namespace caffe
