// Transcendental functions over arrays, for the CPU layers that apply one per element (Sigmoid,
// TanH, ELU, Exp, Swish, Softmax; BNLL's backward): y[i] = f(x[i]) for i < n; y may be x.
// In float, an array of at least kVectorMathMinElements values runs on oneDNN's element-wise
// kernels where the build has oneDNN (compiled at run time for the CPU's vector width, threaded),
// unless CAFFE_CPU_ENGINE is "caffe": on a blob of a few million values that is 6 (exp) to 40
// (tanh) times a loop of std:: calls, which computes one value at a time. Otherwise, and in double,
// a parallel loop of the std:: functions. The two agree within 16 units in the last place
// (test_vector_math.cpp).
// caffe_exp, declared in math_functions.hpp, is defined with these, and so is caffe_log, which
// always loops (oneDNN 2.6's log and soft_relu are less accurate than std::log: see the .cpp).
#ifndef CAFFE_KERNELS_VECTOR_MATH_HPP_
#define CAFFE_KERNELS_VECTOR_MATH_HPP_

namespace caffe {

/// Below this many values the loop is as fast: a oneDNN call costs some microseconds to set up
/// (its primitive comes from oneDNN's cache) and to wake the threads. Twice as many for exp, whose
/// std:: loop is 5 times faster than tanh's (benchmarks/bench_vector_math.cpp).
constexpr int kVectorMathMinElements = 2048;

/// tanh(x)
template <typename Dtype>
void caffe_tanh(int n, const Dtype* x, Dtype* y);

/// 1 / (1 + exp(-x)), which saturates to 0 and 1 without overflow.
template <typename Dtype>
void caffe_sigmoid(int n, const Dtype* x, Dtype* y);

/// x for x > 0, alpha (exp(x) - 1) otherwise.
template <typename Dtype>
void caffe_elu(int n, Dtype alpha, const Dtype* x, Dtype* y);

}  // namespace caffe

#endif  // CAFFE_KERNELS_VECTOR_MATH_HPP_
