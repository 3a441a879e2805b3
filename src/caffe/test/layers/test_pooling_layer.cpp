// PoolingLayer: output sizes (CEIL/FLOOR rounding, BVLC's correction for windows that would start
// in the padding), MAX and AVE values by hand and against BVLC's loops on random inputs (and
// AVE's backward and MAX's gradient routing; on the CPU equal to the bit), the argmax top,
// tie-breaking, AVE's divisor at the borders, global pooling, 1-D and 3-D bottoms,
// finite-difference gradients, and bad parameters.
// PoolingLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
// Legend: N images, C channels, H/W height/width, PH/PW pooled height/width.
#include <algorithm>
#include <cfloat>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/pooling_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

LayerParameter PoolParam(const std::string& pooling_param) {
  return ParseLayerParam("name: 'pool' type: 'Pooling' pooling_param { " + pooling_param + " }");
}

// BVLC's 2-D pooling loops, written out for (N, C, H, W) blobs: the reference the layer must
// reproduce exactly (same values, same argmax, same divisor).
template <typename Dtype>
void ReferencePool(const Blob<Dtype>& bottom, bool max, int kernel_h, int kernel_w, int pad_h,
                   int pad_w, int stride_h, int stride_w, int pooled_h, int pooled_w,
                   std::vector<Dtype>* top, std::vector<int>* argmax) {
  const int height = bottom.height(), width = bottom.width();
  top->assign(bottom.count(0, 2) * pooled_h * pooled_w, Dtype(0));
  argmax->assign(top->size(), -1);
  for (int plane = 0; plane < bottom.count(0, 2); ++plane) {
    const Dtype* x = bottom.cpu_data() + plane * height * width;
    for (int ph = 0; ph < pooled_h; ++ph) {
      for (int pw = 0; pw < pooled_w; ++pw) {
        int hstart = ph * stride_h - pad_h, wstart = pw * stride_w - pad_w;
        int hend = std::min(hstart + kernel_h, height + pad_h);
        int wend = std::min(wstart + kernel_w, width + pad_w);
        const int pool_size = (hend - hstart) * (wend - wstart);
        hstart = std::max(hstart, 0);
        wstart = std::max(wstart, 0);
        hend = std::min(hend, height);
        wend = std::min(wend, width);
        const int out = (plane * pooled_h + ph) * pooled_w + pw;
        Dtype value = max ? Dtype(-FLT_MAX) : Dtype(0);
        for (int h = hstart; h < hend; ++h) {
          for (int w = wstart; w < wend; ++w) {
            if (!max) {
              value += x[h * width + w];
            } else if (x[h * width + w] > value) {
              value = x[h * width + w];
              (*argmax)[out] = h * width + w;
            }
          }
        }
        (*top)[out] = max ? value : value / pool_size;
      }
    }
  }
}

// 2-D geometries for the comparisons with BVLC's loops: overlapping and tiling windows, padding,
// rectangular kernels, and the FLOOR rounding.
struct Case2d {
  const char* param;
  int kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w;
};

const std::vector<Case2d>& Cases2d() {
  static const std::vector<Case2d> cases = {
      {"kernel_size: 3 stride: 2", 3, 3, 0, 0, 2, 2},
      {"kernel_size: 2 stride: 2", 2, 2, 0, 0, 2, 2},
      {"kernel_size: 3 stride: 1 pad: 1", 3, 3, 1, 1, 1, 1},
      {"kernel_size: 3 stride: 2 pad: 2", 3, 3, 2, 2, 2, 2},
      {"kernel_h: 4 kernel_w: 2 stride_h: 3 stride_w: 1 pad_h: 2 pad_w: 1", 4, 2, 2, 1, 3, 1},
      {"kernel_size: 5 stride: 3 pad: 1 round_mode: FLOOR", 5, 5, 1, 1, 3, 3},
  };
  return cases;
}

// Distinct values (a shuffled ramp with steps of 0.1) so that no two inputs of a MAX window are
// within a finite-difference step of each other.
template <typename Dtype>
void FillDistinct(Blob<Dtype>* blob, unsigned int seed) {
  std::vector<int> order(blob->count());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  for (int i = 0; i < blob->count(); ++i) {
    blob->mutable_cpu_data()[i] = Dtype(0.1) * (order[i] - blob->count() / 2);
  }
}

}  // namespace

template <typename TypeParam>
class PoolingLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  PoolingLayerTest() : bottom_(std::vector<int>{2, 3, 6, 5}) { FillGaussian(&bottom_, 1701); }

  std::vector<int> TopShape(const std::string& pooling_param) {
    PoolingLayer<Dtype> layer(PoolParam(pooling_param));
    layer.SetUp(bottom_vec_, top_vec_);
    return top_.shape();
  }

  Blob<Dtype> bottom_, top_, mask_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(PoolingLayerTest, TestDtypesAndDevices);

