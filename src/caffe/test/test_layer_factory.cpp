#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "caffe/layer.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

// CAFFE_LAYER_TYPES is the CMake inventory (src/caffe/layers/CMakeLists.txt), ';'-separated.
TEST(LayerRegistryTest, MatchesInventory) {
  std::vector<std::string> inventory;
  std::istringstream list(CAFFE_LAYER_TYPES);
  std::string type;
  while (std::getline(list, type, ';')) {
    if (!type.empty()) inventory.push_back(type);
  }
  std::sort(inventory.begin(), inventory.end());
  EXPECT_EQ(LayerRegistry<float>::LayerTypeList(), inventory);
  EXPECT_EQ(LayerRegistry<double>::LayerTypeList(), inventory);
}

TEST(LayerRegistryTest, CreatesALayerOfTheRequestedType) {
  LayerParameter param = ParseLayerParam(R"(name: "r" type: "ReLU")");
  shared_ptr<Layer<float>> layer = LayerRegistry<float>::CreateLayer(param);
  EXPECT_STREQ(layer->type(), "ReLU");
}

TEST(LayerRegistryTest, UnknownTypeListsTheKnownTypes) {
  LayerParameter param = ParseLayerParam(R"(name: "c" type: "Convolutoin")");
  try {
    LayerRegistry<float>::CreateLayer(param);
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("\"Convolutoin\""), std::string::npos) << message;
    EXPECT_NE(message.find("'c'"), std::string::npos) << message;
    EXPECT_NE(message.find("did you mean \"Convolution\"?"), std::string::npos) << message;
  }
}

TEST(LayerRegistryTest, SuggestsTheClosestTypeOnlyWhenItIsClose) {
  EXPECT_EQ(LayerRegistry<float>::ClosestLayerType("Relu"), "ReLU");
  EXPECT_EQ(LayerRegistry<float>::ClosestLayerType("InnerProdcut"), "InnerProduct");
  EXPECT_EQ(LayerRegistry<float>::ClosestLayerType("softmaxwithloss"), "SoftmaxWithLoss");
  EXPECT_EQ(LayerRegistry<float>::ClosestLayerType("Transformer"), "");
}

}  // namespace caffe
