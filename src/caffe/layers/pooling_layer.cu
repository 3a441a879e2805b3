// Pooling on the GPU. Legend as in pooling_layer.hpp: N images, C channels, D/H/W input sizes,
// PD/PH/PW pooled sizes; 1-D and 2-D pooling are 3-D pooling with leading sizes of 1.
// Forward: one thread per output, its window computed exactly as Reshape's windows_ (clipped to
// the input; AVE divides by the window clipped to the padded input). Backward: one thread per
// input, gathering the outputs whose windows hold it in output order, the order in which the
// CPU path adds them, so no atomics are needed. STOCHASTIC (GPU-only, as in BVLC): TRAIN draws
// U[0, 1) per output with cuRAND and picks the first input whose running sum reaches draw * sum;
// TEST outputs sum(x^2) / sum(x).
#include <cfloat>
#include <vector>

#include "caffe/kernels/math_functions.hpp"
#include "caffe/layers/pooling_layer.hpp"

namespace caffe {

namespace {

// The geometry along (D, H, W), by value.
struct PoolGeometry {
  int input[3];
  int pooled[3];
  int kernel[3];
  int stride[3];
  int pad[3];
};

// The window of output `o` along one axis: inputs [begin, end), and its extent clipped to the
// padded input (AVE's divisor), as PoolingLayer::Reshape computes them.
struct AxisWindow {
  int begin, end, padded_extent;
};

__device__ inline AxisWindow WindowOf(const PoolGeometry& g, int axis, int o) {
  const int start = o * g.stride[axis] - g.pad[axis];
  const int padded_end = min(start + g.kernel[axis], g.input[axis] + g.pad[axis]);
  AxisWindow window;
  window.padded_extent = padded_end - start;
  window.begin = max(start, 0);
  window.end = max(min(padded_end, g.input[axis]), window.begin);
  return window;
}

// The outputs [begin, end) along one axis whose windows contain input position x.
struct OutputRange {
  int begin, end;
};

__device__ inline OutputRange OutputsCovering(const PoolGeometry& g, int axis, int x) {
  const int padded_x = x + g.pad[axis];
  OutputRange range;
  range.begin = padded_x < g.kernel[axis] ? 0 : (padded_x - g.kernel[axis]) / g.stride[axis] + 1;
  range.end = min(padded_x / g.stride[axis] + 1, g.pooled[axis]);
  return range;
}

// Splits a flat output index into (plane, od, oh, ow) and returns the three windows.
__device__ inline int OutputWindows(const PoolGeometry& g, int index, AxisWindow* windows) {
  int rest = index;
  const int ow = rest % g.pooled[2];
  rest /= g.pooled[2];
  const int oh = rest % g.pooled[1];
  rest /= g.pooled[1];
  const int od = rest % g.pooled[0];
  windows[0] = WindowOf(g, 0, od);
  windows[1] = WindowOf(g, 1, oh);
  windows[2] = WindowOf(g, 2, ow);
  return rest / g.pooled[0];
}

template <typename Dtype, typename Mask>
__global__ void MaxPoolForwardKernel(const int n, const Dtype* bottom, const PoolGeometry g,
                                     Dtype* top, Mask* mask) {
  CUDA_KERNEL_LOOP(index, n) {
    AxisWindow w[3];
    const int plane = OutputWindows(g, index, w);
    const Dtype* x = bottom + static_cast<long>(plane) * g.input[0] * g.input[1] * g.input[2];
    // The CPU's initial value and strict '>': the first maximum in row-major order wins.
    Dtype best = -FLT_MAX;
    int best_index = -1;
    for (int d = w[0].begin; d < w[0].end; ++d) {
      for (int h = w[1].begin; h < w[1].end; ++h) {
        const int row = (d * g.input[1] + h) * g.input[2];
        for (int i = row + w[2].begin; i < row + w[2].end; ++i) {
          if (x[i] > best) {
            best = x[i];
            best_index = i;
          }
        }
      }
    }
    top[index] = best;
    mask[index] = static_cast<Mask>(best_index);
  }
}

template <typename Dtype>
__global__ void AvePoolForwardKernel(const int n, const Dtype* bottom, const PoolGeometry g,
                                     Dtype* top) {
  CUDA_KERNEL_LOOP(index, n) {
    AxisWindow w[3];
    const int plane = OutputWindows(g, index, w);
    const Dtype* x = bottom + static_cast<long>(plane) * g.input[0] * g.input[1] * g.input[2];
    Dtype sum = 0;
    for (int d = w[0].begin; d < w[0].end; ++d) {
      for (int h = w[1].begin; h < w[1].end; ++h) {
        const int row = (d * g.input[1] + h) * g.input[2];
        for (int i = row + w[2].begin; i < row + w[2].end; ++i) sum += x[i];
      }
    }
    const int divisor = w[0].padded_extent * w[1].padded_extent * w[2].padded_extent;
    top[index] = sum / static_cast<Dtype>(divisor);
  }
}

// TRAIN: `picks` holds a U[0, 1) draw per output on entry and the picked input's index in the
// plane on exit (-1 for an empty window).
template <typename Dtype>
__global__ void StochasticPoolForwardTrainKernel(const int n, const Dtype* bottom,
                                                 const PoolGeometry g, Dtype* top, Dtype* picks) {
  CUDA_KERNEL_LOOP(index, n) {
    AxisWindow w[3];
    const int plane = OutputWindows(g, index, w);
    const Dtype* x = bottom + static_cast<long>(plane) * g.input[0] * g.input[1] * g.input[2];
    Dtype total = 0;
    for (int d = w[0].begin; d < w[0].end; ++d) {
      for (int h = w[1].begin; h < w[1].end; ++h) {
        const int row = (d * g.input[1] + h) * g.input[2];
        for (int i = row + w[2].begin; i < row + w[2].end; ++i) total += x[i];
      }
    }
    const Dtype threshold = picks[index] * total;
    // The first input whose running sum reaches the threshold; the last one if rounding keeps
    // the running sum below it.
    Dtype running = 0;
    int picked = -1;
    bool found = false;
    for (int d = w[0].begin; d < w[0].end && !found; ++d) {
      for (int h = w[1].begin; h < w[1].end && !found; ++h) {
        const int row = (d * g.input[1] + h) * g.input[2];
        for (int i = row + w[2].begin; i < row + w[2].end; ++i) {
          running += x[i];
          picked = i;
          if (running >= threshold) {
            found = true;
            break;
          }
        }
      }
    }
    top[index] = picked >= 0 ? x[picked] : Dtype(0);
    picks[index] = static_cast<Dtype>(picked);
  }
}

template <typename Dtype>
__global__ void StochasticPoolForwardTestKernel(const int n, const Dtype* bottom,
                                                const PoolGeometry g, Dtype* top) {
  CUDA_KERNEL_LOOP(index, n) {
    AxisWindow w[3];
    const int plane = OutputWindows(g, index, w);
    const Dtype* x = bottom + static_cast<long>(plane) * g.input[0] * g.input[1] * g.input[2];
    // Each input weighted by its probability value / sum; FLT_MIN keeps an all-zero window
    // at 0 (as BVLC).
    Dtype sum = FLT_MIN;
    Dtype weighted = 0;
    for (int d = w[0].begin; d < w[0].end; ++d) {
      for (int h = w[1].begin; h < w[1].end; ++h) {
        const int row = (d * g.input[1] + h) * g.input[2];
        for (int i = row + w[2].begin; i < row + w[2].end; ++i) {
          sum += x[i];
          weighted += x[i] * x[i];
        }
      }
    }
    top[index] = weighted / sum;
  }
}

// Splits a flat input index into (plane, d, h, w) and returns the output ranges covering it and
// the position's index in its plane.
__device__ inline int CoveringOutputs(const PoolGeometry& g, int index, OutputRange* ranges,
                                      int* plane) {
  int rest = index;
  const int w = rest % g.input[2];
  rest /= g.input[2];
  const int h = rest % g.input[1];
  rest /= g.input[1];
  const int d = rest % g.input[0];
  *plane = rest / g.input[0];
  ranges[0] = OutputsCovering(g, 0, d);
  ranges[1] = OutputsCovering(g, 1, h);
  ranges[2] = OutputsCovering(g, 2, w);
  return (d * g.input[1] + h) * g.input[2] + w;
}

// MAX and STOCHASTIC (TRAIN): each input receives the diffs of the outputs that picked it.
template <typename Dtype, typename Mask>
__global__ void PickedPoolBackwardKernel(const int n, const Dtype* top_diff, const Mask* mask,
                                         const PoolGeometry g, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    OutputRange r[3];
    int plane;
    const int position = CoveringOutputs(g, index, r, &plane);
    const long out_offset = static_cast<long>(plane) * g.pooled[0] * g.pooled[1] * g.pooled[2];
    const Dtype* dy = top_diff + out_offset;
    const Mask* picks = mask + out_offset;
    Dtype sum = 0;
    for (int od = r[0].begin; od < r[0].end; ++od) {
      for (int oh = r[1].begin; oh < r[1].end; ++oh) {
        const int row = (od * g.pooled[1] + oh) * g.pooled[2];
        for (int o = row + r[2].begin; o < row + r[2].end; ++o) {
          if (static_cast<int>(picks[o]) == position) sum += dy[o];
        }
      }
    }
    bottom_diff[index] = sum;
  }
}

template <typename Dtype>
__global__ void AvePoolBackwardKernel(const int n, const Dtype* top_diff, const PoolGeometry g,
                                      Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    OutputRange r[3];
    int plane;
    CoveringOutputs(g, index, r, &plane);
    const Dtype* dy = top_diff + static_cast<long>(plane) * g.pooled[0] * g.pooled[1] * g.pooled[2];
    Dtype sum = 0;
    for (int od = r[0].begin; od < r[0].end; ++od) {
      const int extent_d = WindowOf(g, 0, od).padded_extent;
      for (int oh = r[1].begin; oh < r[1].end; ++oh) {
        const int extent_dh = extent_d * WindowOf(g, 1, oh).padded_extent;
        const int row = (od * g.pooled[1] + oh) * g.pooled[2];
        for (int ow = r[2].begin; ow < r[2].end; ++ow) {
          const int divisor = extent_dh * WindowOf(g, 2, ow).padded_extent;
          sum += dy[row + ow] / static_cast<Dtype>(divisor);
        }
      }
    }
    bottom_diff[index] = sum;
  }
}

