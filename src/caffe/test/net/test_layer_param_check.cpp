#include <string>

#include "caffe/layer_factory.hpp"
#include "caffe/net/layer_param_check.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {
std::string StrayFor(const std::string& text) { return StrayLayerParams(ParseLayerParam(text)); }
}  // namespace

TEST(LayerParamCheckTest, ALayersOwnParametersPass) {
  EXPECT_EQ(StrayFor(R"(name: "c" type: "Convolution" convolution_param { num_output: 2 })"), "");
  EXPECT_EQ(StrayFor(R"(name: "d" type: "Data" data_param { batch_size: 2 }
                        transform_param { scale: 0.5 })"),
            "");
  EXPECT_EQ(StrayFor(R"(name: "l" type: "SoftmaxWithLoss" loss_param { ignore_label: 1 }
                        softmax_param { axis: 1 })"),
            "");
  EXPECT_EQ(StrayFor(R"(name: "d" type: "Deconvolution" convolution_param { num_output: 2 })"), "");
}

TEST(LayerParamCheckTest, AnotherTypesParameterIsReportedByName) {
  const std::string message =
      StrayFor(R"(name: "conv1" type: "Convolution" pooling_param { pool: MAX })");
  EXPECT_NE(message.find("Convolution layer 'conv1'"), std::string::npos) << message;
  EXPECT_NE(message.find("pooling_param does not apply"), std::string::npos) << message;
  EXPECT_NE(message.find("convolution_param"), std::string::npos) << message;
  EXPECT_NE(StrayFor(R"(name: "r" type: "ReLU" dropout_param { dropout_ratio: 0.5 })"), "");
  EXPECT_NE(StrayFor(R"(name: "s" type: "Split" relu_param { })").find("takes no parameters"),
            std::string::npos);
}

TEST(LayerParamCheckTest, TypesOutsideTheTableAreNotChecked) {
  EXPECT_EQ(LayerParamsReadBy("MyPluginLayer"), nullptr);
  EXPECT_EQ(StrayFor(R"(name: "p" type: "MyPluginLayer" pooling_param { })"), "");
}

// Every registered layer type is in the table, so none escapes the check.
TEST(LayerParamCheckTest, EveryRegisteredTypeIsKnown) {
  for (const std::string& type : LayerRegistry<float>::LayerTypeList()) {
    EXPECT_NE(LayerParamsReadBy(type), nullptr) << type;
  }
}

}  // namespace caffe
