// A layer's forward or backward as the GPU ran it (docs/TIMELINE.md). The host's slice of a layer
// shows when its work was issued; on a GPU the kernels run later, on the compute stream. While the
// timeline records in GPU mode, a GpuSlice records a CUDA event on the compute stream where the
// layer's work begins and one where it ends; once the GPU has passed them, the slice goes on the
// track "GPU N compute", placed on the host's clock by a reference event (recorded and waited for
// on that stream, so its host time is known). In builds with NVTX (the CUDA toolkit's header-only
// nvtx3) the same scope is an NVTX range named after the layer in GPU mode, recording or not, so
// that Nsight Systems shows layer names. In CPU mode, and in CPU-only builds, it does nothing.
#ifndef CAFFE_TIMELINE_GPU_SLICE_HPP_
#define CAFFE_TIMELINE_GPU_SLICE_HPP_

#include <string>

namespace caffe {
namespace timeline {

class GpuSlice {
 public:
  GpuSlice(const char* category, const std::string& name);
  ~GpuSlice();

  GpuSlice(const GpuSlice&) = delete;
  GpuSlice& operator=(const GpuSlice&) = delete;

 private:
  const char* category_;
  const std::string& name_;  // the caller's (a layer's name), which outlives the slice
  int device_ = -1;          // timed on this device; -1: not timed
  void* start_ = nullptr;    // its cudaEvent_t
  bool range_ = false;       // an NVTX range was pushed
};

/// Turns the GPU slices whose events the GPU has passed into the timeline's slices; with `wait`,
/// first waits for all of them (at the end of a step, and before the file is written).
void FlushGpuSlices(bool wait);

}  // namespace timeline
}  // namespace caffe

#endif  // CAFFE_TIMELINE_GPU_SLICE_HPP_