// The layer's three spatial axes (depth, height, width) as the kernels take them.
PoolGeometry MakePoolGeometry(const int* input, const int* pooled, const int* kernel,
                              const int* stride, const int* pad) {
  PoolGeometry geometry;
  for (int a = 0; a < 3; ++a) {
    geometry.input[a] = input[a];
    geometry.pooled[a] = pooled[a];
    geometry.kernel[a] = kernel[a];
    geometry.stride[a] = stride[a];
    geometry.pad[a] = pad[a];
  }
  return geometry;
}

}  // namespace

template <typename Dtype>
void PoolingLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const PoolGeometry geometry = MakePoolGeometry(input_, pooled_, kernel_, stride_, pad_);
  const int n = top[0]->count();
  if (n <= 0) return;
  const Dtype* bottom_data = bottom[0]->gpu_data();
  Dtype* top_data = top[0]->mutable_gpu_data();
  switch (method_) {
    case PoolingParameter_PoolMethod_MAX:
      if (top.size() > 1) {
        MaxPoolForwardKernel<Dtype, Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
            n, bottom_data, geometry, top_data, top[1]->mutable_gpu_data());
      } else {
        MaxPoolForwardKernel<Dtype, int><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
            n, bottom_data, geometry, top_data, max_idx_.mutable_gpu_data());
      }
      break;
    case PoolingParameter_PoolMethod_AVE:
      AvePoolForwardKernel<Dtype>
          <<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, bottom_data, geometry, top_data);
      break;
    case PoolingParameter_PoolMethod_STOCHASTIC:
      if (this->phase_ == TRAIN) {
        caffe_gpu_rng_uniform(n, Dtype(0), Dtype(1), rand_idx_.mutable_gpu_data());
        StochasticPoolForwardTrainKernel<Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
            n, bottom_data, geometry, top_data, rand_idx_.mutable_gpu_data());
      } else {
        StochasticPoolForwardTestKernel<Dtype>
            <<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, bottom_data, geometry, top_data);
      }
      break;
    default:
      LAYER_THROW() << "unknown pooling method " << static_cast<int>(method_);
  }
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void PoolingLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                       const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const PoolGeometry geometry = MakePoolGeometry(input_, pooled_, kernel_, stride_, pad_);
  const int n = bottom[0]->count();
  if (n <= 0) return;
  const Dtype* top_diff = top[0]->gpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  // Every kernel below writes each bottom diff value (no clearing needed).
  switch (method_) {
    case PoolingParameter_PoolMethod_MAX:
      if (top.size() > 1) {
        PickedPoolBackwardKernel<Dtype, Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
            n, top_diff, top[1]->gpu_data(), geometry, bottom_diff);
      } else {
        PickedPoolBackwardKernel<Dtype, int><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
            n, top_diff, max_idx_.gpu_data(), geometry, bottom_diff);
      }
      break;
    case PoolingParameter_PoolMethod_AVE:
      AvePoolBackwardKernel<Dtype>
          <<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, top_diff, geometry, bottom_diff);
      break;
    case PoolingParameter_PoolMethod_STOCHASTIC:
      LAYER_CHECK(this->phase_ == TRAIN && rand_idx_.count() == top[0]->count())
          << "STOCHASTIC pooling has a backward pass only after a TRAIN-phase forward pass (which "
             "picks the inputs the gradient goes to); in TEST it averages and has none";
      PickedPoolBackwardKernel<Dtype, Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
          n, top_diff, rand_idx_.gpu_data(), geometry, bottom_diff);
      break;
    default:
      LAYER_THROW() << "unknown pooling method " << static_cast<int>(method_);
  }
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(PoolingLayer);

}  // namespace caffe
