// libcaffe maps OpenCV (and the libraries Debian's imgcodecs pulls in) only when a process first
// touches an image: the OpenCV code is a module loaded on demand (io/image_codec.hpp). This
// program does not link OpenCV itself (it includes no image_test_util.hpp), so what is mapped is
// what libcaffe loaded.
#include <fstream>
#include <string>

#include "caffe/io/image_io.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

bool OpenCVMapped() {
  std::ifstream maps("/proc/self/maps");
  string line;
  while (std::getline(maps, line)) {
    if (line.find("libopencv_imgcodecs") != string::npos) return true;
  }
  return false;
}

TEST(ImageModuleTest, OpenCVIsMappedOnlyWhenAnImageIsFirstRead) {
#ifndef USE_OPENCV
  GTEST_SKIP() << "this build has no OpenCV (CAFFE_OPENCV=OFF or the library is missing)";
#endif
  ASSERT_FALSE(OpenCVMapped()) << "OpenCV was mapped before any image call";
  const ScopedTempDir dir(MakeTempDir("caffe_test_image_module"));
  const string path = dir.path() + "/gray.pgm";
  {
    std::ofstream file(path, std::ios::binary);
    file << "P5\n3 2\n255\n";
    const unsigned char pixels[6] = {0, 10, 20, 200, 210, 255};
    file.write(reinterpret_cast<const char*>(pixels), sizeof(pixels));
  }
  Datum datum;
  ReadImageToDatum(path, 4, 0, 0, false, "", &datum);
  EXPECT_TRUE(OpenCVMapped());
  EXPECT_TRUE(ImageSupportAvailable());
  EXPECT_EQ(ImageSupportProblem(), "");
  EXPECT_EQ(datum.channels(), 1);
  EXPECT_EQ(datum.height(), 2);
  EXPECT_EQ(datum.width(), 3);
  EXPECT_EQ(datum.label(), 4);
  EXPECT_EQ(datum.data(), string("\x00\x0a\x14\xc8\xd2\xff", 6));
}

TEST(ImageModuleTest, ParsingAnImageListLoadsNoOpenCV) {
  const ScopedTempDir dir(MakeTempDir("caffe_test_image_module"));
  const string list = dir.path() + "/list.txt";
  std::ofstream(list) << "a.jpg 1\nb c.png 2\n";
  const vector<ImageListEntry> entries = ReadImageList(list);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].path, "b c.png");
  EXPECT_FALSE(OpenCVMapped());
}

}  // namespace
}  // namespace caffe
