// Proto file I/O: text and binary round trips, errors that name the file (with line and column for
// text), truncated binaries, large binaries, and atomic writes that keep the old file when the
// writer fails and leave no temporary file behind.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/io/io.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* handle = opendir(dir.c_str())) {
    while (dirent* entry = readdir(handle)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(handle);
  }
  std::sort(names.begin(), names.end());
  return names;
}

NetParameter SampleNet() {
  NetParameter net;
  ParseProtoFromText(R"(
    name: "Sample"
    layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 dim: 3 } } }
    layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
      inner_product_param { num_output: 2 } param { lr_mult: 1 } param { lr_mult: 2 } }
  )",
                     "sample", &net);
  Blob<float> weights(std::vector<int>{2, 3});
  FillGaussian(&weights, 3);
  weights.ToProto(net.mutable_layer(1)->add_blobs());
  return net;
}

}  // namespace

class IoTest : public ::testing::Test {
 protected:
  IoTest() : dir_(MakeTempDir("caffe_test_io")) {}
  std::string dir_;
};

TEST_F(IoTest, TextFilesRoundTrip) {
  const NetParameter net = SampleNet();
  const std::string path = dir_ + "/net.prototxt";
  WriteProtoToTextFile(net, path);
  NetParameter read;
  ReadProtoFromTextFile(path, &read);
  EXPECT_EQ(read.SerializeAsString(), net.SerializeAsString());
  EXPECT_NE(ReadWholeFile(path).find("name: \"Sample\""), std::string::npos);
}

TEST_F(IoTest, BinaryFilesRoundTrip) {
  const NetParameter net = SampleNet();
  const std::string path = dir_ + "/net.caffemodel";
  WriteProtoToBinaryFile(net, path);
  EXPECT_EQ(ReadWholeFile(path), net.SerializeAsString());
  NetParameter read;
  ReadProtoFromBinaryFile(path, &read);
  EXPECT_EQ(read.SerializeAsString(), net.SerializeAsString());
}

TEST_F(IoTest, BinaryFilesOverSixtyFourMegabytesRead) {
  // Protobuf's historical default limit is 64 MB; VGG-16's caffemodel is over 500 MB.
  BlobProto big;
  big.mutable_shape()->add_dim(17 * 1024 * 1024);
  for (int i = 0; i < 17 * 1024 * 1024; ++i) big.add_data(static_cast<float>(i % 1000));
  const std::string path = dir_ + "/big.binaryproto";
  WriteProtoToBinaryFile(big, path);
  BlobProto read;
  ReadProtoFromBinaryFile(path, &read);
  ASSERT_EQ(read.data_size(), big.data_size());
  EXPECT_EQ(read.data(12345), big.data(12345));
}

TEST_F(IoTest, TextSyntaxErrorGivesPathLineAndColumn) {
  const std::string path = dir_ + "/bad.prototxt";
  WriteFile(path, "name: \"x\"\nlayer {\n  nme: \"y\"\n}\n");
  NetParameter net;
  const std::string message = ErrorOf([&] { ReadProtoFromTextFile(path, &net); });
  // Protobuf's convention, which BVLC's messages show too ("54:14" for the 9-letter field name at
  // column 5 of line 54 in published/densenet121/SOURCE.txt): the column just after the token.
  EXPECT_EQ(message.rfind(path + ":3:6: ", 0), 0u) << message;
  EXPECT_NE(message.find("nme"), std::string::npos) << message;
  EXPECT_NE(message.find("caffe.NetParameter"), std::string::npos) << message;
}

TEST_F(IoTest, TextErrorsCountLinesAndColumnsFromOne) {
  NetParameter net;
  // A missing closing brace is found at the end of the input: line 2, after "layer {".
  std::string message = ErrorOf([&] { ParseProtoFromText("name: 'a'\nlayer {", "src", &net); });
  EXPECT_EQ(message.rfind("src:2:", 0), 0u) << message;
  // A bad value on the first line: the column after "maybe".
  message = ErrorOf([&] { ParseProtoFromText("force_backward: maybe", "src", &net); });
  EXPECT_EQ(message.rfind("src:1:22: ", 0), 0u) << message;
}

