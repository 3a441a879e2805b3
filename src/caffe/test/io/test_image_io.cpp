// Image files to Datum records and back: raw and encoded records, colour and gray, resizing,
// keeping a file's own bytes when nothing changes, decoding, writing records as image files, the
// errors for missing and corrupt images, the check of a raw record against its shape, and the
// "path label" list parser. Without OpenCV the image tests are not compiled; one test checks the
// "needs OpenCV" error instead.
#include <fstream>
#include <string>
#include <vector>

#include "caffe/io/image_io.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/image_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

class ImageIOTest : public ::testing::Test {
 protected:
  ImageIOTest() : dir_(MakeTempDir("caffe_test_image_io")) {}

  string Path(const string& name) const { return dir_.path() + "/" + name; }

  void WriteText(const string& name, const string& content) const {
    std::ofstream(Path(name), std::ios::binary) << content;
  }

  /// The error message of `call`, or "" when it does not throw caffe::Error.
  template <typename Call>
  static string ErrorOf(Call call) {
    try {
      call();
    } catch (const Error& error) {
      return error.what();
    }
    return "";
  }

  static vector<int> DatumValues(const Datum& datum) {
    vector<int> values;
    for (char value : datum.data()) values.push_back(static_cast<uint8_t>(value));
    return values;
  }

  ScopedTempDir dir_;
};

TEST_F(ImageIOTest, ListGivesPathsAndLabelsWithLineNumbers) {
  WriteText("list.txt", "a.png 0\r\n\nsub dir/with space.jpg 12\n  \nc.png -3");
  const vector<ImageListEntry> entries = ReadImageList(Path("list.txt"));
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].path, "a.png");
  EXPECT_EQ(entries[0].label, 0);
  EXPECT_EQ(entries[0].line, 1);
  EXPECT_EQ(entries[1].path, "sub dir/with space.jpg");
  EXPECT_EQ(entries[1].label, 12);
  EXPECT_EQ(entries[1].line, 3);
  EXPECT_EQ(entries[2].path, "c.png");
  EXPECT_EQ(entries[2].label, -3);
  EXPECT_EQ(entries[2].line, 5);
}

TEST_F(ImageIOTest, ListLabelThatIsNotAnIntegerNamesFileAndLine) {
  WriteText("list.txt", "a.png 1\nb.png cat\n");
  const string message = ErrorOf([&] { ReadImageList(Path("list.txt")); });
  EXPECT_NE(message.find(Path("list.txt")), string::npos) << message;
  EXPECT_NE(message.find("line 2"), string::npos) << message;
  EXPECT_NE(message.find("label 'cat' is not an integer"), string::npos) << message;
  WriteText("list.txt", "a.png 1.5\n");
  EXPECT_NE(ErrorOf([&] { ReadImageList(Path("list.txt")); }).find("'1.5' is not an integer"),
            string::npos);
}

TEST_F(ImageIOTest, ListLineWithoutLabelAndMissingListAreErrors) {
  WriteText("list.txt", "a.png 1\nb.png\n");
  const string message = ErrorOf([&] { ReadImageList(Path("list.txt")); });
  EXPECT_NE(message.find("line 2: 'b.png' has no label"), string::npos) << message;
  const string missing = ErrorOf([&] { ReadImageList(Path("missing.txt")); });
  EXPECT_NE(missing.find("cannot open image list '" + Path("missing.txt")), string::npos)
      << missing;
}

TEST_F(ImageIOTest, RawRecordMustHoldWhatItsShapeNeeds) {
  Datum datum;
  datum.set_channels(2);
  datum.set_height(3);
  datum.set_width(1);
  datum.set_data("abcdef");
  EXPECT_EQ(CheckRawDatum(datum), 6);
  datum.set_data("abcde");
  EXPECT_EQ(ErrorOf([&] { CheckRawDatum(datum); }),
            "the record holds 5 bytes of data but its shape 2x3x1 needs 6");
  datum.clear_data();
  for (int i = 0; i < 6; ++i) datum.add_float_data(0.5f * i);
  EXPECT_EQ(CheckRawDatum(datum), 6);
  datum.add_float_data(1.0f);
  EXPECT_EQ(ErrorOf([&] { CheckRawDatum(datum); }),
            "the record holds 7 float_data values but its shape 2x3x1 needs 6");
  datum.set_height(0);
  EXPECT_EQ(ErrorOf([&] { CheckRawDatum(datum); }),
            "the record's shape (channels x height x width) is 2x0x1; each must be at least 1");
  datum.set_height(1 << 20);
  datum.set_width(1 << 12);
  EXPECT_EQ(ErrorOf([&] { CheckRawDatum(datum); }),
            "the record's shape 2x1048576x4096 is too large");
}

