#include <vector>

#include "caffe/blob.hpp"
#include "caffe/memory/channel_layout.hpp"
#include "caffe/memory/syncedmem.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

// Value of (n, c, s): distinct for every element, so a misplaced one shows.
float ValueAt(int n, int c, size_t s) { return n * 10000.f + c * 100.f + s; }

std::vector<float> Plain(int num, int channels, size_t spatial) {
  std::vector<float> values;
  for (int n = 0; n < num; ++n) {
    for (int c = 0; c < channels; ++c) {
      for (size_t s = 0; s < spatial; ++s) values.push_back(ValueAt(n, c, s));
    }
  }
  return values;
}

}  // namespace

// oneDNN's nChw16c / nChw8c: ((n * C/B + c/B) * S + s) * B + c % B.
TEST(ChannelLayoutTest, BlockedPutsTheBlocksChannelsSideBySideAtEachPosition) {
  for (int block : {8, 16}) {
    const int num = 2, channels = 32;
    const size_t spatial = 5;
    std::vector<float> values = Plain(num, channels, spatial);
    const ChannelLayout plain{num, channels, spatial, 1};
    const ChannelLayout blocked{num, channels, spatial, block};
    ConvertChannelLayout(values.data(), plain, blocked);
    for (int n = 0; n < num; ++n) {
      for (int c = 0; c < channels; ++c) {
        for (size_t s = 0; s < spatial; ++s) {
          const size_t at =
              ((n * (channels / block) + c / block) * spatial + s) * block + c % block;
          ASSERT_EQ(values[at], ValueAt(n, c, s)) << "block " << block << " n " << n << " c " << c;
        }
      }
    }
    ConvertChannelLayout(values.data(), blocked, plain);
    EXPECT_EQ(values, Plain(num, channels, spatial));
  }
}

TEST(ChannelLayoutTest, ConvertsBetweenTwoBlockSizes) {
  std::vector<float> values = Plain(3, 16, 7);
  ConvertChannelLayout(values.data(), {3, 16, 7, 1}, {3, 16, 7, 8});
  ConvertChannelLayout(values.data(), {3, 16, 7, 8}, {3, 16, 7, 16});
  ConvertChannelLayout(values.data(), {3, 16, 7, 16}, {3, 16, 7, 1});
  EXPECT_EQ(values, Plain(3, 16, 7));
}

TEST(ChannelLayoutTest, PlainLayoutsAreEqualWhateverTheirShape) {
  EXPECT_EQ((ChannelLayout{2, 16, 4, 1}), ChannelLayout());
  EXPECT_NE((ChannelLayout{2, 16, 4, 16}), (ChannelLayout{2, 32, 2, 16}));
  EXPECT_NE((ChannelLayout{2, 16, 4, 16}), ChannelLayout());
}

// A buffer left blocked reads plain through every accessor that does not name a layout.
TEST(ChannelLayoutTest, SyncedMemoryReadsPlainAfterBeingLeftBlocked) {
  const std::vector<float> plain = Plain(2, 16, 9);
  SyncedMemory memory(plain.size() * sizeof(float));
  const ChannelLayout blocked{2, 16, 9, 16};
  float* values = static_cast<float*>(memory.mutable_cpu_data_in(blocked, false));
  std::copy(plain.begin(), plain.end(), values);
  ConvertChannelLayout(values, ChannelLayout{2, 16, 9, 1}, blocked);
  EXPECT_EQ(memory.cpu_layout(), blocked);
  const float* read = static_cast<const float*>(memory.cpu_data());
  EXPECT_EQ(std::vector<float>(read, read + plain.size()), plain);
  EXPECT_TRUE(memory.cpu_layout().plain());
}

TEST(ChannelLayoutTest, WritingEveryValueConvertsNothing) {
  SyncedMemory memory(16 * 4 * sizeof(float));
  float* values = static_cast<float*>(memory.mutable_cpu_data());
  for (int i = 0; i < 64; ++i) values[i] = static_cast<float>(i);
  const ChannelLayout blocked{1, 16, 4, 16};
  // keep_values false: the same bytes, now said to be blocked.
  const float* same = static_cast<const float*>(memory.mutable_cpu_data_in(blocked, false));
  for (int i = 0; i < 64; ++i) ASSERT_EQ(same[i], static_cast<float>(i));
  EXPECT_EQ(memory.cpu_layout(), blocked);
}

TEST(ChannelLayoutTest, BlobConvertsDataAndDiffApart) {
  Blob<float> blob(2, 16, 3, 3);
  const std::vector<float> plain = Plain(2, 16, 9);
  std::copy(plain.begin(), plain.end(), blob.mutable_cpu_data());
  std::copy(plain.begin(), plain.end(), blob.mutable_cpu_diff());
  const float* blocked = blob.cpu_data_in(16);
  EXPECT_EQ(blob.cpu_data_block(), 16);
  EXPECT_EQ(blob.cpu_diff_block(), 1);
  EXPECT_EQ(blocked[1], ValueAt(0, 1, 0));  // channel 1 beside channel 0
  EXPECT_EQ(blob.data_at(1, 5, 2, 1), ValueAt(1, 5, 7));
  EXPECT_EQ(blob.cpu_data_block(), 1);
  EXPECT_EQ(blob.diff_at(1, 5, 2, 1), ValueAt(1, 5, 7));
}

// A reshape keeps the values: a blob blocked under one shape reads plain under another.
TEST(ChannelLayoutTest, ReshapedBlobReadsThePlainValuesOfItsOldShape) {
  Blob<float> blob(2, 16, 2, 2);
  const std::vector<float> plain = Plain(2, 16, 4);
  std::copy(plain.begin(), plain.end(), blob.mutable_cpu_data());
  blob.cpu_data_in(8);
  blob.Reshape(vector<int>{2, 64});
  const float* read = blob.cpu_data();
  EXPECT_EQ(std::vector<float>(read, read + plain.size()), plain);
  // and into blocks of the new shape, through plain
  blob.cpu_data_in(16);
  EXPECT_EQ(blob.data_at(vector<int>{1, 17}), ValueAt(1, 4, 1));
}

TEST(ChannelLayoutTest, SharedDataFollowsTheSameLayout) {
  Blob<float> blob(1, 16, 2, 2), view(1, 16, 2, 2);
  const std::vector<float> plain = Plain(1, 16, 4);
  std::copy(plain.begin(), plain.end(), blob.mutable_cpu_data());
  view.ShareData(blob);
  blob.cpu_data_in(16);
  EXPECT_EQ(view.cpu_data_block(), 16);
  EXPECT_EQ(view.data_at(0, 3, 1, 0), ValueAt(0, 3, 2));
  EXPECT_EQ(blob.cpu_data_block(), 1);
}

TEST(ChannelLayoutTest, ChannelsTheBlockDoesNotDivideAreRefused) {
  Blob<float> blob(1, 12, 2, 2);
  EXPECT_DEATH(blob.cpu_data_in(16), "cannot be held in channel blocks of 16");
  Blob<double> doubles(1, 16, 2, 2);
  EXPECT_DEATH(doubles.cpu_data_in(16), "cannot be held in channel blocks of 16");
}

}  // namespace caffe
