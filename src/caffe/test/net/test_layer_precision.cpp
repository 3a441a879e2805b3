// Which arithmetic each layer gets (net/layer_precision.hpp): NVCaffe's type fields as its users
// write them, the order in which the net's, the layer's and `-precision`'s choices win, the errors
// for a storage-only type and an unknown flag value, and what a float net gives its layers.
#include <google/protobuf/text_format.h>

#include <string>

#include "caffe/kernels/bf16_gemm.hpp"
#include "caffe/net.hpp"
#include "caffe/net/layer_precision.hpp"
#include "caffe/test/log_counter.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

NetParameter ParseNet(const std::string& text) {
  NetParameter net;
  CHECK(google::protobuf::TextFormat::ParseFromString(text, &net)) << text;
  return net;
}

const char kNet[] = R"(
name: "Mixed"
layer { name: "data" type: "DummyData" top: "data" top: "label"
  dummy_data_param { shape { dim: 4 dim: 16 dim: 6 dim: 6 } shape { dim: 4 }
    data_filler { type: "gaussian" } data_filler { type: "constant" value: 1 } } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
  convolution_param { num_output: 16 kernel_size: 3 weight_filler { type: "xavier" } } }
layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
layer { name: "ip" type: "InnerProduct" bottom: "conv" top: "ip"
  inner_product_param { num_output: 3 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
)";

// Clears -precision whatever a test sets.
class LayerPrecisionTest : public ::testing::Test {
 protected:
  ~LayerPrecisionTest() override { SetPrecisionFlag(""); }
};

}  // namespace

TEST_F(LayerPrecisionTest, NvcaffeTypeFieldsParse) {
  const NetParameter net = ParseNet(R"(
name: "nv"
default_forward_type: BFLOAT16 default_backward_type: FLOAT16
default_forward_math: FLOAT default_backward_math: FLOAT
global_grad_scale: 64 global_grad_scale_adaptive: true
layer { name: "loss" type: "SoftmaxWithLoss" forward_type: FLOAT backward_type: FLOAT
  forward_math: FLOAT backward_math: DOUBLE }
)");
  EXPECT_EQ(net.default_forward_type(), BFLOAT16);
  EXPECT_EQ(net.default_backward_type(), FLOAT16);
  EXPECT_EQ(net.default_forward_math(), FLOAT);
  EXPECT_EQ(net.global_grad_scale(), 64.f);
  EXPECT_TRUE(net.global_grad_scale_adaptive());
  EXPECT_EQ(net.layer(0).forward_type(), FLOAT);
  EXPECT_EQ(net.layer(0).backward_math(), DOUBLE);
  // Unset, everything is fp32, as in every BVLC prototxt.
  const NetParameter plain = ParseNet("name: \"plain\" layer { name: \"a\" type: \"ReLU\" }");
  EXPECT_EQ(plain.default_forward_type(), FLOAT);
  EXPECT_EQ(plain.layer(0).forward_type(), FLOAT);
}

TEST_F(LayerPrecisionTest, LayerFieldsWinOverNetDefaultsAndMathOverType) {
  const NetParameter net = ParseNet(R"(
default_forward_type: BFLOAT16 default_backward_type: BFLOAT16
layer { name: "plain" type: "InnerProduct" }
layer { name: "own" type: "InnerProduct" forward_type: FLOAT }
layer { name: "math" type: "InnerProduct" backward_type: FLOAT backward_math: FLOAT16 }
)");
  LayerMath math = RequestedMath(net, net.layer(0));
  EXPECT_EQ(math.forward, BFLOAT16);
  EXPECT_EQ(math.backward, BFLOAT16);
  math = RequestedMath(net, net.layer(1));
  EXPECT_EQ(math.forward, FLOAT);
  EXPECT_EQ(math.backward, BFLOAT16);
  math = RequestedMath(net, net.layer(2));
  EXPECT_EQ(math.forward, BFLOAT16);
  EXPECT_EQ(math.backward, FLOAT16);
}

