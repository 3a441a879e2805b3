// ParameterLayer: the top has the param's shape and is the (zero-initialised) blob, gradients
// written to the top land in the blob's diff, finite differences, and errors.
#include <vector>

#include "caffe/layers/parameter_layer.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class ParameterLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> top_;
  Blobs<Dtype> bottom_vec_{}, top_vec_{&top_};
};
TYPED_TEST_SUITE(ParameterLayerTest, TestDtypesAndDevices);

TYPED_TEST(ParameterLayerTest, IsRegisteredAsParameter) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'p' type: 'Parameter'"));
  EXPECT_STREQ(layer->type(), "Parameter");
}

TYPED_TEST(ParameterLayerTest, TopHasTheParamShapeAndStartsAtZero) {
  using Dtype = typename TypeParam::Dtype;
  ParameterLayer<Dtype> layer(
      ParseLayerParam("parameter_param { shape { dim: 2 dim: 3 dim: 4 } }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 3, 4}));
  ASSERT_EQ(layer.blobs().size(), 1u);
  EXPECT_EQ(layer.blobs()[0]->shape(), (vector<int>{2, 3, 4}));
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(this->top_.cpu_data()[i], Dtype(0)) << i;
}

TYPED_TEST(ParameterLayerTest, TopIsTheBlobAndItsDiffIsTheBlobsDiff) {
  using Dtype = typename TypeParam::Dtype;
  ParameterLayer<Dtype> layer(ParseLayerParam("parameter_param { shape { dim: 5 } }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < 5; ++i) layer.blobs()[0]->mutable_cpu_data()[i] = Dtype(i + 1);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(this->top_.cpu_data()[i], Dtype(i + 1)) << i;
  // Consumers accumulate into the top's diff: the parameter's gradient.
  caffe_set(5, Dtype(0.5), this->top_.mutable_cpu_diff());
  caffe_axpy(5, Dtype(1), this->top_.cpu_diff(), this->top_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {}, this->bottom_vec_);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(layer.blobs()[0]->cpu_diff()[i], Dtype(1)) << i;
}

TYPED_TEST(ParameterLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  ParameterLayer<Dtype> layer(ParseLayerParam("parameter_param { shape { dim: 2 dim: 3 } }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  FillGaussian<Dtype>(layer.blobs()[0].get(), 1701);
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3));
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, -2);
}

TYPED_TEST(ParameterLayerTest, RejectsABottom) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2});
  Blobs<Dtype> bottom_vec{&bottom};
  ParameterLayer<Dtype> layer(ParseLayerParam("parameter_param { shape { dim: 2 } }"));
  EXPECT_THROW(layer.SetUp(bottom_vec, this->top_vec_), Error);
}

TYPED_TEST(ParameterLayerTest, RejectsGivenBlobOfAnotherShape) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = ParseLayerParam("name: 'p' parameter_param { shape { dim: 2 dim: 3 } }");
  BlobProto* blob = param.add_blobs();
  blob->mutable_shape()->add_dim(6);
  for (int i = 0; i < 6; ++i) blob->add_data(1.0f);
  ParameterLayer<Dtype> layer(param);
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
}

}  // namespace caffe