TEST_F(IoTest, MissingFileIsNamed) {
  NetParameter net;
  const std::string path = dir_ + "/does_not_exist.prototxt";
  std::string message = ErrorOf([&] { ReadProtoFromTextFile(path, &net); });
  EXPECT_NE(message.find("'" + path + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("No such file"), std::string::npos) << message;
  message = ErrorOf([&] { ReadProtoFromBinaryFile(path, &net); });
  EXPECT_NE(message.find("'" + path + "'"), std::string::npos) << message;
}

TEST_F(IoTest, ReadingADirectoryIsAClearError) {
  NetParameter net;
  for (auto read : {&ReadProtoFromTextFile, &ReadProtoFromBinaryFile}) {
    const std::string message = ErrorOf([&] { read(dir_, &net); });
    EXPECT_NE(message.find("'" + dir_ + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("directory"), std::string::npos) << message;
  }
}

TEST_F(IoTest, TruncatedBinaryFileIsAClearError) {
  const std::string path = dir_ + "/cut.caffemodel";
  const std::string bytes = SampleNet().SerializeAsString();
  // Cut inside the packed weights of the last layer.
  WriteFile(path, bytes.substr(0, bytes.size() - 5));
  NetParameter net;
  const std::string message = ErrorOf([&] { ReadProtoFromBinaryFile(path, &net); });
  EXPECT_NE(message.find("'" + path + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  EXPECT_NE(message.find("caffe.NetParameter"), std::string::npos) << message;
}

TEST_F(IoTest, AtomicWriteKeepsTheOldFileWhenTheWriterThrows) {
  const std::string path = dir_ + "/model.caffemodel";
  WriteFile(path, "old content");
  EXPECT_THROW(AtomicWrite(path,
                           [](const std::string& temporary) {
                             WriteFile(temporary, "half of the new con");
                             throw std::runtime_error("disk full");
                           }),
               std::runtime_error);
  EXPECT_EQ(ReadWholeFile(path), "old content");
  EXPECT_EQ(ListDir(dir_), std::vector<std::string>{"model.caffemodel"});
}

TEST_F(IoTest, AtomicWriteReplacesTheFileThroughATemporaryInTheSameFolder) {
  const std::string path = dir_ + "/state.solverstate";
  WriteFile(path, "old");
  std::string temporary_used;
  AtomicWrite(path, [&](const std::string& temporary) {
    temporary_used = temporary;
    // While writing, the target still holds the old content.
    EXPECT_EQ(ReadWholeFile(path), "old");
    WriteFile(temporary, "new");
  });
  EXPECT_EQ(ReadWholeFile(path), "new");
  EXPECT_EQ(temporary_used.rfind(dir_ + "/", 0), 0u) << temporary_used;
  EXPECT_NE(temporary_used, path);
  EXPECT_EQ(ListDir(dir_), std::vector<std::string>{"state.solverstate"});
}

TEST_F(IoTest, FailedProtoWriteLeavesNoTemporaryFile) {
  // The target is a directory: the rename fails after the temporary file was written.
  const std::string target = dir_ + "/occupied";
  ASSERT_EQ(mkdir(target.c_str(), 0755), 0);
  WriteFile(target + "/inside", "x");
  const std::string message = ErrorOf([&] { WriteProtoToBinaryFile(SampleNet(), target); });
  EXPECT_NE(message.find("'" + target + "'"), std::string::npos) << message;
  EXPECT_EQ(ListDir(dir_), std::vector<std::string>{"occupied"});
}

TEST_F(IoTest, WritingIntoAMissingFolderNamesTheFile) {
  const std::string path = dir_ + "/no/such/folder/net.prototxt";
  for (auto write : {&WriteProtoToTextFile, &WriteProtoToBinaryFile}) {
    const std::string message = ErrorOf([&] { write(SampleNet(), path); });
    EXPECT_NE(message.find("'" + path + "'"), std::string::npos) << message;
  }
  EXPECT_EQ(ListDir(dir_), std::vector<std::string>{});
}

TEST(IoPathTest, StripExtensionRemovesOnlyTheLastExtensionOfTheFileName) {
  EXPECT_EQ(StripExtension("snapshots/lenet_iter_100.caffemodel"), "snapshots/lenet_iter_100");
  EXPECT_EQ(StripExtension("a.solverstate.h5"), "a.solverstate");
  EXPECT_EQ(StripExtension("no_extension"), "no_extension");
  EXPECT_EQ(StripExtension("dir.v2/file"), "dir.v2/file");  // the dot is in a folder name
  EXPECT_EQ(StripExtension(".caffemodel"), "");
}

TEST(IoPathTest, JoinPutsTheSeparatorBetweenItemsOnly) {
  EXPECT_EQ(Join({}, ", "), "");
  EXPECT_EQ(Join({"a"}, ", "), "a");
  EXPECT_EQ(Join({"a", "", "c"}, ", "), "a, , c");
}

TEST(IoPathTest, EndsWithAndFileQueries) {
  EXPECT_TRUE(EndsWith("w.caffemodel.h5", ".h5"));
  EXPECT_TRUE(EndsWith("x", ""));
  EXPECT_FALSE(EndsWith("h5", ".h5"));
  EXPECT_FALSE(EndsWith("w.caffemodel", ".h5"));
  const std::string dir = MakeTempDir("caffe_test_io_paths");
  WriteFile(dir + "/f", "");
  EXPECT_TRUE(FileExists(dir + "/f"));
  EXPECT_FALSE(IsDirectory(dir + "/f"));
  EXPECT_TRUE(FileExists(dir));
  EXPECT_TRUE(IsDirectory(dir));
  EXPECT_FALSE(FileExists(dir + "/g"));
  EXPECT_FALSE(IsDirectory(dir + "/g"));
}

}  // namespace caffe
