// The LMS flags: values users give, and one clear error naming the flag for each bad one.
#include <cmath>
#include <string>

#include "caffe/lms/lms_options.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace lms {

TEST(LmsOptionsTest, ByteSizesTakeBinarySuffixes) {
  EXPECT_EQ(ParseByteSize("17179869184", "-gpu_mem_limit"), 17179869184u);
  EXPECT_EQ(ParseByteSize("16G", "-gpu_mem_limit"), 16ull << 30);
  EXPECT_EQ(ParseByteSize("16GB", "-gpu_mem_limit"), 16ull << 30);
  EXPECT_EQ(ParseByteSize("16GiB", "-gpu_mem_limit"), 16ull << 30);
  EXPECT_EQ(ParseByteSize("512m", "-gpu_mem_limit"), 512ull << 20);
  EXPECT_EQ(ParseByteSize("1.5G", "-gpu_mem_limit"), 3ull << 29);
  EXPECT_EQ(ParseByteSize("64K", "-gpu_mem_limit"), 65536u);
  EXPECT_EQ(ParseByteSize("1T", "-gpu_mem_limit"), 1ull << 40);
}

TEST(LmsOptionsTest, BadByteSizesNameTheSourceAndTheRule) {
  for (const char* bad : {"abc", "16X", "", "-1G", "0", " 16G", "16 G"}) {
    const std::string message = ErrorOf([&] { ParseByteSize(bad, "-gpu_mem_limit"); });
    EXPECT_NE(message.find("-gpu_mem_limit '" + std::string(bad) + "'"), std::string::npos)
        << bad << ": " << message;
    EXPECT_NE(message.find("e.g. 16G"), std::string::npos) << message;
  }
}

TEST(LmsOptionsTest, MakeOptionsKeepsTheFlags) {
  const Options options = MakeOptions(8192, 0.9, 2, "16G", nullptr);
  EXPECT_EQ(options.threshold_kb, 8192);
  EXPECT_DOUBLE_EQ(options.frac, 0.9);
  EXPECT_EQ(options.prefetch_depth, 2);
  EXPECT_EQ(options.budget, 16ull << 30);
  EXPECT_TRUE(Requested(options));
  // IBM's README advised -lms 10000000000 (which overflowed its int32 flag).
  EXPECT_EQ(MakeOptions(10000000000LL, 0, 1, "", nullptr).threshold_kb, 10000000000LL);
  EXPECT_FALSE(Requested(MakeOptions(-1, 0, 1, "", nullptr)));
  EXPECT_TRUE(Requested(MakeOptions(0, 0, 1, "", nullptr)));
}

TEST(LmsOptionsTest, TheEnvironmentGivesTheBudgetWhenTheFlagDoesNot) {
  EXPECT_EQ(MakeOptions(-1, 0, 1, "", "2G").budget, 2ull << 30);
  EXPECT_EQ(MakeOptions(-1, 0, 1, "1G", "2G").budget, 1ull << 30);
  EXPECT_EQ(MakeOptions(-1, 0, 1, "", "").budget, 0u);
  const std::string message = ErrorOf([] { MakeOptions(-1, 0, 1, "", "lots"); });
  EXPECT_NE(message.find("CAFFE_GPU_MEM_LIMIT 'lots'"), std::string::npos) << message;
}

TEST(LmsOptionsTest, OutOfRangeValuesAreOneClearError) {
  std::string message = ErrorOf([] { MakeOptions(-2, 0, 1, "", nullptr); });
  EXPECT_NE(message.find("-lms -2: expected -1 (off), 0 (every buffer)"), std::string::npos)
      << message;
  for (double bad : {-0.1, 1.5}) {
    message = ErrorOf([&] { MakeOptions(0, bad, 1, "", nullptr); });
    EXPECT_NE(message.find("-lms_frac"), std::string::npos) << message;
    EXPECT_NE(message.find("in [0, 1]"), std::string::npos) << message;
  }
  message = ErrorOf([] { MakeOptions(0, std::nan(""), 1, "", nullptr); });
  EXPECT_NE(message.find("-lms_frac nan"), std::string::npos) << message;
  message = ErrorOf([] { MakeOptions(0, 0, -1, "", nullptr); });
  EXPECT_NE(message.find("-lms_prefetch -1"), std::string::npos) << message;
  EXPECT_EQ(ErrorOf([] { MakeOptions(0, 0.0, 0, "", nullptr); }), "");
  EXPECT_EQ(ErrorOf([] { MakeOptions(0, 1.0, 0, "", nullptr); }), "");
}

}  // namespace lms
}  // namespace caffe
