#include "caffe/kernels/vector_math.hpp"

#include <algorithm>
#include <cmath>

#ifdef USE_DNNL
#include "caffe/kernels/dnnl_context.hpp"
#endif
#include "caffe/kernels/math_functions.hpp"
#include "caffe/util/cpu_threads.hpp"
#include "caffe/util/environment.hpp"

namespace caffe {

namespace {

enum class Function { kExp, kTanh, kSigmoid, kElu };

// y = f(x) on oneDNN's element-wise kernel, where it runs (vector_math.hpp); false where the
// caller loops instead. alpha is ELU's.
template <typename Dtype>
bool OnDnnl(Function, Dtype, int, const Dtype*, Dtype*) {
  return false;  // oneDNN's kernels are float
}

#ifdef USE_DNNL
dnnl::algorithm DnnlAlgorithm(Function function) {
  switch (function) {
    case Function::kExp:
      return dnnl::algorithm::eltwise_exp;
    case Function::kTanh:
      return dnnl::algorithm::eltwise_tanh;
    case Function::kSigmoid:
      return dnnl::algorithm::eltwise_logistic;
    case Function::kElu:
      return dnnl::algorithm::eltwise_elu;
  }
  return dnnl::algorithm::undef;
}

// Whether any x[i] is NaN: one threaded pass that vectorizes (no early exit, an int flag).
bool AnyNan(int n, const float* x) {
  int any = 0;
#pragma omp parallel for simd schedule(static) reduction(| : any) if (n >= kParallelMinElements)
  for (int i = 0; i < n; ++i) any |= x[i] != x[i];
  return any != 0;
}

template <>
bool OnDnnl<float>(Function function, float alpha, int n, const float* x, float* y) {
  const int minimum = (function == Function::kExp ? 2 : 1) * kVectorMathMinElements;
  // CAFFE_CPU_ENGINE=caffe keeps every CPU path on Caffe's own code, the vector math's too.
  if (n < minimum || CpuEngineFromEnvironment() == "CAFFE") return false;
  // oneDNN 2.6's exp gives +inf for NaN; the loop keeps the NaN, as every other path does.
  if (function == Function::kExp && AnyNan(n, x)) return false;
  using dnnl::memory;
  const memory::desc desc({n}, memory::data_type::f32, memory::format_tag::a);
  const dnnl::eltwise_forward::primitive_desc forward(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, DnnlAlgorithm(function), desc,
                                  alpha, 0.f),
      DnnlEngine());
  memory source(desc, DnnlEngine(), const_cast<float*>(x));
  memory destination(desc, DnnlEngine(), y);
  dnnl::eltwise_forward(forward).execute(DnnlStream(),
                                         {{DNNL_ARG_SRC, source}, {DNNL_ARG_DST, destination}});
  DnnlStream().wait();
  return true;
}
#endif

// y = f(x): on oneDNN's kernel for `function` where it runs, else a parallel loop of value(x[i]).
template <typename Dtype, typename Value>
void Apply(Function function, Dtype alpha, int n, const Dtype* x, Dtype* y, Value value) {
  if (OnDnnl(function, alpha, n, x, y)) return;
  caffe_parallel_for(n, [=](int i) { y[i] = value(x[i]); });
}

}  // namespace

template <typename Dtype>
void caffe_exp(int n, const Dtype* x, Dtype* y) {
  Apply(Function::kExp, Dtype(0), n, x, y, [](Dtype v) { return std::exp(v); });
}

template <typename Dtype>
void caffe_log(int n, const Dtype* x, Dtype* y) {
  // Always the loop: oneDNN 2.6's log is off by up to 2e-6 relative (log(1) = -1.4e-6).
  caffe_parallel_for(n, [=](int i) { y[i] = std::log(x[i]); });
}

template <typename Dtype>
void caffe_tanh(int n, const Dtype* x, Dtype* y) {
  Apply(Function::kTanh, Dtype(0), n, x, y, [](Dtype v) { return std::tanh(v); });
}

template <typename Dtype>
void caffe_sigmoid(int n, const Dtype* x, Dtype* y) {
  // The loop takes the tanh form, whose exp cannot overflow.
  Apply(Function::kSigmoid, Dtype(0), n, x, y,
        [](Dtype v) { return Dtype(0.5) * std::tanh(Dtype(0.5) * v) + Dtype(0.5); });
}

template <typename Dtype>
void caffe_elu(int n, Dtype alpha, const Dtype* x, Dtype* y) {
  Apply(Function::kElu, alpha, n, x, y, [alpha](Dtype v) {
    return std::max(v, Dtype(0)) + alpha * (std::exp(std::min(v, Dtype(0))) - Dtype(1));
  });
}

#define INSTANTIATE_VECTOR_MATH(Dtype)                           \
  template void caffe_exp<Dtype>(int, const Dtype*, Dtype*);     \
  template void caffe_log<Dtype>(int, const Dtype*, Dtype*);     \
  template void caffe_tanh<Dtype>(int, const Dtype*, Dtype*);    \
  template void caffe_sigmoid<Dtype>(int, const Dtype*, Dtype*); \
  template void caffe_elu<Dtype>(int, Dtype, const Dtype*, Dtype*);
INSTANTIATE_VECTOR_MATH(float)
INSTANTIATE_VECTOR_MATH(double)

}  // namespace caffe