TYPED_TEST(PoolingLayerTest, OutputSizeRounding) {
  using Shape = std::vector<int>;
  // H: (6 - 3) / 2 = 1.5, W: (5 - 3) / 2 = 1: CEIL gives 3x2, FLOOR 2x2.
  EXPECT_EQ(this->TopShape("kernel_size: 3 stride: 2"), (Shape{2, 3, 3, 2}));
  EXPECT_EQ(this->TopShape("kernel_size: 3 stride: 2 round_mode: FLOOR"), (Shape{2, 3, 2, 2}));
  EXPECT_EQ(this->TopShape("kernel_size: 3 stride: 2 ceil_mode: false"), (Shape{2, 3, 2, 2}));
  EXPECT_EQ(this->TopShape("kernel_size: 3 stride: 2 ceil_mode: true"), (Shape{2, 3, 3, 2}));
  // Padded: H (6 + 2 - 3) / 2 = 2.5 -> 4, W (5 + 2 - 3) / 2 = 2 -> 3.
  EXPECT_EQ(this->TopShape("kernel_size: 3 stride: 2 pad: 1"), (Shape{2, 3, 4, 3}));
  EXPECT_EQ(this->TopShape("kernel_h: 2 kernel_w: 4 stride_h: 1 stride_w: 3 pad_h: 1 pad_w: 0"),
            (Shape{2, 3, 7, 2}));
  EXPECT_EQ(this->TopShape("global_pooling: true"), (Shape{2, 3, 1, 1}));
}

