// ArgMaxLayer: top shapes with and without axis and out_max_val, hand-computed indices and
// values (ties: the larger index first, as BVLC), per-axis results against a brute force, and
// parameter errors; there is no backward.
#include <string>
#include <vector>

#include "caffe/layers/argmax_layer.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class ArgMaxLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  ArgMaxLayerTest() : bottom_(vector<int>{2, 3, 4, 5}), rows_(vector<int>{2, 5}) {
    FillGaussian<Dtype>(&bottom_, 1701);
    const Dtype x[] = {1,  5,  3, 5,  2,  // ties at 1 and 3
                       -1, -2, 0, -3, 7};
    caffe_copy(10, x, rows_.mutable_cpu_data());
  }
  Blob<Dtype> bottom_, rows_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(ArgMaxLayerTest, TestDtypesAndDevices);

TYPED_TEST(ArgMaxLayerTest, IsRegisteredAsArgMax) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'a' type: 'ArgMax'"));
  EXPECT_STREQ(layer->type(), "ArgMax");
}

TYPED_TEST(ArgMaxLayerTest, TopShapes) {
  using Dtype = typename TypeParam::Dtype;
  ArgMaxLayer<Dtype> plain(LayerParameter{});
  plain.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 1, 1, 1}));
  ArgMaxLayer<Dtype> with_values(ParseLayerParam("argmax_param { out_max_val: true top_k: 4 }"));
  with_values.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 2, 4, 1}));
  ArgMaxLayer<Dtype> along_axis(ParseLayerParam("argmax_param { axis: -2 top_k: 3 }"));
  along_axis.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 3, 3, 5}));
  // Fewer than 3 axes are padded to 3.
  Blobs<Dtype> rows{&this->rows_};
  ArgMaxLayer<Dtype> padded(LayerParameter{});
  padded.SetUp(rows, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 1, 1}));
}

TYPED_TEST(ArgMaxLayerTest, TopKIndicesRankTiesByLargerIndex) {
  using Dtype = typename TypeParam::Dtype;
  Blobs<Dtype> rows{&this->rows_};
  ArgMaxLayer<Dtype> layer(ParseLayerParam("argmax_param { top_k: 3 }"));
  layer.SetUp(rows, this->top_vec_);
  layer.Forward(rows, this->top_vec_);
  ASSERT_EQ(this->top_.shape(), (vector<int>{2, 1, 3}));
  const Dtype expected[] = {3, 1, 2, 4, 2, 0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(this->top_.cpu_data()[i], expected[i]) << i;
}

TYPED_TEST(ArgMaxLayerTest, OutMaxValGivesIndicesThenValues) {
  using Dtype = typename TypeParam::Dtype;
  Blobs<Dtype> rows{&this->rows_};
  ArgMaxLayer<Dtype> layer(ParseLayerParam("argmax_param { top_k: 2 out_max_val: true }"));
  layer.SetUp(rows, this->top_vec_);
  layer.Forward(rows, this->top_vec_);
  ASSERT_EQ(this->top_.shape(), (vector<int>{2, 2, 2}));
  const Dtype expected[] = {3, 1, 5, 5, 4, 2, 7, 0};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(this->top_.cpu_data()[i], expected[i]) << i;
}

TYPED_TEST(ArgMaxLayerTest, AlongAnAxisMatchesBruteForce) {
  using Dtype = typename TypeParam::Dtype;
  for (bool out_max_val : {false, true}) {
    ArgMaxLayer<Dtype> layer(
        ParseLayerParam(std::string("argmax_param { axis: 1 top_k: 2 out_max_val: ") +
                        (out_max_val ? "true }" : "false }")));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    layer.Forward(this->bottom_vec_, this->top_vec_);
    ASSERT_EQ(this->top_.shape(), (vector<int>{2, 2, 4, 5}));
    for (int n = 0; n < 2; ++n) {
      for (int h = 0; h < 4; ++h) {
        for (int w = 0; w < 5; ++w) {
          int first = 0;
          for (int c = 1; c < 3; ++c) {
            if (this->bottom_.data_at(n, c, h, w) > this->bottom_.data_at(n, first, h, w)) {
              first = c;
            }
          }
          int second = first == 0 ? 1 : 0;
          for (int c = 0; c < 3; ++c) {
            if (c != first &&
                this->bottom_.data_at(n, c, h, w) > this->bottom_.data_at(n, second, h, w)) {
              second = c;
            }
          }
          const Dtype expected_first =
              out_max_val ? this->bottom_.data_at(n, first, h, w) : Dtype(first);
          const Dtype expected_second =
              out_max_val ? this->bottom_.data_at(n, second, h, w) : Dtype(second);
          EXPECT_EQ(this->top_.data_at(n, 0, h, w), expected_first);
          EXPECT_EQ(this->top_.data_at(n, 1, h, w), expected_second);
        }
      }
    }
  }
}

TYPED_TEST(ArgMaxLayerTest, RejectsBadTopK) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* text :
       {"name: 'a' argmax_param { top_k: 0 }", "name: 'a' argmax_param { top_k: 61 }",
        "name: 'a' argmax_param { axis: 1 top_k: 4 }"}) {
    SCOPED_TRACE(text);
    ArgMaxLayer<Dtype> layer(ParseLayerParam(text));
    EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
  }
}

TYPED_TEST(ArgMaxLayerTest, BackwardIsAnErrorOnlyWhenAGradientIsAskedFor) {
  using Dtype = typename TypeParam::Dtype;
  ArgMaxLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_NO_THROW(layer.Backward(this->top_vec_, {false}, this->bottom_vec_));
  EXPECT_THROW(layer.Backward(this->top_vec_, {true}, this->bottom_vec_), Error);
}

}  // namespace caffe
