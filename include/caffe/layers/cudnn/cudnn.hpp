// cuDNN for the GPU engines (the CuDNN*Layer classes; which layer gets one: layer_engine.hpp), in
// builds with cuDNN (USE_CUDNN): the error macro, this thread's handle, the shared workspace,
// descriptors made from Caffe's shapes, and CuDNNConvolution, the descriptors and algorithms of
// one convolution that Convolution and Deconvolution share.
//
// cuDNN 9 keeps the descriptor ("legacy") API used here in cudnn_ops.h and cudnn_cnn.h; its
// headers mark it deprecated, which warns only where CUDNN_WARN_DEPRECATED is defined (it is not).
// Everything runs on the default stream, like the rest of Caffe's GPU code.
//
// Legend: N images, C channels, G group, x the convolution's image side (its input), y its output
// side, w its filters (C_y, C_x / G, kernel...).
#ifndef CAFFE_LAYERS_CUDNN_CUDNN_HPP_
#define CAFFE_LAYERS_CUDNN_CUDNN_HPP_

#include <string>
#include <type_traits>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/proto/caffe.pb.h"

#ifdef USE_CUDNN

#include <cudnn.h>

// A failed cuDNN call is a caffe::Error with the call and cuDNN's description of the failure.
#define CUDNN_CHECK(condition)                                                                \
  do {                                                                                        \
    cudnnStatus_t caffe_cudnn_status_ = (condition);                                          \
    CAFFE_CHECK(caffe_cudnn_status_ == CUDNN_STATUS_SUCCESS)                                  \
        << "cuDNN call failed: " #condition ": " << cudnnGetErrorString(caffe_cudnn_status_); \
  } while (0)

namespace caffe {

/// This thread's cuDNN handle on its current GPU, made on first use, bound to the default stream.
cudnnHandle_t CuDNNHandle();

/// At least `bytes` of device memory on the current GPU, shared by every cuDNN call of this
/// thread (layers run one after another on one stream, so one buffer serves them all). Valid
/// until the next call; grows, never shrinks (but see ReturnCuDNNWorkspaceToLms). nullptr for 0
/// bytes.
void* CuDNNWorkspace(size_t bytes);
/// As CuDNNWorkspace, but false (and no workspace held) where the GPU memory budget cannot give
/// `bytes` now, instead of the out-of-memory error: the caller falls back to a leaner algorithm.
bool TryCuDNNWorkspace(size_t bytes, void** workspace);
/// Under LMS, hands the workspace back to the memory manager after a call (later work on the
/// stream is ordered after it, LMS's copies included): between convolutions its memory can hold
/// buffers, and the allocator's cache gives it back at no cost next time. Without LMS the
/// workspace stays, as BVLC's does, but gives way to an allocation that would not fit beside it
/// (GpuMemory::SetScratchRelease).
void ReturnCuDNNWorkspaceToLms();

/// The most workspace a convolution's algorithms may use: CAFFE_CUDNN_WORKSPACE_MB MiB from the
/// environment, else 64 MiB.
size_t CuDNNWorkspaceLimit();

/// How CuDNNConvolution chooses its algorithms, from CAFFE_CUDNN_ALGO in the environment (read at
/// each Configure): "heuristic" (or unset): cuDNN's heuristics, as BVLC Caffe; "time": cuDNN runs
/// each algorithm on the convolution's shapes and the fastest is kept, as PyTorch's
/// cudnn.benchmark (once per shape and GPU in a process; a little slower to set up, often faster
/// to run, and the choice may differ between runs). Anything else is an error naming the variable.
enum class CuDNNAlgoSearch { kHeuristic, kTime };
CuDNNAlgoSearch CuDNNAlgorithmSearch();

/// How many convolution shapes this process has timed (CAFFE_CUDNN_ALGO=time); each is timed once
/// per GPU, and every later convolution of that shape reuses the result.
size_t CuDNNTimedShapes();

/// cuDNN's name for Dtype.
template <typename Dtype>
constexpr cudnnDataType_t CuDNNDataType() {
  static_assert(std::is_same_v<Dtype, float> || std::is_same_v<Dtype, double>,
                "cuDNN layers exist for float and double");
  return std::is_same_v<Dtype, float> ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
}

/// The scaling factors cuDNN's calls take (result = one * op(...) + zero * result); of the
/// tensors' type, as cuDNN requires for float and double.
template <typename Dtype>
const void* CuDNNOne() {
  static const Dtype one = 1;
  return &one;
}
template <typename Dtype>
const void* CuDNNZero() {
  static const Dtype zero = 0;
  return &zero;
}

/// The same for a tensor type known at run time.
inline const void* CuDNNOne(cudnnDataType_t type) {
  return type == CUDNN_DATA_FLOAT ? CuDNNOne<float>() : CuDNNOne<double>();
}
inline const void* CuDNNZero(cudnnDataType_t type) {
  return type == CUDNN_DATA_FLOAT ? CuDNNZero<float>() : CuDNNZero<double>();
}

/// Whether cuDNN can hold a tensor of `count` values: not empty, and int-indexable.
inline bool CuDNNCanHold(long count) { return count > 0 && count <= 0x7fffffffL; }

/// Owns one cuDNN descriptor, made on first use (so a layer can be built without a GPU).
template <typename Descriptor, cudnnStatus_t (*Create)(Descriptor*),
          cudnnStatus_t (*Destroy)(Descriptor)>
class CuDNNDescriptor {
 public:
  CuDNNDescriptor() = default;
  ~CuDNNDescriptor() {
    if (descriptor_ != nullptr) Destroy(descriptor_);  // destructors do not throw
  }
  Descriptor get() {
    if (descriptor_ == nullptr) CUDNN_CHECK(Create(&descriptor_));
    return descriptor_;
  }