TYPED_TEST(PoolingLayerTest, LastWindowMayNotStartInThePadding) {
  using Dtype = typename TypeParam::Dtype;
  // W = 5, kernel 2, stride 3, pad 1: ceil((5 + 2 - 2) / 3) + 1 = 3, but the third window would
  // start at 3 * 2 - 1 = 5, past the image, so BVLC drops it.
  this->bottom_.Reshape({1, 1, 5, 5});
  EXPECT_EQ(this->TopShape("kernel_size: 2 stride: 3 pad: 1"), (std::vector<int>{1, 1, 2, 2}));
  // Without padding BVLC makes no correction: W = 5, kernel 1, stride 3 gives 3 windows, the last
  // one (starting at 6) empty: MAX yields -FLT_MAX there and passes no gradient.
  for (int i = 0; i < 25; ++i) this->bottom_.mutable_cpu_data()[i] = i;
  PoolingLayer<Dtype> layer(PoolParam("kernel_size: 1 stride: 3"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(this->top_.shape(), (std::vector<int>{1, 1, 3, 3}));
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.cpu_data()[0], 0);
  EXPECT_EQ(this->top_.cpu_data()[4], 18);
  EXPECT_EQ(this->top_.cpu_data()[2], Dtype(-FLT_MAX));
  caffe_set(9, Dtype(1), this->top_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
  EXPECT_EQ(this->bottom_.asum_diff(), 4);  // the four non-empty windows
}

TYPED_TEST(PoolingLayerTest, MaxForwardHandComputedWithMaskAndFirstMaximumOnTies) {
  using Dtype = typename TypeParam::Dtype;
  // 3x4 input, 2x2 kernel, stride 1 -> 2x3. Window (0, 1) holds two 9s: the first (row-major)
  // wins; window (1, 2) is all 4s.
  const Dtype input[12] = {1, 9, 3, 4, 2, 9, 4, 4, 8, 0, 4, 4};
  this->bottom_.Reshape({1, 1, 3, 4});
  caffe_copy(12, input, this->bottom_.mutable_cpu_data());
  Blobs<Dtype> tops{&this->top_, &this->mask_};
  PoolingLayer<Dtype> layer(PoolParam("pool: MAX kernel_size: 2 stride: 1"));
  layer.SetUp(this->bottom_vec_, tops);
  ASSERT_EQ(this->mask_.shape(), (std::vector<int>{1, 1, 2, 3}));
  layer.Forward(this->bottom_vec_, tops);
  const Dtype expected[6] = {9, 9, 4, 9, 9, 4};
  const Dtype expected_mask[6] = {1, 1, 3, 5, 5, 6};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(this->top_.cpu_data()[i], expected[i]) << i;
    EXPECT_EQ(this->mask_.cpu_data()[i], expected_mask[i]) << i;
  }
  // Backward routes each output's diff to its argmax, summing where windows share one.
  for (int i = 0; i < 6; ++i) this->top_.mutable_cpu_diff()[i] = i + 1;
  layer.Backward(tops, {true}, this->bottom_vec_);
  const Dtype expected_diff[12] = {0, 1 + 2, 0, 3, 0, 4 + 5, 6, 0, 0, 0, 0, 0};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(this->bottom_.cpu_diff()[i], expected_diff[i]) << i;
}

TYPED_TEST(PoolingLayerTest, AveDividesByTheWindowClippedToThePaddedInput) {
  using Dtype = typename TypeParam::Dtype;
  this->bottom_.Reshape({1, 1, 4, 4});
  caffe_set(16, Dtype(1), this->bottom_.mutable_cpu_data());
  PoolingLayer<Dtype> layer(PoolParam("pool: AVE kernel_size: 3 stride: 2 pad: 1"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(this->top_.shape(), (std::vector<int>{1, 1, 3, 3}));
  layer.Forward(this->bottom_vec_, this->top_vec_);
  // Rows of the windows: [-1, 2) padded extent 3, 2 inside; [1, 4) 3 inside; [3, 5) padded
  // extent 2 (the window is cut at the end of the padding), 1 inside. Columns alike.
  const Dtype inside[3] = {2, 3, 1}, extent[3] = {3, 3, 2};
  for (int ph = 0; ph < 3; ++ph) {
    for (int pw = 0; pw < 3; ++pw) {
      EXPECT_NEAR(this->top_.cpu_data()[ph * 3 + pw],
                  inside[ph] * inside[pw] / (extent[ph] * extent[pw]), 1e-6)
          << ph << ", " << pw;
    }
  }
}

TYPED_TEST(PoolingLayerTest, MatchesBvlcLoopsOnRandomInputs) {
  using Dtype = typename TypeParam::Dtype;
  // 37 columns: rows of up to 37 outputs, for the CPU paths that take a row at a time.
  this->bottom_.Reshape({2, 3, 11, 37});
  FillGaussian(&this->bottom_, 3);
  for (const Case2d& c : Cases2d()) {
    for (const char* method : {"MAX", "AVE"}) {
      PoolingLayer<Dtype> layer(PoolParam(std::string("pool: ") + method + " " + c.param));
      Blobs<Dtype> tops{&this->top_};
      if (method[0] == 'M') tops.push_back(&this->mask_);
      layer.SetUp(this->bottom_vec_, tops);
      layer.Forward(this->bottom_vec_, tops);
      std::vector<Dtype> expected;
      std::vector<int> argmax;
      ReferencePool(this->bottom_, method[0] == 'M', c.kernel_h, c.kernel_w, c.pad_h, c.pad_w,
                    c.stride_h, c.stride_w, this->top_.height(), this->top_.width(), &expected,
                    &argmax);
      // On the CPU the same sums in the same order: equal to the bit (AVE's rows of outputs
      // included, which add each window's values in BVLC's order).
      const double tolerance = Caffe::mode() == Caffe::CPU ? 0.0 : 1e-6;
      for (int i = 0; i < this->top_.count(); ++i) {
        ASSERT_NEAR(this->top_.cpu_data()[i], expected[i], tolerance) << method << " " << c.param;
        if (method[0] == 'M') {
          ASSERT_EQ(this->mask_.cpu_data()[i], argmax[i]) << c.param;
        }
      }
      if (method[0] != 'M') continue;
      // Without the mask top the argmax is kept inside (ints): the same maxima, and backward
      // routes each output's gradient to BVLC's argmax.
      PoolingLayer<Dtype> plain(PoolParam(std::string("pool: MAX ") + c.param));
      plain.SetUp(this->bottom_vec_, this->top_vec_);
      plain.Forward(this->bottom_vec_, this->top_vec_);
      const int out_plane = this->top_.count(2), in_plane = this->bottom_.count(2);
      std::vector<Dtype> dx(this->bottom_.count(), Dtype(0));
      for (int i = 0; i < this->top_.count(); ++i) {
        ASSERT_EQ(this->top_.cpu_data()[i], expected[i]) << c.param << " without the mask top";
        this->top_.mutable_cpu_diff()[i] = static_cast<Dtype>(1 + i % 7);
        dx[(i / out_plane) * in_plane + argmax[i]] += static_cast<Dtype>(1 + i % 7);
      }
      plain.Backward(this->top_vec_, {true}, this->bottom_vec_);
      for (int i = 0; i < this->bottom_.count(); ++i) {
        ASSERT_EQ(this->bottom_.cpu_diff()[i], dx[i]) << c.param << " bottom diff " << i;
      }
    }
  }
}

TYPED_TEST(PoolingLayerTest, AveBackwardMatchesBvlcLoops) {
  // BVLC's AVE backward: each output's diff over its divisor added to its window, outputs in
  // row-major order. On the CPU equal to the bit (rows of outputs add in the same order).
  using Dtype = typename TypeParam::Dtype;
  this->bottom_.Reshape({2, 3, 11, 23});
  const int height = 11, width = 23;
  for (const Case2d& c : Cases2d()) {
    PoolingLayer<Dtype> layer(PoolParam(std::string("pool: AVE ") + c.param));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    FillGaussian(&this->top_, 5);
    caffe_copy(this->top_.count(), this->top_.cpu_data(), this->top_.mutable_cpu_diff());
    layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
    const int pooled_h = this->top_.height(), pooled_w = this->top_.width();
    std::vector<Dtype> expected(this->bottom_.count(), Dtype(0));
    for (int plane = 0; plane < this->bottom_.count(0, 2); ++plane) {
      const Dtype* dy = this->top_.cpu_diff() + plane * pooled_h * pooled_w;
      Dtype* dx = expected.data() + plane * height * width;
      for (int ph = 0; ph < pooled_h; ++ph) {
        for (int pw = 0; pw < pooled_w; ++pw) {
          int hstart = ph * c.stride_h - c.pad_h, wstart = pw * c.stride_w - c.pad_w;
          int hend = std::min(hstart + c.kernel_h, height + c.pad_h);
          int wend = std::min(wstart + c.kernel_w, width + c.pad_w);
          const int pool_size = (hend - hstart) * (wend - wstart);
          hstart = std::max(hstart, 0);
          wstart = std::max(wstart, 0);
          hend = std::min(hend, height);
          wend = std::min(wend, width);
          for (int h = hstart; h < hend; ++h) {
            for (int w = wstart; w < wend; ++w) {
              dx[h * width + w] += dy[ph * pooled_w + pw] / pool_size;
            }
          }
        }
      }
    }
    const double tolerance = Caffe::mode() == Caffe::CPU ? 0.0 : 1e-6;
    for (int i = 0; i < this->bottom_.count(); ++i) {
      ASSERT_NEAR(this->bottom_.cpu_diff()[i], expected[i], tolerance) << c.param << " " << i;
    }
  }
}

TYPED_TEST(PoolingLayerTest, MaxTiesGoToTheFirstInRowMajorOrder) {
  // Values in {0, 1, 2}: most windows hold several maxima. Overlapping windows (stride below the
  // kernel) take the two-pass path, the others the direct one; both must pick the first maximum
  // in row-major order, as BVLC's loops do.
  using Dtype = typename TypeParam::Dtype;
  this->bottom_.Reshape({2, 3, 11, 37});
  std::mt19937 generator(7);
  for (int i = 0; i < this->bottom_.count(); ++i) {
    this->bottom_.mutable_cpu_data()[i] = static_cast<Dtype>(generator() % 3);
  }
  const std::vector<std::vector<int>> cases = {
      // kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w
      {3, 3, 1, 1, 1, 1},
      {3, 3, 0, 0, 2, 2},
      {5, 3, 2, 1, 2, 1},
      {3, 4, 1, 0, 1, 3},
      {2, 2, 0, 0, 2, 2}};
  for (const std::vector<int>& c : cases) {
    const std::string param =
        "pool: MAX kernel_h: " + std::to_string(c[0]) + " kernel_w: " + std::to_string(c[1]) +
        " pad_h: " + std::to_string(c[2]) + " pad_w: " + std::to_string(c[3]) +
        " stride_h: " + std::to_string(c[4]) + " stride_w: " + std::to_string(c[5]);
    PoolingLayer<Dtype> layer(PoolParam(param));
    Blobs<Dtype> tops{&this->top_, &this->mask_};
    layer.SetUp(this->bottom_vec_, tops);
    layer.Forward(this->bottom_vec_, tops);
    std::vector<Dtype> expected;
    std::vector<int> argmax;
    ReferencePool(this->bottom_, true, c[0], c[1], c[2], c[3], c[4], c[5], this->top_.height(),
                  this->top_.width(), &expected, &argmax);
    for (int i = 0; i < this->top_.count(); ++i) {
      ASSERT_EQ(this->top_.cpu_data()[i], expected[i]) << param << " output " << i;
      ASSERT_EQ(this->mask_.cpu_data()[i], argmax[i]) << param << " output " << i;
    }
  }
}

// 2x2 windows at stride 2 that tile an even-sized input take their own path (forward without
// window bounds, backward writing every input): same values, argmax (ties included) and input
// gradient as BVLC's loops.
TYPED_TEST(PoolingLayerTest, TiledTwoByTwoMaxMatchesBvlcLoopsForwardAndBackward) {
  using Dtype = typename TypeParam::Dtype;
  this->bottom_.Reshape({2, 3, 12, 14});
  std::mt19937 generator(9);
  for (int i = 0; i < this->bottom_.count(); ++i) {  // ties in most windows, and -FLT_MAX ones
    const int value = static_cast<int>(generator() % 4);
    this->bottom_.mutable_cpu_data()[i] = value == 3 ? -FLT_MAX : static_cast<Dtype>(value);
  }
  PoolingLayer<Dtype> layer(PoolParam("pool: MAX kernel_size: 2 stride: 2"));
  Blobs<Dtype> tops{&this->top_, &this->mask_};
  layer.SetUp(this->bottom_vec_, tops);
  layer.Forward(this->bottom_vec_, tops);
  std::vector<Dtype> expected;
  std::vector<int> argmax;
  ReferencePool(this->bottom_, true, 2, 2, 0, 0, 2, 2, this->top_.height(), this->top_.width(),
                &expected, &argmax);
  ASSERT_EQ(this->top_.count(), 2 * 3 * 6 * 7);
  for (int i = 0; i < this->top_.count(); ++i) {
    ASSERT_EQ(this->top_.cpu_data()[i], expected[i]) << "output " << i;
    ASSERT_EQ(this->mask_.cpu_data()[i], argmax[i]) << "output " << i;
  }
  // Backward into a bottom diff full of garbage: every input is written.
  FillGaussian(&this->top_, 10);
  caffe_copy(this->top_.count(), this->top_.cpu_data(), this->top_.mutable_cpu_diff());
  caffe_set(this->bottom_.count(), Dtype(7), this->bottom_.mutable_cpu_diff());
  layer.Backward(tops, {true}, this->bottom_vec_);
  std::vector<Dtype> expected_diff(this->bottom_.count(), Dtype(0));
  const int out_plane = 6 * 7, in_plane = 12 * 14;
  for (int o = 0; o < this->top_.count(); ++o) {
    if (argmax[o] >= 0) {
      expected_diff[(o / out_plane) * in_plane + argmax[o]] += this->top_.cpu_diff()[o];
    }
  }
  for (int i = 0; i < this->bottom_.count(); ++i) {
    ASSERT_EQ(this->bottom_.cpu_diff()[i], expected_diff[i]) << "input " << i;
  }
}

TYPED_TEST(PoolingLayerTest, GlobalPoolingTakesTheWholePlane) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* method : {"MAX", "AVE"}) {
    PoolingLayer<Dtype> layer(PoolParam(std::string("global_pooling: true pool: ") + method));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    layer.Forward(this->bottom_vec_, this->top_vec_);
    for (int plane = 0; plane < 6; ++plane) {
      const Dtype* x = this->bottom_.cpu_data() + plane * 30;
      const Dtype expected = method[0] == 'M' ? *std::max_element(x, x + 30)
                                              : std::accumulate(x, x + 30, Dtype(0)) / 30;
      EXPECT_NEAR(this->top_.cpu_data()[plane], expected, 1e-6) << method << " " << plane;
    }
  }
  // The kernel follows the input size on reshape.
  PoolingLayer<Dtype> layer(PoolParam("global_pooling: true pool: AVE"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  this->bottom_.Reshape({1, 2, 3, 7});
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{1, 2, 1, 1}));
}

TYPED_TEST(PoolingLayerTest, OneAndThreeSpatialAxes) {
  using Dtype = typename TypeParam::Dtype;
  // 1-D: (N, C, W).
  this->bottom_.Reshape({1, 2, 7});
  FillGaussian(&this->bottom_, 4);
  PoolingLayer<Dtype> pool_1d(PoolParam("pool: MAX kernel_size: 3 stride: 2"));
  pool_1d.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(this->top_.shape(), (std::vector<int>{1, 2, 3}));
  pool_1d.Forward(this->bottom_vec_, this->top_vec_);
  const Dtype* x = this->bottom_.cpu_data();
  for (int c = 0; c < 2; ++c) {
    for (int o = 0; o < 3; ++o) {
      EXPECT_EQ(this->top_.cpu_data()[c * 3 + o],
                *std::max_element(x + c * 7 + 2 * o, x + c * 7 + 2 * o + 3));
    }
  }
  // 3-D: (N, C, D, H, W) 2x2x2 windows, stride 2, on 2x4x2 -> 1x2x1.
  this->bottom_.Reshape({1, 1, 2, 4, 2});
  for (int i = 0; i < 16; ++i) this->bottom_.mutable_cpu_data()[i] = (i * 7) % 16;
  PoolingLayer<Dtype> max_3d(PoolParam("pool: MAX kernel_size: 2 stride: 2"));
  Blobs<Dtype> tops{&this->top_, &this->mask_};
  max_3d.SetUp(this->bottom_vec_, tops);
  ASSERT_EQ(this->top_.shape(), (std::vector<int>{1, 1, 1, 2, 1}));
  max_3d.Forward(this->bottom_vec_, tops);
  // Window 0: (d, h, w) in {0,1}x{0,1}x{0,1}: flat indices 0,1,2,3,8,9,10,11.
  // Values (7i mod 16): 0,7,14,5,8,15,6,13 -> max 15 at 9; window 1: 4..7, 12..15 ->
  // 12,3,10,1,4,11,2,9 -> max 12 at 4.
  EXPECT_EQ(this->top_.cpu_data()[0], 15);
  EXPECT_EQ(this->mask_.cpu_data()[0], 9);
  EXPECT_EQ(this->top_.cpu_data()[1], 12);
  EXPECT_EQ(this->mask_.cpu_data()[1], 4);
  PoolingLayer<Dtype> ave_3d(PoolParam("pool: AVE kernel_size: 2 stride: 2"));
  ave_3d.SetUp(this->bottom_vec_, this->top_vec_);
  ave_3d.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_NEAR(this->top_.cpu_data()[0], (0 + 7 + 14 + 5 + 8 + 15 + 6 + 13) / Dtype(8), 1e-6);
  EXPECT_NEAR(this->top_.cpu_data()[1], (12 + 3 + 10 + 1 + 4 + 11 + 2 + 9) / Dtype(8), 1e-6);
}

TYPED_TEST(PoolingLayerTest, MaxGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  this->bottom_.Reshape({2, 2, 5, 4});
  FillDistinct(&this->bottom_, 5);
  for (const char* param : {"kernel_size: 3 stride: 2", "kernel_h: 2 kernel_w: 3 stride: 1 pad: 1",
                            "kernel_size: 2 stride: 2 pad: 1"}) {
    PoolingLayer<Dtype> layer(PoolParam(std::string("pool: MAX ") + param));
    GradientChecker<Dtype> checker(1e-2, 1e-3);
    checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(PoolingLayerTest, AveGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  this->bottom_.Reshape({2, 2, 5, 4});
  FillGaussian(&this->bottom_, 6);
  for (const char* param : {"kernel_size: 3 stride: 2 pad: 1", "kernel_h: 3 kernel_w: 2 stride: 1",
                            "global_pooling: true"}) {
    PoolingLayer<Dtype> layer(PoolParam(std::string("pool: AVE ") + param));
    GradientChecker<Dtype> checker(1e-2, 1e-3);
    checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(PoolingLayerTest, GradientsMatchFiniteDifferences3d) {
  using Dtype = typename TypeParam::Dtype;
  this->bottom_.Reshape({1, 2, 3, 4, 3});
  FillDistinct(&this->bottom_, 7);
  for (const char* param : {"pool: MAX kernel_size: 2 stride: 1",
                            "pool: AVE kernel_size: 2 "
                            "stride: 2 pad: 1"}) {
    PoolingLayer<Dtype> layer(PoolParam(param));
    GradientChecker<Dtype> checker(1e-2, 1e-3);
    checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(PoolingLayerTest, RejectsBadParameters) {
  using Dtype = typename TypeParam::Dtype;
  auto setup = [&](const std::string& param, Blob<Dtype>* bottom) {
    PoolingLayer<Dtype> layer(PoolParam(param));
    Blobs<Dtype> bottoms{bottom};
    layer.SetUp(bottoms, this->top_vec_);
  };
  Blob<Dtype>* bottom = &this->bottom_;
  EXPECT_NO_THROW(setup("kernel_size: 3", bottom));
  EXPECT_THROW(setup("stride: 2", bottom), Error);  // no kernel
  EXPECT_THROW(setup("kernel_size: 0", bottom), Error);
  EXPECT_THROW(setup("kernel_h: 2", bottom), Error);  // no kernel_w
  EXPECT_THROW(setup("kernel_size: 2 kernel_h: 2 kernel_w: 2", bottom), Error);
  EXPECT_THROW(setup("kernel_size: 2 stride: 0", bottom), Error);
  EXPECT_THROW(setup("kernel_size: 2 pad: 1 pad_h: 1 pad_w: 1", bottom), Error);
  EXPECT_THROW(setup("kernel_size: 2 stride_h: 1", bottom), Error);  // no stride_w
  EXPECT_THROW(setup("kernel_size: 2 pad: 2", bottom), Error);       // pad >= kernel
  EXPECT_THROW(setup("global_pooling: true kernel_size: 2", bottom), Error);
  EXPECT_THROW(setup("global_pooling: true stride: 2", bottom), Error);
  EXPECT_THROW(setup("global_pooling: true pad: 1", bottom), Error);
  EXPECT_THROW(setup("pool: STOCHASTIC kernel_size: 3 pad: 1", bottom), Error);
  EXPECT_THROW(setup("kernel_size: 2 round_mode: FLOOR ceil_mode: true", bottom), Error);
  EXPECT_THROW(setup("kernel_size: 7 round_mode: FLOOR", bottom), Error);  // larger than 6x5
  Blob<Dtype> flat(std::vector<int>{2, 3}), six_axes(std::vector<int>{1, 1, 2, 2, 2, 2}),
      volume(std::vector<int>{1, 1, 4, 4, 4});
  EXPECT_THROW(setup("kernel_size: 1", &flat), Error);
  EXPECT_THROW(setup("kernel_size: 1", &six_axes), Error);
  EXPECT_NO_THROW(setup("kernel_size: 2", &volume));
  EXPECT_THROW(setup("kernel_h: 2 kernel_w: 2", &volume), Error);
  // AVE has no argmax top.
  PoolingLayer<Dtype> ave(PoolParam("pool: AVE kernel_size: 2"));
  Blobs<Dtype> two_tops{&this->top_, &this->mask_};
  EXPECT_THROW(ave.SetUp(this->bottom_vec_, two_tops), Error);
  // A changed number of axes after setup.
  PoolingLayer<Dtype> layer(PoolParam("kernel_size: 2"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  Blobs<Dtype> volume_vec{&volume};
  EXPECT_THROW(layer.Reshape(volume_vec, this->top_vec_), Error);
}

TYPED_TEST(PoolingLayerTest, StochasticIsRejectedOnTheCpu) {
  using Dtype = typename TypeParam::Dtype;
  PoolingLayer<Dtype> layer(PoolParam("pool: STOCHASTIC kernel_size: 2"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  if (Caffe::mode() == Caffe::CPU) {
    EXPECT_THROW(layer.Forward(this->bottom_vec_, this->top_vec_), Error);
  }
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----
// The cases name engine CAFFE, so that neither DNNL (CPU) nor cuDNN (GPU, the default there)
// replaces the code under test.

namespace {

std::string PoolText(const std::string& params, const std::string& tops = "top: 'y'") {
  return "name: 'pool' type: 'Pooling' bottom: 'x' " + tops + " pooling_param { " + params +
         " engine: CAFFE }";
}

}  // namespace

template <typename Dtype>
class PoolingLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(PoolingLayerGpuTest, TestDtypes);

TYPED_TEST(PoolingLayerGpuTest, MaxPooling) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: MAX kernel_size: 3 stride: 2"),
                                             {{2, 3, 17, 13}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(PoolingLayerGpuTest, MaxPoolingPaddedWithMaskTop) {
  // top[1] holds the argmax; it is compared like any top.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      PoolText("pool: MAX kernel_h: 3 kernel_w: 2 stride_h: 2 stride_w: 3 pad_h: 1 pad_w: 1",
               "top: 'y' top: 'mask'"),
      {{2, 5, 19, 23}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(PoolingLayerGpuTest, MaxPoolingFloorStrideLargerThanKernel) {
  // Strides beyond the kernel leave inputs no window reads (their gradient is 0).
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(PoolText("pool: MAX kernel_size: 2 stride: 3 round_mode: FLOOR"),
                             {{2, 3, 17, 14}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(PoolingLayerGpuTest, MaxPoolingEmptyWindows) {
  // CEIL rounding with stride 3 > kernel 1 makes a last window that starts past the input: it
  // outputs -FLT_MAX with index -1 on both paths.
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(PoolText("pool: MAX kernel_size: 1 stride: 3", "top: 'y' top: 'mask'"),
                             {{2, 3, 11, 8}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(PoolingLayerGpuTest, AvePoolingPadded) {
  // Windows at the border are clipped to the padded input (padding counts as zeros).
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: AVE kernel_size: 3 stride: 2 pad: 1"),
                                             {{2, 4, 15, 12}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(PoolingLayerGpuTest, AvePoolingCeilPastTheEdge) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: AVE kernel_size: 4 stride: 3 pad: 2"),
                                             {{3, 2, 16, 19}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(PoolingLayerGpuTest, GlobalPooling) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: AVE global_pooling: true"),
                                             {{3, 7, 13, 11}}, GpuDefaultTolerance<TypeParam>()));
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: MAX global_pooling: true"),
                                             {{3, 7, 13, 11}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(PoolingLayerGpuTest, Pooling3dAnd1d) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: MAX kernel_size: 2 stride: 2 pad: 1"),
                                             {{2, 3, 5, 7, 6}}, GpuDefaultTolerance<TypeParam>()));
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: AVE kernel_size: 3 stride: 2"),
                                             {{2, 3, 5, 7, 6}}, GpuDefaultTolerance<TypeParam>()));
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: AVE kernel_size: 5 stride: 2 pad: 2"),
                                             {{3, 4, 45}}, GpuDefaultTolerance<TypeParam>()));
}

// STOCHASTIC has no CPU path: checked against its definition on non-negative inputs (2 x 3 x
// 9 x 8, kernel 3, stride 2: 4 x 4 outputs per plane, the last column's windows cut to 2 wide).
TYPED_TEST(PoolingLayerGpuTest, StochasticPoolingTrainPicksAWindowInput) {
  using Dtype = TypeParam;
  const int planes = 6, height = 9, width = 8, kernel = 3, stride = 2, pooled = 4;
  Blob<Dtype> bottom(std::vector<int>{2, 3, height, width}), top;
  FillUniform<Dtype>(&bottom, 17, Dtype(0.1), Dtype(1));
  Blobs<Dtype> bottoms{&bottom}, tops{&top};
  Caffe::set_mode(Caffe::GPU);
  auto layer = LayerRegistry<Dtype>::CreateLayer(
      ParseLayerParam(PoolText("pool: STOCHASTIC kernel_size: 3 stride: 2") + " phase: TRAIN"));
  layer->SetUp(bottoms, tops);
  ASSERT_EQ(top.shape(), (std::vector<int>{2, 3, pooled, pooled}));
  layer->Forward(bottoms, tops);
  caffe_set(top.count(), Dtype(1), top.mutable_cpu_diff());
  layer->Backward(tops, {true}, bottoms);
  Caffe::set_mode(Caffe::CPU);
  const Dtype* x = bottom.cpu_data();
  const Dtype* y = top.cpu_data();
  const Dtype* dx = bottom.cpu_diff();
  for (int p = 0; p < planes; ++p) {
    for (int oh = 0; oh < pooled; ++oh) {
      for (int ow = 0; ow < pooled; ++ow) {
        const Dtype value = y[(p * pooled + oh) * pooled + ow];
        bool in_window = false;  // the output is one of its window's inputs, which got a gradient
        for (int h = oh * stride; h < std::min(oh * stride + kernel, height); ++h) {
          for (int w = ow * stride; w < std::min(ow * stride + kernel, width); ++w) {
            const int i = (p * height + h) * width + w;
            if (x[i] == value && dx[i] >= 1) in_window = true;
          }
        }
        EXPECT_TRUE(in_window) << "output (" << p << ", " << oh << ", " << ow << ") = " << value;
      }
    }
  }
  // Every output's gradient of 1 went to exactly one input.
  double total = 0;
  for (int i = 0; i < bottom.count(); ++i) total += dx[i];
  EXPECT_EQ(total, top.count());
}

TYPED_TEST(PoolingLayerGpuTest, StochasticPoolingTestIsTheProbabilityWeightedAverage) {
  using Dtype = TypeParam;
  const int planes = 6, height = 9, width = 8, kernel = 3, stride = 2, pooled = 4;
  Blob<Dtype> bottom(std::vector<int>{2, 3, height, width}), top;
  FillUniform<Dtype>(&bottom, 18, Dtype(0), Dtype(1));
  Blobs<Dtype> bottoms{&bottom}, tops{&top};
  Caffe::set_mode(Caffe::GPU);
  auto layer = LayerRegistry<Dtype>::CreateLayer(
      ParseLayerParam(PoolText("pool: STOCHASTIC kernel_size: 3 stride: 2") + " phase: TEST"));
  layer->SetUp(bottoms, tops);
  layer->Forward(bottoms, tops);
  Caffe::set_mode(Caffe::CPU);
  const Dtype* x = bottom.cpu_data();
  const Dtype* y = top.cpu_data();
  const double tolerance = sizeof(Dtype) == sizeof(float) ? 1e-5 : 1e-12;
  for (int p = 0; p < planes; ++p) {
    for (int oh = 0; oh < pooled; ++oh) {
      for (int ow = 0; ow < pooled; ++ow) {
        double sum = 0, weighted = 0;
        for (int h = oh * stride; h < std::min(oh * stride + kernel, height); ++h) {
          for (int w = ow * stride; w < std::min(ow * stride + kernel, width); ++w) {
            const double value = x[(p * height + h) * width + w];
            sum += value;
            weighted += value * value;
          }
        }
        EXPECT_NEAR(y[(p * pooled + oh) * pooled + ow], weighted / sum, tolerance)
            << "output (" << p << ", " << oh << ", " << ow << ")";
      }
    }
  }
}

}  // namespace caffe
