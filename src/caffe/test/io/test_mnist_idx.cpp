// IdxFile: MNIST idx headers and items read in any order; every malformed file is one
// caffe::Error naming it.
#include <string>
#include <vector>

#include "caffe/io/mnist_idx.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/util/error.hpp"

namespace caffe {
namespace {

class IdxFileTest : public ::testing::Test {
 protected:
  IdxFileTest()
      : dir_(MakeTempDir("caffe_test_mnist_idx")),
        images_(dir_.path() + "/images-idx3-ubyte"),
        labels_(dir_.path() + "/labels-idx1-ubyte") {}

  /// `count` images of rows x cols, pixel j of image i = 3 i + j; label of image i = 100 + i.
  void Write(uint32_t count, uint32_t rows, uint32_t cols, IdxMagic magic = {}) {
    WriteMnistIdx(
        images_, labels_, count, rows, cols, [](uint32_t i, uint32_t j) { return 3 * i + j; },
        [](uint32_t i) { return 100 + i; }, magic);
  }

  /// The message of the caffe::Error that opening `path` as `kind` throws ("" if none).
  static string OpenError(const string& path, IdxFile::Kind kind) {
    try {
      IdxFile file(path, kind);
    } catch (const Error& error) {
      return error.what();
    }
    return "";
  }

  ScopedTempDir dir_;
  string images_, labels_;
};

TEST_F(IdxFileTest, ReadsTheHeaderAndItemsInAnyOrder) {
  Write(5, 2, 3);
  IdxFile images(images_, IdxFile::kImages);
  EXPECT_EQ(images.path(), images_);
  EXPECT_EQ(images.count(), 5u);
  EXPECT_EQ(images.rows(), 2u);
  EXPECT_EQ(images.cols(), 3u);
  EXPECT_EQ(images.item_bytes(), 6u);
  IdxFile labels(labels_, IdxFile::kLabels);
  EXPECT_EQ(labels.count(), 5u);
  EXPECT_EQ(labels.item_bytes(), 1u);
  CheckImagesMatchLabels(images, labels);

  std::vector<char> pixels(6);
  for (uint32_t i : {4u, 0u, 2u, 2u, 3u, 1u}) {
    images.Read(i, pixels.data());
    for (uint32_t j = 0; j < 6; ++j) EXPECT_EQ(static_cast<uint8_t>(pixels[j]), 3 * i + j);
    char label = 0;
    labels.Read(i, &label);
    EXPECT_EQ(static_cast<uint8_t>(label), 100 + i);
  }
}

TEST_F(IdxFileTest, MalformedFilesAreOneErrorNamingThem) {
  EXPECT_NE(OpenError(images_, IdxFile::kImages).find("cannot open image file '" + images_),
            string::npos);
  Write(2, 2, 2, {/*image=*/2049});
  EXPECT_NE(OpenError(images_, IdxFile::kImages)
                .find("'" + images_ +
                      "' is not an MNIST image file: its magic number is 2049, "
                      "expected 2051"),
            string::npos);
  EXPECT_NE(OpenError(labels_, IdxFile::kImages).find("magic number is 2049"), string::npos);
  EXPECT_EQ(OpenError(labels_, IdxFile::kLabels), "");

  WriteWholeFile(images_, string("\x1f\x8b\x08\x00\x00\x00\x00\x00", 8));
  EXPECT_NE(OpenError(images_, IdxFile::kImages).find("gzip-compressed: gunzip it first"),
            string::npos);
  WriteWholeFile(images_, string("\x00\x00", 2));
  EXPECT_NE(OpenError(images_, IdxFile::kImages).find("too short to be an MNIST idx file"),
            string::npos);

  Write(3, 0, 2);
  EXPECT_NE(OpenError(images_, IdxFile::kImages).find("declares images of 0 x 2 pixels"),
            string::npos);

  Write(3, 2, 2);
  WriteWholeFile(images_, ReadWholeFile(images_).substr(0, 16 + 11));
  EXPECT_NE(OpenError(images_, IdxFile::kImages)
                .find("is truncated: its header announces 3 items (28 bytes) but it has 27 bytes"),
            string::npos);
}

TEST_F(IdxFileTest, ImagesAndLabelsOfDifferentCountsAreNamed) {
  Write(3, 1, 1, {2051, 2049, /*label_count=*/2});
  IdxFile images(images_, IdxFile::kImages);
  IdxFile labels(labels_, IdxFile::kLabels);
  try {
    CheckImagesMatchLabels(images, labels);
    FAIL() << "no error for 3 images and 2 labels";
  } catch (const Error& error) {
    EXPECT_EQ(string(error.what()), "image file '" + images_ + "' holds 3 images but label file '" +
                                        labels_ + "' holds 2 labels");
  }
}

}  // namespace
}  // namespace caffe
