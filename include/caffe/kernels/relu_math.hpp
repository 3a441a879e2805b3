// The ReLU's element formulas, for ReLULayer and for the layers that run an in-place ReLU in
// their own passes (BatchNorm with the Scale and ReLU after it, a sum, a convolution), on the CPU
// and in CUDA kernels: one definition, so that a fused group and the layers apart agree bit for
// bit.
#ifndef CAFFE_KERNELS_RELU_MATH_HPP_
#define CAFFE_KERNELS_RELU_MATH_HPP_

#ifdef __CUDACC__
#define CAFFE_HOST_DEVICE_INLINE __host__ __device__ __forceinline__
#else
#define CAFFE_HOST_DEVICE_INLINE inline
#endif

namespace caffe {

/// max(x, 0) + negative_slope * min(x, 0), as std::max and std::min give it (NaN passes
/// through; products rather than selections, so the signed zeros agree too).
template <typename Dtype>
CAFFE_HOST_DEVICE_INLINE Dtype ReLUOf(Dtype x, Dtype negative_slope) {
  const Dtype positive = x < Dtype(0) ? Dtype(0) : x;
  const Dtype negative = Dtype(0) < x ? Dtype(0) : x;
  return positive + negative_slope * negative;
}

/// The gradient's factor at x: 1 where x > 0, negative_slope where x <= 0, 0 at NaN: BVLC's
/// (x > 0) + negative_slope * (x <= 0), written as selections, which compilers vectorize (with
/// -fno-trapping-math; BVLC's conversions of the comparisons stay branches). The gradient is dy
/// times it, so where the gradient is cut it keeps dy's sign, as BVLC's zeros do. Backward in
/// place reads the output for x, which has the input's sign where negative_slope >= 0.
template <typename Dtype>
CAFFE_HOST_DEVICE_INLINE Dtype ReLUGradientFactor(Dtype x, Dtype negative_slope) {
  return x > Dtype(0) ? Dtype(1) : (x <= Dtype(0) ? negative_slope : Dtype(0));
}

}  // namespace caffe

#endif  // CAFFE_KERNELS_RELU_MATH_HPP_
