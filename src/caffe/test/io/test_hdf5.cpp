// HDF5 helpers: N-D datasets round trip (float and double, any number of axes including none),
// conversion between the two, shape checks, nested groups from names with '/', scalar ints and
// strings, link listing, and errors that name the missing file or dataset.
#include <algorithm>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "caffe/io/hdf5.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {}  // namespace

template <typename Dtype>
class Hdf5Test : public ::testing::Test {
 protected:
  Hdf5Test() : path_(MakeTempDir("caffe_test_hdf5") + "/test.h5") {}
  std::string path_;
};
TYPED_TEST_SUITE(Hdf5Test, TestDtypes);

TYPED_TEST(Hdf5Test, DatasetsRoundTripForEveryNumberOfAxes) {
  using Dtype = TypeParam;
  const std::vector<std::vector<int>> shapes = {{}, {7}, {3, 4}, {2, 3, 4, 5}, {1, 2, 1, 3, 2}};
  {
    Hdf5File file(this->path_, H5F_ACC_TRUNC);
    for (size_t i = 0; i < shapes.size(); ++i) {
      Blob<Dtype> blob(shapes[i]);
      FillGaussian(&blob, static_cast<unsigned>(i));
      hdf5_save_nd_dataset(file.id(), "blob" + std::to_string(i), blob);
    }
  }
  Hdf5File file(this->path_, H5F_ACC_RDONLY);
  for (size_t i = 0; i < shapes.size(); ++i) {
    Blob<Dtype> expected(shapes[i]), read;
    FillGaussian(&expected, static_cast<unsigned>(i));
    const std::string name = "blob" + std::to_string(i);
    hdf5_load_nd_dataset(file.id(), name.c_str(), 0, kMaxBlobAxes, &read, /*reshape=*/true);
    ASSERT_EQ(read.shape(), shapes[i]) << name;
    for (int j = 0; j < expected.count(); ++j) {
      ASSERT_EQ(read.cpu_data()[j], expected.cpu_data()[j]) << name << " value " << j;
    }
  }
}

TYPED_TEST(Hdf5Test, DiffIsWrittenWhenAsked) {
  using Dtype = TypeParam;
  Blob<Dtype> blob(std::vector<int>{2, 3});
  FillGaussian(&blob, 1);
  caffe_set(6, Dtype(-4), blob.mutable_cpu_diff());
  {
    Hdf5File file(this->path_, H5F_ACC_TRUNC);
    hdf5_save_nd_dataset(file.id(), "diff", blob, /*write_diff=*/true);
  }
  Hdf5File file(this->path_, H5F_ACC_RDONLY);
  Blob<Dtype> read(std::vector<int>{2, 3});
  hdf5_load_nd_dataset(file.id(), "diff", 2, 2, &read);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(read.cpu_data()[i], -4);
}

TYPED_TEST(Hdf5Test, FloatAndDoubleFilesReadIntoEitherType) {
  using Dtype = TypeParam;
  // A float blob written, read as Dtype, and a double blob likewise.
  Blob<float> as_float(std::vector<int>{5});
  Blob<double> as_double(std::vector<int>{5});
  for (int i = 0; i < 5; ++i) {
    as_float.mutable_cpu_data()[i] = 0.5f * i;
    as_double.mutable_cpu_data()[i] = 0.25 * i;
  }
  {
    Hdf5File file(this->path_, H5F_ACC_TRUNC);
    hdf5_save_nd_dataset(file.id(), "f", as_float);
    hdf5_save_nd_dataset(file.id(), "d", as_double);
  }
  Hdf5File file(this->path_, H5F_ACC_RDONLY);
  Blob<Dtype> read;
  hdf5_load_nd_dataset(file.id(), "f", 1, 1, &read, true);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(read.cpu_data()[i], Dtype(0.5 * i));
  hdf5_load_nd_dataset(file.id(), "d", 1, 1, &read, true);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(read.cpu_data()[i], Dtype(0.25 * i));
}

TYPED_TEST(Hdf5Test, ShapeAndRankMismatchesNameTheDataset) {
  using Dtype = TypeParam;
  {
    Hdf5File file(this->path_, H5F_ACC_TRUNC);
    Blob<Dtype> blob(std::vector<int>{2, 3, 4});
    hdf5_save_nd_dataset(file.id(), "conv1_w", blob);
  }
  Hdf5File file(this->path_, H5F_ACC_RDONLY);
  Blob<Dtype> wrong_shape(std::vector<int>{2, 3, 5});
  std::string message =
      ErrorOf([&] { hdf5_load_nd_dataset(file.id(), "conv1_w", 3, 3, &wrong_shape); });
  EXPECT_NE(message.find("'conv1_w'"), std::string::npos) << message;
  EXPECT_NE(message.find("2 3 4 (24)"), std::string::npos) << message;
  EXPECT_NE(message.find("2 3 5 (30)"), std::string::npos) << message;
  EXPECT_EQ(wrong_shape.shape(), (std::vector<int>{2, 3, 5}));  // left alone
  message = ErrorOf([&] { hdf5_load_nd_dataset(file.id(), "conv1_w", 4, 4, &wrong_shape, true); });
  EXPECT_NE(message.find("'conv1_w' has 3 axes; expected 4 to 4"), std::string::npos) << message;
  message = ErrorOf([&] { hdf5_load_nd_dataset(file.id(), "conv1_w", 1, 2, &wrong_shape, true); });
  EXPECT_NE(message.find("has 3 axes"), std::string::npos) << message;
}

