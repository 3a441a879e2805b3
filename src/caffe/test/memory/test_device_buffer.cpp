// DeviceBuffer and the host/device copies: in a CPU-only build each is one clear error; in a GPU
// build a buffer starts zeroed and survives a round trip (skipped where no GPU is present).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/memory/device_buffer.hpp"

namespace caffe {

#ifdef CPU_ONLY

TEST(DeviceBufferTest, IsAClearErrorWithoutGpuSupport) {
  try {
    DeviceBuffer<float> buffer(16);
    FAIL() << "a CPU-only build allocated device memory";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("no GPU support"), std::string::npos) << error.what();
  }
  float host = 0;
  EXPECT_THROW(CopyHostToDevice(&host, &host, sizeof(host)), Error);
  EXPECT_THROW(CopyDeviceToHost(&host, &host, sizeof(host)), Error);
  EXPECT_THROW(SynchronizeDevice(), Error);
}

#else

TEST(DeviceBufferTest, StartsZeroedAndRoundTrips) {
  if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
  const size_t count = 1000003;  // odd, over a megabyte
  DeviceBuffer<double> buffer(count);
  EXPECT_EQ(buffer.count(), count);
  std::vector<double> host(count, 7);
  CopyDeviceToHost(buffer.data(), host.data(), count * sizeof(double));
  for (size_t i = 0; i < count; i += 4999) ASSERT_EQ(host[i], 0) << i;
  for (size_t i = 0; i < count; ++i) host[i] = i * 0.5;
  CopyHostToDevice(host.data(), buffer.data(), count * sizeof(double));
  std::vector<double> back(count, -1);
  SynchronizeDevice();
  CopyDeviceToHost(buffer.data(), back.data(), count * sizeof(double));
  EXPECT_EQ(back, host);
}

#endif

}  // namespace caffe
