// 2-D MAX and AVE pooling on values held in channel blocks (memory/channel_layout.hpp), as
// oneDNN's convolutions and the layers after them hand them on: a block of B channels of one
// image is one (H, W, B) array, so each window is B lanes wide and the lanes run as one SIMD
// vector. The same windows, tie rule and divisors as PoolingLayer's plain passes; MAX's argmax
// is the position h * W + w within the plane, per lane, laid out as the output.
// G groups (images times channel blocks), B block, H/W input sizes, PH/PW pooled sizes.
#ifndef CAFFE_KERNELS_POOLING_BLOCKED_HPP_
#define CAFFE_KERNELS_POOLING_BLOCKED_HPP_

namespace caffe {

/// The windows of one axis: output o reads inputs [start[o], end[o]) (clipped to the input);
/// extent[o] is the window clipped to the padded input (AVE's divisor is the product).
struct PoolingAxis {
  int size = 0;    // input size
  int pooled = 0;  // output size
  const int* start = nullptr;
  const int* end = nullptr;
  const int* extent = nullptr;
};

/// x (G, H, W, B) -> y (G, PH, PW, B) and argmax (G, PH, PW, B); block 8 or 16.
void MaxPoolBlocked(const float* x, int groups, int block, const PoolingAxis& rows,
                    const PoolingAxis& columns, float* y, int* argmax);
/// dx (G, H, W, B), rewritten, from dy (G, PH, PW, B) through argmax.
void MaxPoolBackwardBlocked(const float* dy, const int* argmax, int groups, int block,
                            const PoolingAxis& rows, const PoolingAxis& columns, float* dx);
/// x (G, H, W, B) -> y (G, PH, PW, B): each window's sum over its divisor.
void AvePoolBlocked(const float* x, int groups, int block, const PoolingAxis& rows,
                    const PoolingAxis& columns, float* y);
/// dx (G, H, W, B), rewritten: each output's gradient over its divisor to every input of its
/// window.
void AvePoolBackwardBlocked(const float* dy, int groups, int block, const PoolingAxis& rows,
                            const PoolingAxis& columns, float* dx);

}  // namespace caffe

#endif  // CAFFE_KERNELS_POOLING_BLOCKED_HPP_