#ifndef USE_OPENCV
TEST_F(ImageIOTest, WithoutOpenCVImagesAreAClearError) {
  EXPECT_FALSE(ImageSupportAvailable());
  Datum datum;
  const string message =
      ErrorOf([&] { ReadImageToDatum(Path("a.png"), 0, 0, 0, true, "", &datum); });
  EXPECT_NE(message.find("needs OpenCV"), string::npos) << message;
  datum.set_encoded(true);
  Datum decoded;
  EXPECT_NE(ErrorOf([&] { DecodeDatum(datum, ImageColor::kNative, &decoded); }).find("OpenCV"),
            string::npos);
}
#else

TEST_F(ImageIOTest, PngIsReadExactlyAsChannelsHeightWidthInBgrOrder) {
  const cv::Mat image = PatternImage(5, 7, 3, 1);
  cv::imwrite(Path("a.png"), image);
  Datum datum;
  ReadImageToDatum(Path("a.png"), 4, 0, 0, true, "", &datum);
  EXPECT_FALSE(datum.encoded());
  EXPECT_EQ(datum.label(), 4);
  EXPECT_EQ(datum.channels(), 3);
  EXPECT_EQ(datum.height(), 5);
  EXPECT_EQ(datum.width(), 7);
  EXPECT_EQ(DatumValues(datum), ImageValues(image));
  // Spot check of the layout: channel 2 (red), row 1, column 3.
  EXPECT_EQ(static_cast<uint8_t>(datum.data()[(2 * 5 + 1) * 7 + 3]), image.at<cv::Vec3b>(1, 3)[2]);
}

TEST_F(ImageIOTest, JpegGrayAndResizeMatchOpenCV) {
  cv::imwrite(Path("a.jpg"), PatternImage(12, 10, 3, 2));
  Datum datum;
  ReadImageToDatum(Path("a.jpg"), 0, 0, 0, true, "", &datum);
  EXPECT_EQ(DatumValues(datum), ImageValues(ExpectedImage(Path("a.jpg"), true)));
  ReadImageToDatum(Path("a.jpg"), 0, 0, 0, false, "", &datum);
  EXPECT_EQ(datum.channels(), 1);
  EXPECT_EQ(DatumValues(datum), ImageValues(ExpectedImage(Path("a.jpg"), false)));
  ReadImageToDatum(Path("a.jpg"), 0, 6, 8, true, "", &datum);
  EXPECT_EQ(datum.height(), 6);
  EXPECT_EQ(datum.width(), 8);
  EXPECT_EQ(DatumValues(datum), ImageValues(ExpectedImage(Path("a.jpg"), true, 6, 8)));
}

TEST_F(ImageIOTest, EncodedKeepsTheFileBytesWhenNothingChanges) {
  cv::imwrite(Path("a.jpg"), PatternImage(8, 8, 3, 3));
  Datum datum;
  ReadImageToDatum(Path("a.jpg"), 2, 0, 0, true, "jpg", &datum);
  EXPECT_TRUE(datum.encoded());
  EXPECT_EQ(datum.data(), ReadWholeFile(Path("a.jpg")));
  EXPECT_EQ(datum.label(), 2);
  EXPECT_EQ(datum.channels(), 3);
  EXPECT_EQ(datum.height(), 8);
  // "jpeg" names the same format.
  ReadImageToDatum(Path("a.jpg"), 2, 0, 0, true, "JPEG", &datum);
  EXPECT_EQ(datum.data(), ReadWholeFile(Path("a.jpg")));
}

TEST_F(ImageIOTest, EncodedIsReencodedWhenResizedGrayOrOfAnotherType) {
  const cv::Mat image = PatternImage(8, 6, 3, 4);
  cv::imwrite(Path("a.png"), image);
  Datum encoded, decoded;
  ReadImageToDatum(Path("a.png"), 0, 4, 3, true, "png", &encoded);
  EXPECT_NE(encoded.data(), ReadWholeFile(Path("a.png")));
  DecodeDatum(encoded, ImageColor::kNative, &decoded);
  EXPECT_EQ(DatumValues(decoded), ImageValues(ExpectedImage(Path("a.png"), true, 4, 3)));

  ReadImageToDatum(Path("a.png"), 0, 0, 0, false, "png", &encoded);
  EXPECT_EQ(encoded.channels(), 1);
  DecodeDatum(encoded, ImageColor::kNative, &decoded);
  EXPECT_EQ(decoded.channels(), 1) << "a gray record decodes to 1 channel as stored";
  EXPECT_EQ(DatumValues(decoded), ImageValues(ExpectedImage(Path("a.png"), false)));

  ReadImageToDatum(Path("a.png"), 0, 0, 0, true, "jpg", &encoded);
  EXPECT_EQ(encoded.data().substr(0, 2), "\xff\xd8") << "JPEG bytes";
}

