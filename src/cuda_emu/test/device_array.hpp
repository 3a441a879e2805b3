// The emulator tests' device memory: an array of `count` values of T on the current GPU, freed at
// the end of the test, read and written whole from host vectors.
#ifndef CAFFE_CUDA_EMU_TEST_DEVICE_ARRAY_HPP_
#define CAFFE_CUDA_EMU_TEST_DEVICE_ARRAY_HPP_

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

namespace caffe_emu_test {

template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t count) : count_(count) {
    EXPECT_EQ(cudaMalloc(&data_, count * sizeof(T)), cudaSuccess);
  }
  ~DeviceArray() { cudaFree(data_); }
  T* get() const { return data_; }
  std::vector<T> Read() const {
    std::vector<T> host(count_);
    EXPECT_EQ(cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return host;
  }
  void Write(const std::vector<T>& host) {
    EXPECT_EQ(cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
              cudaSuccess);
  }

 private:
  size_t count_;
  T* data_ = nullptr;
};

}  // namespace caffe_emu_test

#endif  // CAFFE_CUDA_EMU_TEST_DEVICE_ARRAY_HPP_
