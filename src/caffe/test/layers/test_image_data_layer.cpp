// The ImageData layer on a folder of PNG and JPEG files written by the test: pixels and labels in
// list order, root_folder, resizing and gray, shuffling (a fresh permutation every epoch),
// rand_skip, solver shares, any number of worker threads giving the same batches, exact resume
// with SaveCursor/RestoreCursor, and the errors for bad lists, missing images and parameters.
// Without OpenCV only the "needs OpenCV" error is checked.
#include <algorithm>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/layers/image_data_layer.hpp"
#include "caffe/test/data_layer_test_util.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/image_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

constexpr int kImages = 7;
constexpr int kHeight = 6, kWidth = 8;

template <typename TypeParam>
class ImageDataLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;

  ImageDataLayerTest()
      : dir_(MakeTempDir("caffe_test_image_data")), list_(dir_.path() + "/list.txt") {}

  void SetUp() override {
    MultiDeviceTest<TypeParam>::SetUp();
#ifdef USE_OPENCV
    // Image i: label 10 + i; even ones PNG, odd ones JPEG.
    for (int i = 0; i < kImages; ++i) {
      TestImage image;
      image.name = "img" + std::to_string(i) + (i % 2 ? ".jpg" : ".png");
      image.label = 10 + i;
      image.image = PatternImage(kHeight, kWidth, 3, i);
      images_.push_back(image);
    }
    WriteImageFolder(dir_.path(), images_, list_);
#endif
  }

  void TearDown() override {
    Caffe::set_solver_count(1);
    Caffe::set_solver_rank(0);
  }

  LayerParameter MakeParam(int batch_size, const string& extra = "", const string& transform = "",
                           Phase phase = TRAIN) {
    LayerParameter param = ParseLayerParam(
        "name: 'images' type: 'ImageData' top: 'data' top: 'label' image_data_param { source: '" +
        list_ + "' root_folder: '" + dir_.path() + "/' batch_size: " + std::to_string(batch_size) +
        " " + extra + " } transform_param { " + transform + " }");
    param.set_phase(phase);
    return param;
  }

  std::unique_ptr<ImageDataLayer<Dtype>> MakeLayer(const LayerParameter& param) {
    auto layer = std::make_unique<ImageDataLayer<Dtype>>(param);
    layer->SetUp({}, top_);
    return layer;
  }

  vector<int> ForwardLabels(ImageDataLayer<Dtype>* layer) {
    return ForwardBatchLabels(layer, top_);
  }

  vector<Dtype> ForwardValues(ImageDataLayer<Dtype>* layer) {
    return ForwardBatchValues(layer, top_);
  }

  /// What image `index` of the folder should give (decoded by OpenCV, resized if asked).
  vector<int> Expected(int index, bool is_color = true, int height = 0, int width = 0) const {
#ifdef USE_OPENCV
    return ImageValues(
        ExpectedImage(dir_.path() + "/" + images_[index].name, is_color, height, width));
#else
    return {};
#endif
  }

  /// The values of item `item` of the last batch, as integers.
  vector<int> Item(int item) const {
    const int size = data_.count(1);
    vector<int> values;
    for (int i = 0; i < size; ++i) {
      values.push_back(static_cast<int>(data_.cpu_data()[item * size + i]));
    }
    return values;
  }

  /// The message of the caffe::Error that setting up a layer with `param` throws.
  string SetUpError(const LayerParameter& param) {
    auto layer = std::make_unique<ImageDataLayer<Dtype>>(param);
    try {
      layer->SetUp({}, top_);
    } catch (const Error& error) {
      return error.what();
    }
    return "";
  }

  ScopedTempDir dir_;
  string list_;
#ifdef USE_OPENCV
  vector<TestImage> images_;
#endif
  Blob<Dtype> data_, label_;
  Blobs<Dtype> top_{&data_, &label_};
};

TYPED_TEST_SUITE(ImageDataLayerTest, TestDtypesAndDevices);

#ifndef USE_OPENCV
TYPED_TEST(ImageDataLayerTest, WithoutOpenCVSetUpIsAClearError) {
  std::ofstream(this->list_) << "a.png 0\n";
  const string message = this->SetUpError(this->MakeParam(1));
  EXPECT_NE(message.find("ImageData layer 'images'"), string::npos) << message;
  EXPECT_NE(message.find("needs OpenCV"), string::npos) << message;
}
#else

TYPED_TEST(ImageDataLayerTest, ReadsImagesInListOrderWithTheirLabels) {
  auto layer = this->MakeLayer(this->MakeParam(3));
  EXPECT_EQ(this->data_.shape(), (vector<int>{3, 3, kHeight, kWidth}));
  EXPECT_EQ(this->label_.shape(), (vector<int>{3}));
  for (int batch = 0; batch < 3; ++batch) {
    const vector<int> labels = this->ForwardLabels(layer.get());
    for (int item = 0; item < 3; ++item) {
      const int index = (batch * 3 + item) % kImages;  // wraps after 7
      EXPECT_EQ(labels[item], 10 + index);
      EXPECT_EQ(this->Item(item), this->Expected(index)) << "image " << index;
    }
  }
}

