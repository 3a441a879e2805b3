// GradientBuffer: the params' diffs move into one buffer in backward's order (shared params with
// their owner), cut into buckets of the capacity asked; which buckets a layer's backward
// completes; scaling; and a gradient written on the other side made current.
#include <climits>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/net.hpp"
#include "caffe/parallel/gradient_buffer.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

// Layers: 0 data, 1 ip1 (weights "shared" 36, bias 6), 2 ip2 (weights "shared", bias 6), 3 ip3
// (weights 18). Learnable: ip1's weights, ip1's bias, ip2's bias, ip3's weights; backward
// completes them in the order ip3.w, ip2.b, ip1.w, ip1.b.
NetParameter SharedNet() {
  NetParameter param;
  ParseProtoFromText(R"(
    layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 6 } } }
    layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
            param { name: "shared" } inner_product_param { num_output: 6 } }
    layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
            param { name: "shared" } inner_product_param { num_output: 6 } }
    layer { name: "ip3" type: "InnerProduct" bottom: "ip2" top: "ip3"
            inner_product_param { num_output: 3 bias_term: false } })",
                     "gradient buffer net", &param);
  return param;
}

TEST(GradientBufferTest, DiffsLiveInTheBufferInBackwardOrder) {
  Net<float> net(SharedNet());
  GradientBuffer<float> buffer(&net, false, SIZE_MAX);
  ASSERT_EQ(buffer.count(), 18u + 6u + 36u + 6u);
  ASSERT_EQ(buffer.buckets().size(), 1u);
  const Blobs<float>& learnable = net.learnable_params();
  EXPECT_EQ(learnable[3]->cpu_diff(), buffer.data());
  EXPECT_EQ(learnable[2]->cpu_diff(), buffer.data() + 18);
  EXPECT_EQ(learnable[0]->cpu_diff(), buffer.data() + 24);
  EXPECT_EQ(learnable[1]->cpu_diff(), buffer.data() + 60);
  // ip2's weights are ip1's: they write the same place.
  EXPECT_EQ(net.layer_by_name("ip2")->blobs()[0]->cpu_diff(), buffer.data() + 24);
  // Backward writes into the buffer.
  learnable[2]->mutable_cpu_diff()[1] = 5.f;
  EXPECT_EQ(buffer.data()[19], 5.f);
}

TEST(GradientBufferTest, BucketsHoldAtMostTheCapacityAndALargerParamAlone) {
  Net<float> net(SharedNet());
  GradientBuffer<float> buffer(&net, false, 25);
  // ip3.w (18) + ip2.b (6) = 24 fit; ip1.w (36) is alone; ip1.b (6) starts the next.
  ASSERT_EQ(buffer.buckets().size(), 3u);
  EXPECT_EQ(buffer.buckets()[0].params, (std::vector<int>{3, 2}));
  EXPECT_EQ(buffer.buckets()[1].params, (std::vector<int>{0}));
  EXPECT_EQ(buffer.buckets()[2].params, (std::vector<int>{1}));
  EXPECT_EQ(buffer.buckets()[1].offset, 24u);
  EXPECT_EQ(buffer.RangeCount(0, 3), buffer.count());
  EXPECT_EQ(buffer.RangeCount(1, 2), 36u);
  EXPECT_EQ(buffer.RangeData(2), buffer.data() + 60);
}

TEST(GradientBufferTest, BackwardCompletesBucketsFromTheTopLayerDown) {
  Net<float> net(SharedNet());
  GradientBuffer<float> buffer(&net, false, 1);  // a bucket per param
  ASSERT_EQ(buffer.buckets().size(), 4u);
  EXPECT_EQ(buffer.ReadyEnd(0, 3), 1u);  // after ip3: its weights
  EXPECT_EQ(buffer.ReadyEnd(1, 2), 2u);  // after ip2: its bias; the shared weights wait for ip1
  EXPECT_EQ(buffer.ReadyEnd(2, 1), 4u);  // after ip1: the shared weights and ip1's bias
  EXPECT_EQ(buffer.ReadyEnd(4, 0), 4u);
}

TEST(GradientBufferTest, ScaleMultipliesEveryGradient) {
  Net<double> net(SharedNet());
  GradientBuffer<double> buffer(&net, false, SIZE_MAX);
  for (size_t i = 0; i < buffer.count(); ++i) buffer.data()[i] = static_cast<double>(i);
  buffer.Scale(0.25);
  for (size_t i = 0; i < buffer.count(); ++i) ASSERT_EQ(buffer.data()[i], 0.25 * i);
}

#ifndef CPU_ONLY
TEST(GradientBufferTest, OnTheDeviceAGradientWrittenOnTheHostIsMadeCurrent) {
  if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
  Caffe::set_mode(Caffe::GPU);
  Net<float> net(SharedNet());
  GradientBuffer<float> buffer(&net, true, SIZE_MAX);
  Blob<float>* bias = net.learnable_params()[2];
  EXPECT_EQ(bias->gpu_diff(), buffer.data() + 18);
  bias->mutable_cpu_diff()[0] = 3.f;  // a layer without GPU code wrote it
  buffer.MakeCurrent(0, 1);
  float value = 0;
  caffe_gpu_memcpy(sizeof(float), buffer.data() + 18, &value);
  EXPECT_EQ(value, 3.f);
  Caffe::set_mode(Caffe::CPU);
}
#endif

}  // namespace
}  // namespace caffe