 private:
  Descriptor descriptor_ = nullptr;
  DISABLE_COPY_AND_ASSIGN(CuDNNDescriptor);
};

using CuDNNTensorDescriptor = CuDNNDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                                              cudnnDestroyTensorDescriptor>;
using CuDNNFilterDescriptor = CuDNNDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor,
                                              cudnnDestroyFilterDescriptor>;
using CuDNNConvolutionDescriptor =
    CuDNNDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                    cudnnDestroyConvolutionDescriptor>;
using CuDNNPoolingDescriptor =
    CuDNNDescriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor,
                    cudnnDestroyPoolingDescriptor>;
using CuDNNActivationDescriptor =
    CuDNNDescriptor<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor,
                    cudnnDestroyActivationDescriptor>;
using CuDNNLRNDescriptor =
    CuDNNDescriptor<cudnnLRNDescriptor_t, cudnnCreateLRNDescriptor, cudnnDestroyLRNDescriptor>;

/// A packed (row-major, NCHW-like) tensor of `dims`; fewer than 4 dims get trailing 1s, since
/// cuDNN's routines want 4 or more.
void SetCuDNNTensor(cudnnTensorDescriptor_t descriptor, cudnnDataType_t type,
                    std::vector<int> dims);

/// An element-wise activation (ReLU, sigmoid, tanh) over a blob of any shape.
class CuDNNActivation {
 public:
  CuDNNActivation() = default;
  /// `shape` is the blob's; axes beyond the fourth are folded into it. False where cuDNN cannot
  /// hold the blob (empty, or beyond int indexing): the caller runs Caffe's path.
  bool Configure(cudnnActivationMode_t mode, cudnnDataType_t type, const std::vector<int>& shape);
  /// y = f(x); y may be x.
  void Forward(const void* x, void* y);
  /// dx = dy * f'(x), from y = f(x) (and x, which cuDNN may read); dx may be dy, x may be y.
  void Backward(const void* y, const void* dy, const void* x, void* dx);