TYPED_TEST(ImageDataLayerTest, IsCreatedByTheRegistry) {
  auto layer = LayerRegistry<typename TypeParam::Dtype>::CreateLayer(this->MakeParam(2));
  EXPECT_STREQ(layer->type(), "ImageData");
  EXPECT_NE(dynamic_cast<ResumableLayer*>(layer.get()), nullptr) << "solvers save its position";
}

TYPED_TEST(ImageDataLayerTest, ResizesAndReadsGray) {
  auto layer =
      this->MakeLayer(this->MakeParam(2, "new_height: 4 new_width: 5 is_color: false", "scale: 1"));
  EXPECT_EQ(this->data_.shape(), (vector<int>{2, 1, 4, 5}));
  this->ForwardLabels(layer.get());
  EXPECT_EQ(this->Item(0), this->Expected(0, false, 4, 5));
  EXPECT_EQ(this->Item(1), this->Expected(1, false, 4, 5));
}

TYPED_TEST(ImageDataLayerTest, TransformParametersApply) {
  auto layer = this->MakeLayer(this->MakeParam(1, "", "mean_value: 100 scale: 0.5", TEST));
  this->ForwardLabels(layer.get());
  const vector<int> expected = this->Expected(0);
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(this->data_.cpu_data()[i], (expected[i] - 100) * typename TypeParam::Dtype(0.5));
  }
}

TYPED_TEST(ImageDataLayerTest, ShuffleGivesAFreshPermutationEveryEpoch) {
  Caffe::set_random_seed(3);
  auto layer = this->MakeLayer(this->MakeParam(kImages, "shuffle: true"));
  vector<vector<int>> epochs;
  for (int epoch = 0; epoch < 3; ++epoch) {
    vector<int> labels = this->ForwardLabels(layer.get());
    // The pixels go with their labels.
    for (int item = 0; item < kImages; ++item) {
      EXPECT_EQ(this->Item(item), this->Expected(labels[item] - 10));
    }
    epochs.push_back(labels);
    std::sort(labels.begin(), labels.end());
    EXPECT_EQ(labels, (vector<int>{10, 11, 12, 13, 14, 15, 16})) << "epoch " << epoch;
  }
  EXPECT_NE(epochs[0], epochs[1]);
  EXPECT_NE(epochs[1], epochs[2]);
  // The same seed gives the same orders.
  Caffe::set_random_seed(3);
  auto again = this->MakeLayer(this->MakeParam(kImages, "shuffle: true"));
  for (int epoch = 0; epoch < 3; ++epoch)
    EXPECT_EQ(this->ForwardLabels(again.get()), epochs[epoch]);
}

TYPED_TEST(ImageDataLayerTest, RandSkipStartsFurtherDown) {
  // BVLC's draw: skip = rand() % rand_skip from the setup thread's generator.
  Caffe::set_random_seed(21);
  const int skip = static_cast<int>(caffe_rng_rand() % 5);
  Caffe::set_random_seed(21);
  auto layer = this->MakeLayer(this->MakeParam(2, "rand_skip: 5"));
  EXPECT_EQ(this->ForwardLabels(layer.get()), (vector<int>{10 + skip, 11 + skip}));
}

TYPED_TEST(ImageDataLayerTest, SolversShareTheListAndTestNetsReadAll) {
  Caffe::set_solver_count(3);
  Caffe::set_solver_rank(1);
  auto train = this->MakeLayer(this->MakeParam(3));
  // Rank 1 of 3 owns lines 1 and 4 and walks only those.
  EXPECT_EQ(this->ForwardLabels(train.get()), (vector<int>{11, 14, 11}));
  auto test = this->MakeLayer(this->MakeParam(3, "", "", TEST));
  EXPECT_EQ(this->ForwardLabels(test.get()), (vector<int>{10, 11, 12}));
  Caffe::set_solver_count(8);
  Caffe::set_solver_rank(7);  // lines 7, 15, ...: none of the 7
  const string message = this->SetUpError(this->MakeParam(1));
  EXPECT_NE(message.find("fewer than the 8 solvers"), string::npos) << message;
}

TYPED_TEST(ImageDataLayerTest, AnyNumberOfThreadsGivesTheSameBatches) {
  using Dtype = typename TypeParam::Dtype;
  ExpectSameBatchesForAnyThreadCount<Dtype>(
      {1, 2, 5}, /*batches=*/4, /*seed=*/77,
      [this](int threads) -> std::unique_ptr<Layer<Dtype>> {
        const string image_param = "shuffle: true threads: " + std::to_string(threads);
        return this->MakeLayer(
            this->MakeParam(4, image_param, "crop_size: 5 mirror: true scale: 0.5"));
      },
      this->top_);
}

