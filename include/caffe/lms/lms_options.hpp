// The command-line side of Large Model Support (docs/LMS.md): checking -lms, -lms_frac and
// -lms_prefetch and reading the device memory budget (-gpu_mem_limit or CAFFE_GPU_MEM_LIMIT).
// Every bad value is a caffe::Error of one line naming the flag, the value and the rule.
#ifndef CAFFE_LMS_LMS_OPTIONS_HPP_
#define CAFFE_LMS_LMS_OPTIONS_HPP_

#include <cstddef>
#include <cstdint>
#include <string>

#include "caffe/lms/memory_manager.hpp"

namespace caffe {
namespace lms {

/// Bytes from "17179869184", "16G", "16GB", "16GiB", "512M", "1.5G" (K, M, G, T are powers of
/// 1024); `source` names where the text came from in the error ("-gpu_mem_limit").
size_t ParseByteSize(const std::string& text, const std::string& source);

/// Checks the flags and builds the manager's options. `mem_limit` is -gpu_mem_limit's value;
/// when empty, `mem_limit_env` (the environment variable's value, or null) is used; neither
/// means the whole device.
Options MakeOptions(int64_t lms_kb, double lms_frac, int prefetch_depth,
                    const std::string& mem_limit, const char* mem_limit_env);

/// Whether the user asked for LMS or a budget at all (so a CPU run can say they do not apply).
bool Requested(const Options& options);

}  // namespace lms
}  // namespace caffe

#endif  // CAFFE_LMS_LMS_OPTIONS_HPP_