TYPED_TEST(Hdf5Test, MissingDatasetIsNamed) {
  { Hdf5File file(this->path_, H5F_ACC_TRUNC); }
  Hdf5File file(this->path_, H5F_ACC_RDONLY);
  Blob<TypeParam> blob;
  for (const char* name : {"fc8", "group/fc8", "/a/b/c"}) {
    const std::string message =
        ErrorOf([&] { hdf5_load_nd_dataset(file.id(), name, 0, 4, &blob, true); });
    EXPECT_NE(message.find(std::string("'") + name + "' not found"), std::string::npos) << message;
  }
}

TYPED_TEST(Hdf5Test, NamesWithSlashesMakeNestedGroups) {
  using Dtype = TypeParam;
  Blob<Dtype> weights(std::vector<int>{4, 2});
  FillGaussian(&weights, 9);
  {
    Hdf5File file(this->path_, H5F_ACC_TRUNC);
    // GoogLeNet's layer names hold '/': "inception_3a/1x1" is group inception_3a, then 1x1.
    hid_t data = hdf5_create_group(file.id(), "data");
    hid_t layer = hdf5_create_group(data, "inception_3a/1x1");
    ASSERT_GE(layer, 0);
    hdf5_save_nd_dataset(layer, "0", weights);
    H5Gclose(layer);
    // Creating an existing group opens it, and a sibling under the same parent is added.
    hid_t again = hdf5_create_group(data, "inception_3a/1x1");
    ASSERT_GE(again, 0);
    EXPECT_EQ(hdf5_get_num_links(again), 1);
    H5Gclose(again);
    hid_t sibling = hdf5_create_group(data, "inception_3a/3x3");
    H5Gclose(sibling);
    H5Gclose(data);
  }
  Hdf5File file(this->path_, H5F_ACC_RDONLY);
  EXPECT_TRUE(hdf5_path_exists(file.id(), "data/inception_3a/1x1/0"));
  EXPECT_TRUE(hdf5_path_exists(file.id(), "/data//inception_3a/"));
  EXPECT_FALSE(hdf5_path_exists(file.id(), "data/inception_3a/5x5"));
  EXPECT_FALSE(hdf5_path_exists(file.id(), "data/inception_3b/1x1"));
  EXPECT_FALSE(hdf5_path_exists(file.id(), ""));
  Blob<Dtype> read;
  hdf5_load_nd_dataset(file.id(), "data/inception_3a/1x1/0", 2, 2, &read, true);
  ASSERT_EQ(read.shape(), weights.shape());
  for (int i = 0; i < weights.count(); ++i) EXPECT_EQ(read.cpu_data()[i], weights.cpu_data()[i]);
  // The parent group lists both children, by name.
  hid_t parent = H5Gopen2(file.id(), "data/inception_3a", H5P_DEFAULT);
  ASSERT_GE(parent, 0);
  ASSERT_EQ(hdf5_get_num_links(parent), 2);
  std::vector<std::string> children{hdf5_get_name_by_idx(parent, 0),
                                    hdf5_get_name_by_idx(parent, 1)};
  std::sort(children.begin(), children.end());
  EXPECT_EQ(children, (std::vector<std::string>{"1x1", "3x3"}));
  EXPECT_THROW(hdf5_get_name_by_idx(parent, 2), Error);
  H5Gclose(parent);
}

TYPED_TEST(Hdf5Test, IntsAndStringsRoundTrip) {
  {
    Hdf5File file(this->path_, H5F_ACC_TRUNC);
    hdf5_save_int(file.id(), "iter", 10000);
    hdf5_save_int(file.id(), "negative", -3);
    hdf5_save_string(file.id(), "learned_net", "snapshots/lenet_iter_10000.caffemodel.h5");
    hdf5_save_string(file.id(), "empty", "");
  }
  Hdf5File file(this->path_, H5F_ACC_RDONLY);
  EXPECT_EQ(hdf5_load_int(file.id(), "iter"), 10000);
  EXPECT_EQ(hdf5_load_int(file.id(), "negative"), -3);
  EXPECT_EQ(hdf5_load_string(file.id(), "learned_net"), "snapshots/lenet_iter_10000.caffemodel.h5");
  EXPECT_EQ(hdf5_load_string(file.id(), "empty"), "");
  EXPECT_NE(ErrorOf([&] { hdf5_load_int(file.id(), "current_step"); }).find("'current_step'"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { hdf5_load_string(file.id(), "nope"); }).find("'nope'"),
            std::string::npos);
}

TYPED_TEST(Hdf5Test, MissingOrForeignFilesAreNamed) {
  const std::string missing = this->path_ + ".missing";
  std::string message = ErrorOf([&] { Hdf5File file(missing, H5F_ACC_RDONLY); });
  EXPECT_NE(message.find("'" + missing + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("no such file"), std::string::npos) << message;
  const std::string text = this->path_ + ".txt";
  std::ofstream(text) << "not hdf5";
  message = ErrorOf([&] { Hdf5File file(text, H5F_ACC_RDONLY); });
  EXPECT_NE(message.find("'" + text + "' is not an HDF5 file"), std::string::npos) << message;
  const std::string unwritable = this->path_ + ".d/no/such/dir/x.h5";
  message = ErrorOf([&] { Hdf5File file(unwritable, H5F_ACC_TRUNC); });
  EXPECT_NE(message.find("'" + unwritable + "'"), std::string::npos) << message;
}

}  // namespace caffe