TYPED_TEST(ImageDataLayerTest, RestoredCursorContinuesWithIdenticalBatches) {
  using Dtype = typename TypeParam::Dtype;
  const LayerParameter param = this->MakeParam(3, "shuffle: true", "crop_size: 4 mirror: true");
  Caffe::set_random_seed(5);
  auto layer = this->MakeLayer(param);
  for (int i = 0; i < 2; ++i) this->ForwardValues(layer.get());
  const DataCursor saved = layer->SaveCursor();
  EXPECT_EQ(saved.layer(), "images");
  EXPECT_EQ(saved.records_read(), 6u);
  vector<vector<Dtype>> continuation;
  for (int i = 0; i < 5; ++i) continuation.push_back(this->ForwardValues(layer.get()));
  layer.reset();

  // A new layer (another seed: another shuffle) given the saved cursor, as after a restart.
  Caffe::set_random_seed(999);
  auto resumed = this->MakeLayer(param);
  this->ForwardValues(resumed.get());
  resumed->RestoreCursor(saved);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(this->ForwardValues(resumed.get()), continuation[i]) << "batch " << i;
  }
}

TYPED_TEST(ImageDataLayerTest, CursorOfAnotherListIsRefused) {
  auto layer = this->MakeLayer(this->MakeParam(2));
  DataCursor cursor = layer->SaveCursor();
  DataCursor other = cursor;
  other.set_key("epoch 0 position 1 of 99 images (shuffle seed 0)");
  try {
    layer->RestoreCursor(other);
    FAIL() << "a position of a 99-image list was accepted";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("list of 99 images"), string::npos) << error.what();
  }
  other.set_key("00000003");  // a Data layer's key
  EXPECT_THROW(layer->RestoreCursor(other), Error);
  layer->RestoreCursor(cursor);
  EXPECT_EQ(this->ForwardLabels(layer.get()), (vector<int>{10, 11}));
}

TYPED_TEST(ImageDataLayerTest, MissingImageIsAnErrorNamingFileAndLine) {
  std::ofstream(this->list_, std::ios::app) << "missing.png 3\n";
  auto layer = this->MakeLayer(this->MakeParam(4));
  this->ForwardLabels(layer.get());
  try {
    layer->Forward({}, this->top_);
    FAIL() << "the batch with a missing image was delivered";
  } catch (const Error& error) {
    const string message = error.what();
    EXPECT_NE(message.find("ImageData layer 'images'"), string::npos) << message;
    EXPECT_NE(message.find("line 8 of '" + this->list_ + "'"), string::npos) << message;
    EXPECT_NE(message.find(this->dir_.path() + "/missing.png"), string::npos) << message;
  }
}

TYPED_TEST(ImageDataLayerTest, ImagesOfAnotherSizeNeedBatchSizeOne) {
  cv::imwrite(this->dir_.path() + "/img1.jpg", PatternImage(3, 3, 3, 1));
  auto layer = this->MakeLayer(this->MakeParam(2));
  EXPECT_THROW(layer->Forward({}, this->top_), Error);
  auto single = this->MakeLayer(this->MakeParam(1));
  this->ForwardLabels(single.get());
  this->ForwardLabels(single.get());
  EXPECT_EQ(this->data_.shape(), (vector<int>{1, 3, 3, 3}));
}

TYPED_TEST(ImageDataLayerTest, BadListsAndParametersAreClearErrors) {
  std::ofstream(this->list_) << "img0.png 1\nimg1.jpg one\n";
  string message = this->SetUpError(this->MakeParam(1));
  EXPECT_NE(message.find("line 2"), string::npos) << message;
  EXPECT_NE(message.find("label 'one' is not an integer"), string::npos) << message;

  std::ofstream(this->list_) << "\n";
  message = this->SetUpError(this->MakeParam(1));
  EXPECT_NE(message.find("names no images"), string::npos) << message;

  std::ofstream(this->list_) << "img0.png 1\n";
  message = this->SetUpError(this->MakeParam(1, "new_height: 4"));
  EXPECT_NE(message.find("set both"), string::npos) << message;
  message = this->SetUpError(this->MakeParam(0));
  EXPECT_NE(message.find("batch_size"), string::npos) << message;

  LayerParameter no_list = this->MakeParam(1);
  no_list.mutable_image_data_param()->set_source(this->dir_.path() + "/nothing.txt");
  message = this->SetUpError(no_list);
  EXPECT_NE(message.find("cannot open image list"), string::npos) << message;

  std::ofstream(this->list_) << "missing.png 1\n";
  message = this->SetUpError(this->MakeParam(1));
  EXPECT_NE(message.find("line 1 of '" + this->list_ + "'"), string::npos) << message;
  EXPECT_NE(message.find("No such file"), string::npos) << message;
}

#endif  // USE_OPENCV

}  // namespace
}  // namespace caffe