TEST_F(ImageIOTest, DecodeDatumConvertsChannelsOnRequest) {
  cv::imwrite(Path("gray.png"), PatternImage(4, 4, 1, 5));
  Datum encoded, decoded;
  ReadImageToDatum(Path("gray.png"), 7, 0, 0, false, "png", &encoded);
  DecodeDatum(encoded, ImageColor::kColor, &decoded);
  EXPECT_EQ(decoded.channels(), 3);
  EXPECT_EQ(decoded.label(), 7);
  DecodeDatum(encoded, ImageColor::kGray, &decoded);
  EXPECT_EQ(decoded.channels(), 1);
  encoded.set_data("not an image");
  EXPECT_NE(ErrorOf([&] {
              DecodeDatum(encoded, ImageColor::kNative, &decoded);
            }).find("not an image OpenCV can decode"),
            string::npos);
}

TEST_F(ImageIOTest, MissingAndCorruptImagesAreErrorsNamingTheFile) {
  Datum datum;
  const string missing =
      ErrorOf([&] { ReadImageToDatum(Path("missing.png"), 0, 0, 0, true, "", &datum); });
  EXPECT_NE(missing.find("cannot open image '" + Path("missing.png") + "'"), string::npos)
      << missing;
  EXPECT_NE(missing.find("No such file"), string::npos) << missing;
  WriteText("corrupt.jpg", "\xff\xd8\xff this is no JPEG");
  const string corrupt =
      ErrorOf([&] { ReadImageToDatum(Path("corrupt.jpg"), 0, 0, 0, true, "", &datum); });
  EXPECT_NE(corrupt.find("image '" + Path("corrupt.jpg") + "' cannot be decoded"), string::npos)
      << corrupt;
  WriteText("empty.png", "");
  EXPECT_NE(ErrorOf([&] {
              ReadImageToDatum(Path("empty.png"), 0, 0, 0, true, "", &datum);
            }).find("empty file"),
            string::npos);
  cv::imwrite(Path("a.png"), PatternImage(4, 4, 3, 6));
  EXPECT_NE(ErrorOf([&] {
              ReadImageToDatum(Path("a.png"), 0, 4, 0, true, "", &datum);
            }).find("needs both a height and a width"),
            string::npos);
  EXPECT_NE(ErrorOf([&] {
              ReadImageToDatum(Path("a.png"), 0, 0, 0, true, "nosuch", &datum);
            }).find("cannot encode"),
            string::npos);
}

TEST_F(ImageIOTest, RecordsAreWrittenAsImageFiles) {
  const cv::Mat image = PatternImage(6, 5, 3, 7);
  cv::imwrite(Path("a.png"), image);
  Datum raw, encoded;
  ReadImageToDatum(Path("a.png"), 0, 0, 0, true, "", &raw);
  WriteDatumToImage(raw, Path("raw_out.png"));
  EXPECT_EQ(ImageValues(cv::imread(Path("raw_out.png"))), ImageValues(image));
  ReadImageToDatum(Path("a.png"), 0, 0, 0, true, "png", &encoded);
  WriteDatumToImage(encoded, Path("encoded_out.png"));
  EXPECT_EQ(ImageValues(cv::imread(Path("encoded_out.png"))), ImageValues(image));

  // Float records are rounded and clamped to bytes.
  Datum floats;
  floats.set_channels(1);
  floats.set_height(1);
  floats.set_width(3);
  for (float value : {-4.0f, 99.6f, 300.0f}) floats.add_float_data(value);
  WriteDatumToImage(floats, Path("floats.png"));
  EXPECT_EQ(ImageValues(cv::imread(Path("floats.png"), cv::IMREAD_GRAYSCALE)),
            (vector<int>{0, 100, 255}));

  Datum two_channels = floats;
  two_channels.set_channels(2);
  EXPECT_NE(ErrorOf([&] { WriteDatumToImage(two_channels, Path("x.png")); }).find("1 or 3"),
            string::npos);
  EXPECT_NE(ErrorOf([&] {
              WriteDatumToImage(raw, Path("no_such_folder/x.png"));
            }).find("cannot write image"),
            string::npos);
}

#endif  // USE_OPENCV

}  // namespace
}  // namespace caffe