 private:
  cudnnDataType_t type_ = CUDNN_DATA_FLOAT;
  CuDNNTensorDescriptor tensor_;
  CuDNNActivationDescriptor activation_;
  DISABLE_COPY_AND_ASSIGN(CuDNNActivation);
};

struct CuDNNPerfLists;  // cuDNN's perf results for a convolution's three passes (cudnn.cpp)

/// The descriptors and chosen algorithms of one convolution x -> y with filters w, for
/// Convolution (x = bottom, y = top) and Deconvolution (x = top, y = bottom). The algorithms come
/// from cuDNN's heuristics (cudnnGet*Algorithm_v7) or, with CAFFE_CUDNN_ALGO=time, from timing
/// them (cudnnFind*AlgorithmEx on scratch tensors of the convolution's shapes; where the GPU
/// memory budget cannot give those, or timing finds none that qualifies, the heuristics decide):
/// the first one, in order of expected or measured speed, that runs with FMA math for float (no
/// TF32 tensor cores: results match the CPU's), needs at most CuDNNWorkspaceLimit() bytes, and
/// (for the two backward passes, where some algorithms add with atomics) is deterministic if any
/// such algorithm qualifies. When the GPU memory budget (-gpu_mem_limit, or a GPU that LMS fills)
/// cannot give its workspace at the time it runs, the next qualifying algorithm that needs less
/// runs instead (one log line says so).
class CuDNNConvolution {
 public:
  enum class Side { kImage, kOutput };  // x, y
  struct Geometry {
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    int num = 0;                      // N
    int image_channels = 0;           // C_x
    int output_channels = 0;          // C_y
    int group = 1;                    // G
    std::vector<int> image_spatial;   // x's spatial dims
    std::vector<int> output_spatial;  // y's spatial dims
    std::vector<int> kernel, pad, stride, dilation;
    bool operator==(const Geometry& other) const;
    /// How many values x, w and y hold (group >= 1).
    long ImageCount() const;
    long FilterCount() const;
    long OutputCount() const;
  };

  CuDNNConvolution() = default;
  /// Sets up `geometry` (at once when it is the one set up last). False where cuDNN cannot run
  /// it: 1 to 3 spatial axes (fewer than 2 get unit axes in front), no empty or int-overflowing
  /// tensors, and an algorithm for each pass within the workspace limit; the caller then runs
  /// Caffe's engine.
  bool Configure(const Geometry& geometry);

  /// y = conv(x, w).
  void Forward(const void* image, const void* weights, void* output);
  /// dx = the adjoint of conv(., w) applied to dy (overwrites dx).
  void BackwardData(const void* weights, const void* output_diff, void* image_diff);
  /// dw += the filter gradient for x and dy.
  void BackwardFilter(const void* image, const void* output_diff, void* weight_diff);
  /// data[n][c][...] += bias[c] over the tensor on `side`.
  void AddBias(Side side, const void* bias, void* data);
  /// bias_diff[c] += the sum over n and positions of diff[n][c][...] on `side`.
  void AccumulateBiasDiff(Side side, const void* diff, void* bias_diff);

  /// The algorithm each pass runs when the budget gives its workspace (after a successful
  /// Configure): cuDNN's enum values, for logs and tests.
  struct Algorithms {
    int forward = -1, backward_data = -1, backward_filter = -1;
  };
  Algorithms chosen() const;

 private:
  // An algorithm of a pass, with its workspace and the math type it runs in (cuDNN lists an
  // algorithm with one).
  template <typename Algo>
  struct Choice {
    Algo algo;
    size_t bytes;
    cudnnMathType_t math;
  };

  const void* One() const;
  const void* Zero() const;
  bool ChooseAlgorithms();
  // cuDNN's perf lists of the three passes, fastest first: from timing them (cached per shape
  // and GPU; false where the budget cannot give the scratch tensors or a Find call fails), or
  // from its heuristics (false where a getter fails).
  bool TimedAlgorithms(CuDNNPerfLists* lists);
  bool HeuristicAlgorithms(CuDNNPerfLists* lists);
  // Runs `run(algo, workspace, bytes)` with the first of `choices` whose workspace the budget
  // gives now (the last one's failure is the out-of-memory error), in that choice's math type.
  template <typename Algo, typename Run>
  void RunPass(const char* pass, const std::vector<Choice<Algo>>& choices, Run run);

  Geometry geometry_;
  bool configured_ = false;  // geometry_ was set up (successfully or not)
  bool usable_ = false;
  CuDNNTensorDescriptor image_, output_, image_bias_, output_bias_;
  CuDNNFilterDescriptor filter_;
  CuDNNConvolutionDescriptor convolution_;
  // Each pass's algorithms, the chosen one first; each later one needs less workspace, for when
  // the GPU memory budget cannot give the workspace of those before it (see RunPass).
  std::vector<Choice<cudnnConvolutionFwdAlgo_t>> forward_;
  std::vector<Choice<cudnnConvolutionBwdDataAlgo_t>> backward_data_;
  std::vector<Choice<cudnnConvolutionBwdFilterAlgo_t>> backward_filter_;

  DISABLE_COPY_AND_ASSIGN(CuDNNConvolution);
};

}  // namespace caffe

#endif  // USE_CUDNN
#endif  // CAFFE_LAYERS_CUDNN_CUDNN_HPP_
