// NeuronLayer: the shared contract of element-wise layers (arity, shape, in-place use), checked on
// a minimal subclass so the base is tested apart from any one activation.
#include <memory>

#include "caffe/layers/neuron_layer.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {
// Doubles its input; the smallest NeuronLayer that computes something.
template <typename Dtype>
class DoubleLayer final : public NeuronLayer<Dtype> {
 public:
  using NeuronLayer<Dtype>::NeuronLayer;
  const char* type() const override { return "Double"; }

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {
    caffe_cpu_scale(bottom[0]->count(), Dtype(2), bottom[0]->cpu_data(),
                    top[0]->mutable_cpu_data());
  }
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override {
    caffe_cpu_scale(top[0]->count(), Dtype(2), top[0]->cpu_diff(), bottom[0]->mutable_cpu_diff());
  }
};
}  // namespace

template <typename TypeParam>
class NeuronLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  NeuronLayerTest() : bottom_(vector<int>{2, 3, 4, 5}) { FillGaussian<Dtype>(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(NeuronLayerTest, TestDtypesAndDevices);

TYPED_TEST(NeuronLayerTest, TopTakesBottomShapeOnEveryReshape) {
  using Dtype = typename TypeParam::Dtype;
  DoubleLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
  this->bottom_.Reshape(vector<int>{7, 1, 3});
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{7, 1, 3}));
}

TYPED_TEST(NeuronLayerTest, RunsInPlace) {
  using Dtype = typename TypeParam::Dtype;
  DoubleLayer<Dtype> layer(LayerParameter{});
  vector<Dtype> before(this->bottom_.cpu_data(), this->bottom_.cpu_data() + this->bottom_.count());
  layer.SetUp(this->bottom_vec_, this->bottom_vec_);
  layer.Forward(this->bottom_vec_, this->bottom_vec_);
  for (int i = 0; i < this->bottom_.count(); ++i) {
    EXPECT_EQ(this->bottom_.cpu_data()[i], 2 * before[i]);
  }
}

TYPED_TEST(NeuronLayerTest, RejectsWrongNumberOfBlobs) {
  using Dtype = typename TypeParam::Dtype;
  DoubleLayer<Dtype> layer(LayerParameter{});
  Blob<Dtype> other;
  Blobs<Dtype> two_bottoms{&this->bottom_, &other};
  EXPECT_THROW(layer.SetUp(two_bottoms, this->top_vec_), Error);
  Blobs<Dtype> no_tops;
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, no_tops), Error);
}

}  // namespace caffe
