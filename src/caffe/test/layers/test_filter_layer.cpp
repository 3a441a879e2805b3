// FilterLayer: top shapes at setup and after reading the selector, the selected items in order,
// backward scattering to the selected items (zeros elsewhere), finite differences, and shape
// errors.
// FilterLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <vector>

#include "caffe/layers/filter_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class FilterLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  FilterLayerTest()
      : data_(vector<int>{4, 3, 2}), labels_(vector<int>{4}), selector_(vector<int>{4}) {
    FillGaussian<Dtype>(&data_, 1701);
    const Dtype labels[] = {10, 11, 12, 13};
    caffe_copy(4, labels, labels_.mutable_cpu_data());
    const Dtype selector[] = {0, 1, 0, 2};  // any non-zero value selects
    caffe_copy(4, selector, selector_.mutable_cpu_data());
  }
  Blob<Dtype> data_, labels_, selector_, top_data_, top_labels_;
  Blobs<Dtype> bottom_vec_{&data_, &labels_, &selector_}, top_vec_{&top_data_, &top_labels_};
};
TYPED_TEST_SUITE(FilterLayerTest, TestDtypesAndDevices);

TYPED_TEST(FilterLayerTest, IsRegisteredAsFilter) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'f' type: 'Filter'"));
  EXPECT_STREQ(layer->type(), "Filter");
}

TYPED_TEST(FilterLayerTest, TopsHoldAllItemsAtSetupAndTheSelectedOnesAfterForward) {
  using Dtype = typename TypeParam::Dtype;
  FilterLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_data_.shape(), (vector<int>{4, 3, 2}));
  EXPECT_EQ(this->top_labels_.shape(), (vector<int>{4}));
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_data_.shape(), (vector<int>{2, 3, 2}));
  EXPECT_EQ(this->top_labels_.shape(), (vector<int>{2}));
}

TYPED_TEST(FilterLayerTest, ForwardKeepsTheSelectedItemsInOrder) {
  using Dtype = typename TypeParam::Dtype;
  FilterLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_labels_.cpu_data()[0], Dtype(11));
  EXPECT_EQ(this->top_labels_.cpu_data()[1], Dtype(13));
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(this->top_data_.cpu_data()[i], this->data_.cpu_data()[6 + i]);
    EXPECT_EQ(this->top_data_.cpu_data()[6 + i], this->data_.cpu_data()[18 + i]);
  }
}

TYPED_TEST(FilterLayerTest, NothingSelectedGivesEmptyTops) {
  using Dtype = typename TypeParam::Dtype;
  FilterLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  caffe_set(4, Dtype(0), this->selector_.mutable_cpu_data());
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_data_.shape(), (vector<int>{0, 3, 2}));
  EXPECT_EQ(this->top_labels_.count(), 0);
}

TYPED_TEST(FilterLayerTest, BackwardScattersToTheSelectedItems) {
  using Dtype = typename TypeParam::Dtype;
  FilterLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < 12; ++i) this->top_data_.mutable_cpu_diff()[i] = Dtype(i + 1);
  caffe_set(24, Dtype(7), this->data_.mutable_cpu_diff());  // stale values must be cleared
  layer.Backward(this->top_vec_, {true, false, false}, this->bottom_vec_);
  for (int n = 0; n < 4; ++n) {
    for (int i = 0; i < 6; ++i) {
      const Dtype expected = n == 1 ? Dtype(i + 1) : n == 3 ? Dtype(i + 7) : Dtype(0);
      EXPECT_EQ(this->data_.cpu_diff()[n * 6 + i], expected) << n << " " << i;
    }
  }
}

TYPED_TEST(FilterLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  FilterLayer<Dtype> layer(LayerParameter{});
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3));
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(FilterLayerTest, RejectsSelectorWithMoreThanOneValuePerItem) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> selector(vector<int>{4, 2});
  Blobs<Dtype> bottom_vec{&this->data_, &selector};
  Blobs<Dtype> top_vec{&this->top_data_};
  FilterLayer<Dtype> layer(ParseLayerParam("name: 'f'"));
  EXPECT_THROW(layer.SetUp(bottom_vec, top_vec), Error);
}

TYPED_TEST(FilterLayerTest, RejectsBottomsWithAnotherNumberOfItems) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> data(vector<int>{3, 2});
  Blobs<Dtype> bottom_vec{&data, &this->selector_};
  Blobs<Dtype> top_vec{&this->top_data_};
  FilterLayer<Dtype> layer(ParseLayerParam("name: 'f'"));
  EXPECT_THROW(layer.SetUp(bottom_vec, top_vec), Error);
}

TYPED_TEST(FilterLayerTest, RejectsWrongNumberOfTops) {
  using Dtype = typename TypeParam::Dtype;
  Blobs<Dtype> one_top{&this->top_data_};
  FilterLayer<Dtype> layer(ParseLayerParam("name: 'f'"));
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, one_top), Error);
}

TYPED_TEST(FilterLayerTest, RejectsGradientToTheSelector) {
  using Dtype = typename TypeParam::Dtype;
  FilterLayer<Dtype> layer(ParseLayerParam("name: 'f'"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_THROW(layer.Backward(this->top_vec_, {true, false, true}, this->bottom_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class FilterLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(FilterLayerGpuTest, TestDtypes);

TYPED_TEST(FilterLayerGpuTest, FilterTwoBottomsBySelector) {
  GpuLayerCase<TypeParam> c;
  c.layer =
      "name: 'filter' type: 'Filter' bottom: 'a' bottom: 'b' bottom: 'select' "
      "top: 'fa' top: 'fb'";
  c.bottom_shapes = {{9, 3, 5, 13}, {9, 4}, {9, 1}};
  c.fill = [](const Blobs<TypeParam>& bottom) {
    FillGaussian(bottom[0], 21);
    FillGaussian(bottom[1], 22);
    FillZeroOne(bottom[2]);
  };
  c.propagate_down = {true, true, false};
  ExpectGpuMatchesCpu(c);
}

}  // namespace caffe
