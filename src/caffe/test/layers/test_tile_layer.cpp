// TileLayer: top shapes, forward placement of every copy, backward summing the copies, finite
// differences, and parameter errors.
// TileLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <vector>

#include "caffe/layers/tile_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class TileLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  TileLayerTest() : bottom_(vector<int>{2, 3, 4}) { FillGaussian<Dtype>(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(TileLayerTest, TestDtypesAndDevices);

TYPED_TEST(TileLayerTest, IsRegisteredAsTile) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(
      ParseLayerParam("name: 't' type: 'Tile' tile_param { tiles: 2 }"));
  EXPECT_STREQ(layer->type(), "Tile");
}

TYPED_TEST(TileLayerTest, TopMultipliesTheAxis) {
  using Dtype = typename TypeParam::Dtype;
  TileLayer<Dtype> channels(ParseLayerParam("tile_param { tiles: 3 }"));
  channels.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 9, 4}));
  TileLayer<Dtype> last(ParseLayerParam("tile_param { axis: -1 tiles: 2 }"));
  last.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 3, 8}));
}

TYPED_TEST(TileLayerTest, ForwardRepeatsTheBlockFromTheAxisOn) {
  using Dtype = typename TypeParam::Dtype;
  TileLayer<Dtype> layer(ParseLayerParam("tile_param { axis: 1 tiles: 3 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  // top[n, t * 3 + c, w] = bottom[n, c, w]
  for (int n = 0; n < 2; ++n) {
    for (int t = 0; t < 3; ++t) {
      for (int c = 0; c < 3; ++c) {
        for (int w = 0; w < 4; ++w) {
          EXPECT_EQ(this->top_.data_at({n, t * 3 + c, w}), this->bottom_.data_at({n, c, w}));
        }
      }
    }
  }
}

TYPED_TEST(TileLayerTest, BackwardSumsTheCopies) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 2}), top;
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  TileLayer<Dtype> layer(ParseLayerParam("tile_param { axis: 1 tiles: 3 }"));
  layer.SetUp(bottom_vec, top_vec);
  ASSERT_EQ(top.shape(), (vector<int>{2, 6}));
  const Dtype dy[] = {1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60};
  caffe_copy(12, dy, top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  const Dtype expected[] = {9, 12, 90, 120};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(bottom.cpu_diff()[i], expected[i]) << i;
}

TYPED_TEST(TileLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* text : {"tile_param { axis: 0 tiles: 2 }", "tile_param { axis: 1 tiles: 3 }",
                           "tile_param { axis: 2 tiles: 2 }"}) {
    SCOPED_TRACE(text);
    TileLayer<Dtype> layer(ParseLayerParam(text));
    GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3));
    checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(TileLayerTest, RejectsBadParameters) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* text :
       {"name: 't'", "name: 't' tile_param { tiles: 0 }", "name: 't' tile_param { tiles: -2 }",
        "name: 't' tile_param { axis: 3 tiles: 2 }"}) {
    SCOPED_TRACE(text);
    TileLayer<Dtype> layer(ParseLayerParam(text));
    EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
  }
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class TileLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(TileLayerGpuTest, TestDtypes);

TYPED_TEST(TileLayerGpuTest, TileAlongAxis1) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'tile' type: 'Tile' tile_param { axis: 1 tiles: 4 } bottom: 'x' top: 'y'";
  c.bottom_shapes = {{3, 5, 37}};
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(TileLayerGpuTest, TileAlongAxis0) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'tile' type: 'Tile' tile_param { axis: 0 tiles: 3 } bottom: 'x' top: 'y'";
  c.bottom_shapes = {{4, 101}};
  ExpectGpuMatchesCpu(c);
}

}  // namespace caffe
