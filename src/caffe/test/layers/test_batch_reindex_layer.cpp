// BatchReindexLayer: top shape, hand-computed gather, backward accumulating repeated indices
// (zero for items not picked), finite differences, and index errors.
// BatchReindexLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <vector>

#include "caffe/layers/batch_reindex_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class BatchReindexLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  BatchReindexLayerTest() : bottom_(vector<int>{4, 2, 3}), indices_(vector<int>{5}) {
    FillGaussian<Dtype>(&bottom_, 1701);
    const Dtype indices[] = {2, 0, 2, 3, 2};  // item 1 unused, item 2 three times
    caffe_copy(5, indices, indices_.mutable_cpu_data());
  }
  Blob<Dtype> bottom_, indices_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_, &indices_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(BatchReindexLayerTest, TestDtypesAndDevices);

TYPED_TEST(BatchReindexLayerTest, IsRegisteredAsBatchReindex) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'b' type: 'BatchReindex'"));
  EXPECT_STREQ(layer->type(), "BatchReindex");
}

TYPED_TEST(BatchReindexLayerTest, TopHasOneItemPerIndex) {
  using Dtype = typename TypeParam::Dtype;
  BatchReindexLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{5, 2, 3}));
}

TYPED_TEST(BatchReindexLayerTest, ForwardGathersItems) {
  using Dtype = typename TypeParam::Dtype;
  BatchReindexLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const int picks[] = {2, 0, 2, 3, 2};
  for (int m = 0; m < 5; ++m) {
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(this->top_.cpu_data()[m * 6 + i], this->bottom_.cpu_data()[picks[m] * 6 + i]);
    }
  }
}

TYPED_TEST(BatchReindexLayerTest, BackwardAccumulatesRepeatedItems) {
  using Dtype = typename TypeParam::Dtype;
  BatchReindexLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int m = 0; m < 5; ++m) caffe_set(6, Dtype(m + 1), this->top_.mutable_cpu_diff() + m * 6);
  caffe_set(this->bottom_.count(), Dtype(9), this->bottom_.mutable_cpu_diff());  // overwritten
  layer.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  const Dtype expected[] = {2, 0, 1 + 3 + 5, 4};
  for (int n = 0; n < 4; ++n) {
    for (int i = 0; i < 6; ++i) EXPECT_EQ(this->bottom_.cpu_diff()[n * 6 + i], expected[n]) << n;
  }
}

TYPED_TEST(BatchReindexLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  BatchReindexLayer<Dtype> layer(LayerParameter{});
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3));
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(BatchReindexLayerTest, RejectsInvalidIndices) {
  using Dtype = typename TypeParam::Dtype;
  for (Dtype bad : {Dtype(4), Dtype(-1), Dtype(0.5)}) {
    SCOPED_TRACE(bad);
    BatchReindexLayer<Dtype> layer(ParseLayerParam("name: 'b'"));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    this->indices_.mutable_cpu_data()[1] = bad;
    EXPECT_THROW(layer.Forward(this->bottom_vec_, this->top_vec_), Error);
  }
}

TYPED_TEST(BatchReindexLayerTest, RejectsIndicesThatAreNotOneDimensional) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> indices(vector<int>{5, 1});
  Blobs<Dtype> bottom_vec{&this->bottom_, &indices};
  BatchReindexLayer<Dtype> layer(ParseLayerParam("name: 'b'"));
  EXPECT_THROW(layer.SetUp(bottom_vec, this->top_vec_), Error);
}

TYPED_TEST(BatchReindexLayerTest, RejectsGradientToTheIndices) {
  using Dtype = typename TypeParam::Dtype;
  BatchReindexLayer<Dtype> layer(ParseLayerParam("name: 'b'"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_THROW(layer.Backward(this->top_vec_, {true, true}, this->bottom_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class BatchReindexLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(BatchReindexLayerGpuTest, TestDtypes);

TYPED_TEST(BatchReindexLayerGpuTest, BatchReindexWithRepeatsAndUnpickedItems) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'reindex' type: 'BatchReindex' bottom: 'x' bottom: 'index' top: 'y'";
  c.bottom_shapes = {{8, 3, 5, 11}, {12}};
  c.fill = [](const Blobs<TypeParam>& bottom) {
    FillGaussian(bottom[0], 20);
    const int picks[] = {6, 0, 3, 3, 1, 6, 6, 2, 5, 0, 4, 3};  // item 7 is never picked
    for (int m = 0; m < 12; ++m) bottom[1]->mutable_cpu_data()[m] = TypeParam(picks[m]);
  };
  c.propagate_down = {true, false};
  ExpectGpuMatchesCpu(c);
}

}  // namespace caffe