TEST_F(LayerPrecisionTest, PrecisionFlagReplacesNetDefaultTypesOnly) {
  const NetParameter net = ParseNet(R"(
default_forward_type: FLOAT16
layer { name: "plain" type: "InnerProduct" }
layer { name: "loss" type: "SoftmaxWithLoss" forward_type: FLOAT backward_type: FLOAT }
)");
  SetPrecisionFlag("bf16");
  EXPECT_EQ(RequestedMath(net, net.layer(0)).forward, BFLOAT16);
  EXPECT_EQ(RequestedMath(net, net.layer(0)).backward, BFLOAT16);
  EXPECT_EQ(RequestedMath(net, net.layer(1)).forward, FLOAT);
  SetPrecisionFlag("fp32");
  EXPECT_EQ(RequestedMath(net, net.layer(0)).forward, FLOAT);
  SetPrecisionFlag("");
  EXPECT_EQ(RequestedMath(net, net.layer(0)).forward, FLOAT16);
}

TEST_F(LayerPrecisionTest, StorageOnlyTypeAndUnknownFlagAreErrors) {
  const NetParameter net =
      ParseNet("layer { name: \"ip\" type: \"InnerProduct\" forward_type: INT }");
  try {
    RequestedMath(net, net.layer(0));
    FAIL() << "INT was taken as an arithmetic";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("layer 'ip' (InnerProduct): forward_type is INT"),
              std::string::npos)
        << error.what();
  }
  try {
    SetPrecisionFlag("half");
    FAIL() << "-precision half was taken";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("-precision is \"half\"; expected fp32, bf16 or fp16"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(LayerPrecisionTest, FloatNetGivesBf16ToMatrixLayersAndFp32ToTheRest) {
  SetPrecisionFlag("bf16");
  Caffe::set_mode(Caffe::CPU);
  LogCounter fallback("16-bit arithmetic asked for");
  Net<float> net(ParseNet(std::string(kNet) + "state { phase: TRAIN }"));
  const Type expected = CpuHasBf16Math() ? BFLOAT16 : FLOAT;
  EXPECT_EQ(net.layer_by_name("conv")->forward_math(), expected);
  EXPECT_EQ(net.layer_by_name("conv")->backward_math(), expected);
  EXPECT_EQ(net.layer_by_name("ip")->forward_math(), expected);
  EXPECT_EQ(net.layer_by_name("relu")->forward_math(), FLOAT);
  EXPECT_EQ(net.layer_by_name("loss")->forward_math(), FLOAT);
  EXPECT_EQ(net.layer_by_name("loss")->backward_math(), FLOAT);
  // Where the CPU cannot, the net says so once and runs in fp32.
  EXPECT_EQ(fallback.count, CpuHasBf16Math() ? 0 : 1);
  // A double net computes in double whatever is asked.
  Net<double> exact(ParseNet(std::string(kNet) + "state { phase: TRAIN }"));
  EXPECT_EQ(exact.layer_by_name("ip")->forward_math(), FLOAT);
}

TEST_F(LayerPrecisionTest, UnmetRequestsFallBackToFp32WithTheReason) {
  const NetParameter net = ParseNet(std::string(kNet) + "default_forward_type: BFLOAT16");
  // In GPU mode (16-bit arithmetic is not built there yet) and for fp16 on the CPU.
  PrecisionPlan gpu(net, /*on_gpu=*/true);
  EXPECT_EQ(gpu.Choose(net.layer(1), true).forward, FLOAT);
  LogCounter gpu_line("16-bit arithmetic on the GPU is not built yet");
  gpu.Log();
  EXPECT_EQ(gpu_line.count, 1);
  const NetParameter half = ParseNet(std::string(kNet) + "default_forward_type: FLOAT16");
  PrecisionPlan cpu(half, /*on_gpu=*/false);
  EXPECT_EQ(cpu.Choose(half.layer(1), true).forward, FLOAT);
  LogCounter cpu_line("the CPU engines have no fp16 arithmetic");
  cpu.Log();
  EXPECT_EQ(cpu_line.count, 1);
}

}  // namespace caffe
