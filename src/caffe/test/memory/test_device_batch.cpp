// DeviceBatch, the device room a data layer's prefetch thread fills: a pushed batch arrives in
// the tops' device side; a push waits for the net's copy out of the room before it overwrites
// it (on the CUDA emulator, which runs unordered streams in the order a GPU could least expect,
// the copy would otherwise take the new batch); a batch larger than the room is refused and the
// room holds nothing; under an LMS manager the room is memory the manager counts. Skips without a
// GPU; CPU-only builds have no DeviceBatch.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/lms/memory_manager.hpp"
#include "caffe/lms/session.hpp"
#include "caffe/memory/device_batch.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

#ifndef CPU_ONLY

namespace {

// A host-side batch whose values start at `first`: first, first + 1, ...
template <typename Dtype>
void Fill(Blob<Dtype>* blob, Dtype first) {
  Dtype* values = blob->mutable_cpu_data();
  for (int i = 0; i < blob->count(); ++i) values[i] = first + i;
}

// The device side's values, read without going through the blob's host side.
template <typename Dtype>
std::vector<Dtype> DeviceValues(const Blob<Dtype>& blob) {
  std::vector<Dtype> values(blob.count());
  caffe_gpu_memcpy(blob.count() * sizeof(Dtype), blob.gpu_data(), values.data());
  return values;
}

template <typename Dtype>
std::vector<Dtype> Counting(int count, Dtype first) {
  std::vector<Dtype> values(count);
  for (int i = 0; i < count; ++i) values[i] = first + i;
  return values;
}

}  // namespace

// The data layer's calls: a batch's blobs in, the tops' device sides out.
template <typename Dtype>
bool PushBlobs(DeviceBatch<Dtype>* room, const Blob<Dtype>& data, const Blob<Dtype>* label,
               cudaStream_t stream) {
  return room->Push(data.cpu_data(), data.count(), label ? label->cpu_data() : nullptr,
                    label ? label->count() : 0, stream);
}
template <typename Dtype>
void PullBlobs(DeviceBatch<Dtype>* room, Blob<Dtype>* data_top, Blob<Dtype>* label_top) {
  room->Pull(data_top->mutable_gpu_data(), data_top->count(),
             label_top ? label_top->mutable_gpu_data() : nullptr,
             label_top ? label_top->count() : 0);
}

template <typename Dtype>
class DeviceBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
    data_.Reshape({4, 3, 5});
    label_.Reshape({4});
  }

  Blob<Dtype> data_, label_;          // the batch as the prefetch thread loaded it
  Blob<Dtype> data_top_, label_top_;  // the net's tops
};
TYPED_TEST_SUITE(DeviceBatchTest, TestDtypes);

TYPED_TEST(DeviceBatchTest, APushedBatchArrivesInTheTopsDeviceSide) {
  PushStream stream;
  DeviceBatch<TypeParam> room(this->data_.count(), this->label_.count());
  Fill(&this->data_, TypeParam(10));
  Fill(&this->label_, TypeParam(-3));
  ASSERT_TRUE(PushBlobs(&room, this->data_, &this->label_, stream.get()));
  EXPECT_TRUE(room.holds());
  this->data_top_.ReshapeLike(this->data_);
  this->label_top_.ReshapeLike(this->label_);
  PullBlobs(&room, &this->data_top_, &this->label_top_);
  EXPECT_FALSE(room.holds());
  // The device side is the current one: nothing is copied from the host side.
  EXPECT_EQ(this->data_top_.data()->head(), SyncedMemory::HEAD_AT_GPU);
  EXPECT_EQ(DeviceValues(this->data_top_), Counting(this->data_.count(), TypeParam(10)));
  EXPECT_EQ(DeviceValues(this->label_top_), Counting(this->label_.count(), TypeParam(-3)));
  // Read on the host, the values come home.
  EXPECT_EQ(this->data_top_.cpu_data()[7], TypeParam(17));
}

TYPED_TEST(DeviceBatchTest, APushWaitsForTheNetsCopyOutOfTheRoom) {
  PushStream stream;
  DeviceBatch<TypeParam> room(this->data_.count(), 0);
  this->data_top_.ReshapeLike(this->data_);
  Fill(&this->data_, TypeParam(100));
  ASSERT_TRUE(PushBlobs<TypeParam>(&room, this->data_, nullptr, stream.get()));
  PullBlobs<TypeParam>(&room, &this->data_top_,
                       nullptr);  // queued on the default stream; nothing waits for it
  // The prefetch thread loads the next batch into the same room at once.
  Fill(&this->data_, TypeParam(200));
  ASSERT_TRUE(PushBlobs<TypeParam>(&room, this->data_, nullptr, stream.get()));
  EXPECT_EQ(DeviceValues(this->data_top_), Counting(this->data_.count(), TypeParam(100)));
  PullBlobs<TypeParam>(&room, &this->data_top_, nullptr);
  EXPECT_EQ(DeviceValues(this->data_top_), Counting(this->data_.count(), TypeParam(200)));
}

TYPED_TEST(DeviceBatchTest, ABatchLargerThanTheRoomIsRefused) {
  PushStream stream;
  DeviceBatch<TypeParam> room(this->data_.count() - 1, this->label_.count());
  EXPECT_EQ(room.data_capacity(), static_cast<size_t>(this->data_.count() - 1));
  EXPECT_FALSE(PushBlobs(&room, this->data_, &this->label_, stream.get()));
  EXPECT_FALSE(room.holds());
  // A smaller batch fits.
  this->data_.Reshape({2, 3, 5});
  Fill(&this->data_, TypeParam(1));
  EXPECT_TRUE(PushBlobs(&room, this->data_, &this->label_, stream.get()));
  this->data_top_.ReshapeLike(this->data_);
  this->label_top_.ReshapeLike(this->label_);
  PullBlobs(&room, &this->data_top_, &this->label_top_);
  EXPECT_EQ(DeviceValues(this->data_top_), Counting(30, TypeParam(1)));
}

TYPED_TEST(DeviceBatchTest, UnderABudgetTheRoomCountsAgainstIt) {
  const size_t budget = 64 << 20;
  lms::Options options;
  options.budget = budget;
  lms::Session session(options, 0);
  std::shared_ptr<lms::MemoryManager> manager = lms::MemoryManager::Current();
  ASSERT_TRUE(manager);
  const size_t before = manager->allocator().in_use();
  const size_t count = 1 << 20;
  {
    DeviceBatch<TypeParam> room(count, 16);
    EXPECT_GE(manager->allocator().in_use(), before + (count + 16) * sizeof(TypeParam));
    // More than the budget holds is one clear error, naming what asked.
    try {
      DeviceBatch<TypeParam> too_large(budget, 0);
      FAIL() << "a room larger than the budget was made";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("prefetched batch"), std::string::npos)
          << error.what();
    }
  }
  EXPECT_EQ(manager->allocator().in_use(), before);
}

#endif  // CPU_ONLY

}  // namespace caffe
