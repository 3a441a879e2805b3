// Denormal floats (magnitude below 1.2e-38 in float, 2.2e-308 in double) as zeros while Caffe
// computes on the CPU.
//
// x86 CPUs take a microcode assist for each operation that reads or produces a denormal, some
// hundred cycles instead of one: a net whose activations, gradients or momentum decay towards
// zero (softmax probabilities of confident predictions, dead units, a benchmark net fed zeros)
// slows down many times over as training proceeds. CaffeNet trained on an Input layer's zeros
// went from 2.3 to 0.16 iterations a second within 16 iterations. Like TensorFlow and
// PaddlePaddle, Caffe sets the CPU's flush-to-zero and denormals-are-zero modes (MXCSR FTZ and
// DAZ) while a net's layers or a solver's iteration run; values that small carry no information
// a net can use. CAFFE_FLUSH_DENORMALS=0 keeps IEEE denormals.
#ifndef CAFFE_KERNELS_DENORMALS_HPP_
#define CAFFE_KERNELS_DENORMALS_HPP_

namespace caffe {

/// Whether Caffe flushes denormals: CAFFE_FLUSH_DENORMALS, read the first time (default yes),
/// unless SetFlushDenormals said otherwise.
bool FlushDenormalsEnabled();

/// Reads CAFFE_FLUSH_DENORMALS (again) and takes its value: unset or "1" flush, "0" does not;
/// anything else is an error naming the variable.
bool ReadFlushDenormalsSetting();

/// Overrides CAFFE_FLUSH_DENORMALS for this process (tests, embedding programs).
void SetFlushDenormals(bool enabled);

/// Whether the calling thread's floating-point unit flushes denormals now (both FTZ and DAZ).
bool ThisThreadFlushesDenormals();

/// Sets FTZ and DAZ on the calling thread for its lifetime and restores the thread's previous
/// mode afterwards. The first one on a thread also sets them on the OpenMP threads that run that
/// thread's parallel loops (Caffe's, OpenBLAS's and oneDNN's); those keep them, so code outside
/// Caffe that shares them (numpy over the same OpenBLAS) flushes too. Does nothing where
/// flushing is off, and on CPUs without SSE's MXCSR.
class ScopedFlushDenormals {
 public:
  ScopedFlushDenormals();
  ~ScopedFlushDenormals();
  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;

 private:
  unsigned saved_mode_ = 0;
  bool changed_ = false;
};

}  // namespace caffe

#endif  // CAFFE_KERNELS_DENORMALS_HPP_
