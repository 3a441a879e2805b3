// BackwardGradientOrder: where backward completes each learnable param's gradient (a shared
// param at its lowest user) and the order that gives, as DDL's buckets and pycaffe's NCCL lay
// out their gradient buffers.
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/net.hpp"
#include "caffe/parallel/gradient_order.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

TEST(GradientOrderTest, SharedParamsAreCompleteAtTheirLowestUser) {
  // Layers: 0 data, 1 ip1 (weights "shared", bias), 2 ip2 (weights "shared", bias), 3 ip3
  // (weights only). Learnable params: ip1's weights (the owner of "shared"), ip1's bias, ip2's
  // bias, ip3's weights.
  NetParameter param;
  ParseProtoFromText(R"(
    layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 6 } } }
    layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
            param { name: "shared" } inner_product_param { num_output: 6 } }
    layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
            param { name: "shared" } inner_product_param { num_output: 6 } }
    layer { name: "ip3" type: "InnerProduct" bottom: "ip2" top: "ip3"
            inner_product_param { num_output: 3 bias_term: false } })",
                     "gradient order net", &param);
  Net<float> net(param);
  ASSERT_EQ(net.learnable_params().size(), 4u);
  const GradientOrder order = BackwardGradientOrder(net);
  EXPECT_EQ(order.ready, (std::vector<int>{1, 1, 2, 3}));
  EXPECT_EQ(order.order, (std::vector<int>{3, 2, 0, 1}));
}

}  // namespace
}  // namespace caffe
