// What the caffe tool's shared flags mean, read and checked once for every command: the GPUs of
// -gpu, the phase of -phase, the stages of -stage, -iterations, and which flags a command has no
// use for.
#ifndef CAFFE_TOOL_FLAG_VALUES_HPP_
#define CAFFE_TOOL_FLAG_VALUES_HPP_

#include <string>
#include <vector>

#include "caffe/proto/caffe.pb.h"

namespace caffe_tool {

/// The non-empty items of a ','-separated list (-stage, -gpu).
std::vector<std::string> SplitList(const std::string& list);

/// The GPUs named by -gpu ("all" means every visible device); empty means CPU.
std::vector<int> GetGpus();

/// Runs on the CPU, or on the first listed GPU; more than one GPU is an error.
void SetModeFromGpus(const std::vector<int>& gpus);

/// -phase, or `default_value` when it is not given.
caffe::Phase GetPhase(caffe::Phase default_value);

/// -iterations is positive.
void CheckIterations();

/// BVLC's tools ignore flags a command has no use for; one line says so for the training-only
/// ones, since `mpirun ... caffe test -ddl ...` would otherwise run N independent tests quietly.
void WarnOfTrainOnlyFlags(const char* command);

/// Whether any of -lms, -lms_frac and -gpu_mem_limit was given (the modes that cannot use them
/// refuse them).
bool LmsFlagsGiven();

}  // namespace caffe_tool

#endif  // CAFFE_TOOL_FLAG_VALUES_HPP_
