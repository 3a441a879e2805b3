// HDF5Output: the file it writes (datasets "data" and "label" in BVLC's 4-D layout), a round
// trip through HDF5Data, and errors (second batch, mismatched batch sizes, bad file name).
#include <fstream>
#include <string>
#include <vector>

#include "caffe/io/hdf5.hpp"
#include "caffe/io/io.hpp"
#include "caffe/layers/hdf5_data_layer.hpp"
#include "caffe/layers/hdf5_output_layer.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

// Legend: N batch.
template <typename TypeParam>
class HDF5OutputLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;

  HDF5OutputLayerTest()
      : dir_(MakeTempDir("caffe_test_hdf5_output")),
        file_name_(dir_ + "/out.h5"),
        data_(vector<int>{2, 3, 4, 5}),
        label_(vector<int>{2}) {
    FillGaussian<Dtype>(&data_, 1701);
    label_.mutable_cpu_data()[0] = 3;
    label_.mutable_cpu_data()[1] = 1;
  }

  LayerParameter Param(const std::string& file_name) const {
    return ParseLayerParam("name: 'out' type: 'HDF5Output' hdf5_output_param { file_name: '" +
                           file_name + "' }");
  }

  std::string dir_, file_name_;
  Blob<Dtype> data_, label_;
  Blobs<Dtype> bottom_vec_{&data_, &label_}, top_vec_;
};
TYPED_TEST_SUITE(HDF5OutputLayerTest, TestDtypesAndDevices);

TYPED_TEST(HDF5OutputLayerTest, WritesDataAndLabelDatasetsIn4DLayout) {
  using Dtype = typename TypeParam::Dtype;
  {
    auto layer = LayerRegistry<Dtype>::CreateLayer(this->Param(this->file_name_));
    EXPECT_STREQ(layer->type(), "HDF5Output");
    layer->SetUp(this->bottom_vec_, this->top_vec_);
    EXPECT_TRUE(FileExists(this->file_name_));  // created at setup
    layer->Forward(this->bottom_vec_, this->top_vec_);
  }
  Hdf5File file(this->file_name_, H5F_ACC_RDONLY);
  EXPECT_EQ(hdf5_get_num_links(file.id()), 2);
  Blob<Dtype> data, label;
  hdf5_load_nd_dataset(file.id(), "data", 4, 4, &data, true);
  hdf5_load_nd_dataset(file.id(), "label", 4, 4, &label, true);
  EXPECT_EQ(data.shape(), this->data_.shape());
  EXPECT_EQ(label.shape(), (vector<int>{2, 1, 1, 1}));  // (N) padded to (N, C, H, W)
  for (int i = 0; i < data.count(); ++i) EXPECT_EQ(data.cpu_data()[i], this->data_.cpu_data()[i]);
  EXPECT_EQ(label.cpu_data()[0], Dtype(3));
  EXPECT_EQ(label.cpu_data()[1], Dtype(1));
  // The datasets are stored in the net's precision.
  const hid_t dataset = H5Dopen2(file.id(), "data", H5P_DEFAULT);
  ASSERT_GE(dataset, 0);
  const hid_t type = H5Dget_type(dataset);
  EXPECT_EQ(H5Tget_size(type), sizeof(Dtype));
  H5Tclose(type);
  H5Dclose(dataset);
}

TYPED_TEST(HDF5OutputLayerTest, BatchIsReadableWhileTheLayerLives) {
  using Dtype = typename TypeParam::Dtype;
  HDF5OutputLayer<Dtype> layer(this->Param(this->file_name_));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(layer.file_name(), this->file_name_);
  // What HDF5Data reads back is what was written.
  const std::string list = this->dir_ + "/list.txt";
  std::ofstream(list) << this->file_name_ << "\n";
  HDF5DataLayer<Dtype> reader(
      ParseLayerParam("name: 'in' top: 'data' top: 'label' hdf5_data_param { source: '" + list +
                      "' batch_size: 2 }"));
  Blob<Dtype> data, label;
  Blobs<Dtype> no_bottoms, tops{&data, &label};
  reader.SetUp(no_bottoms, tops);
  reader.Forward(no_bottoms, tops);
  EXPECT_EQ(data.shape(), this->data_.shape());
  for (int i = 0; i < data.count(); ++i) EXPECT_EQ(data.cpu_data()[i], this->data_.cpu_data()[i]);
  EXPECT_EQ(label.cpu_data()[0], Dtype(3));
  EXPECT_EQ(label.cpu_data()[1], Dtype(1));
}

TYPED_TEST(HDF5OutputLayerTest, SetupTruncatesAnExistingFile) {
  using Dtype = typename TypeParam::Dtype;
  std::ofstream(this->file_name_) << "not HDF5";
  {
    HDF5OutputLayer<Dtype> layer(this->Param(this->file_name_));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
  }
  Hdf5File file(this->file_name_, H5F_ACC_RDONLY);  // a valid, empty HDF5 file now
  EXPECT_EQ(hdf5_get_num_links(file.id()), 0);
}

// Expects `run` to throw a caffe::Error containing every part.
template <typename Run>
void ExpectError(Run run, const vector<std::string>& parts) {
  try {
    run();
    ADD_FAILURE() << "expected caffe::Error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("HDF5Output layer 'out': "), std::string::npos) << message;
    for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
  }
}

TYPED_TEST(HDF5OutputLayerTest, RejectsASecondBatchLikeBVLC) {
  using Dtype = typename TypeParam::Dtype;
  HDF5OutputLayer<Dtype> layer(this->Param(this->file_name_));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  ExpectError([&] { layer.Forward(this->bottom_vec_, this->top_vec_); },
              {this->file_name_, "one batch per file"});
}

TYPED_TEST(HDF5OutputLayerTest, RejectsMismatchedBatchesAndTooManyAxes) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> three_labels(vector<int>{3});
  Blobs<Dtype> mismatched{&this->data_, &three_labels};
  HDF5OutputLayer<Dtype> layer(this->Param(this->file_name_));
  layer.SetUp(mismatched, this->top_vec_);
  ExpectError([&] { layer.Forward(mismatched, this->top_vec_); }, {"same batch size", "(2 vs. 3)"});
  Blob<Dtype> five_axes(vector<int>{2, 1, 1, 1, 2});
  Blobs<Dtype> deep{&five_axes, &this->label_};
  HDF5OutputLayer<Dtype> deep_layer(this->Param(this->dir_ + "/deep.h5"));
  deep_layer.SetUp(deep, this->top_vec_);
  ExpectError([&] { deep_layer.Forward(deep, this->top_vec_); },
              {"bottom[0] must have 1 to 4 axes", "2 1 1 1 2"});
}

TYPED_TEST(HDF5OutputLayerTest, RejectsMissingOrUncreatableFile) {
  using Dtype = typename TypeParam::Dtype;
  HDF5OutputLayer<Dtype> unnamed(ParseLayerParam("name: 'out'"));
  ExpectError([&] { unnamed.SetUp(this->bottom_vec_, this->top_vec_); },
              {"hdf5_output_param.file_name is not set"});
  const std::string bad = this->dir_ + "/no_such_dir/out.h5";
  HDF5OutputLayer<Dtype> layer(this->Param(bad));
  ExpectError([&] { layer.SetUp(this->bottom_vec_, this->top_vec_); }, {bad});
}

}  // namespace caffe
