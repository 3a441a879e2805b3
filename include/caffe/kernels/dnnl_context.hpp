// The oneDNN CPU engine and the calling thread's stream, shared by every part of Caffe that runs a
// oneDNN primitive (DnnlConvolutionLayer, kernels/vector_math.cpp). Only for builds with oneDNN.
#ifndef CAFFE_KERNELS_DNNL_CONTEXT_HPP_
#define CAFFE_KERNELS_DNNL_CONTEXT_HPP_

#include <oneapi/dnnl/dnnl.hpp>

namespace caffe {

inline dnnl::engine& DnnlEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// One stream per thread: a stream is not safe to share between threads.
inline dnnl::stream& DnnlStream() {
  thread_local dnnl::stream stream(DnnlEngine());
  return stream;
}

}  // namespace caffe

#endif  // CAFFE_KERNELS_DNNL_CONTEXT_HPP_
