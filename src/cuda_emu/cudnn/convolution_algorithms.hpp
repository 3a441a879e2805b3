// The algorithms the emulated cuDNN offers for each convolution pass: the ranking its getters
// return, which geometries each runs, the workspace each needs and the emulator's model of its
// time (convolution_algorithms.cpp). Internal to the emulator.
//
// The getters rank several algorithms, some needing a workspace, some non-deterministic, some
// (for float) in tensor-op math and some not supported for the geometry, so the caller's choice
// among them is exercised. The Find*AlgorithmEx calls return the same algorithms ordered by a
// model of their time that disagrees with that ranking. Every algorithm computes the same exact
// result, except that float operands are rounded to TF32 unless the descriptor's math type is
// CUDNN_FMA_MATH (on A100 and later, the other math types let cuDNN use TF32 tensor cores).
#ifndef CAFFE_CUDA_EMU_CUDNN_CONVOLUTION_ALGORITHMS_HPP_
#define CAFFE_CUDA_EMU_CUDNN_CONVOLUTION_ALGORITHMS_HPP_

#include <cudnn.h>

#include <cstddef>
#include <vector>

#include "cudnn/convolution.hpp"

namespace CAFFE_EMU_HIDDEN caffe_emu {

// What an algorithm needs: its workspace, and which geometries it handles.
enum class Kind {
  kNoWorkspace,       // any geometry
  kIndices,           // any; precomputed offsets
  kIm2col,            // any; one image's column buffer per group
  kPartialSums,       // any; a copy of the filter gradient
  kFft,               // 2-D, unit strides and dilation
  kFftTiling,         // as kFft, in 32 x 32 tiles
  kWinograd,          // 2-D 3x3, unit strides and dilation; no workspace
  kWinogradNonfused,  // as kWinograd, with transformed tensors in the workspace
  kNotImplemented,    // listed by cuDNN, never runs
};

// One entry of the emulator's ranking of a pass's algorithms, expected fastest first.
struct Ranked {
  int algo;
  Kind kind;
  bool deterministic;
  bool tensor_op;  // listed for float only, with CUDNN_TENSOR_OP_MATH
};

/// The ranking of `pass`'s algorithms. Ranked so that the caller's choice matters: tensor-op
/// entries first (a caller keeping float in FMA math must skip them), non-deterministic ones and
/// ones with large workspaces early.
const std::vector<Ranked>& Ranking(Pass pass);

/// Why `kind` cannot run `plan`, or null where it can.
const char* Unsupported(Kind kind, const ConvPlan& p);

/// The workspace `kind` needs for `plan`, in bytes: a model of what such an algorithm stores.
size_t WorkspaceBytes(Kind kind, const ConvPlan& p);

/// The emulator's model of how long `entry` takes on `plan`, in milliseconds: a nanosecond per
/// multiply-add at cost 1, each kind at its own cost and tensor-op entries four times faster.
/// The costs order the algorithms unlike the getters' ranking (Winograd and the FFTs fastest
/// where they apply), so that choosing by time and trusting the getters pick differently.
float ModelledMilliseconds(const Ranked& entry, const ConvPlan& p);

/// The workspace (bytes) that `algo` of `pass` needs for `plan`; fails where `algo` is no
/// algorithm of the pass, or cannot run the plan.
cudnnStatus_t AlgorithmWorkspace(const char* call, Pass pass, int algo, const ConvPlan& plan,
                                 size_t* bytes);

/// A pass's algorithm runs its plan, and its workspace is device memory of the size the getters
/// report; `needed` gets that size.
cudnnStatus_t CheckAlgorithm(const char* call, Pass pass, int algo, const ConvPlan& plan,
                             void* workspace, size_t workspace_bytes, size_t* needed);

}  // namespace caffe_emu

#endif  // CAFFE_CUDA_EMU_CUDNN_CONVOLUTION_ALGORITHMS_HPP_
