// The main() that the data tools (convert_*, compute_image_mean, and the examples' converters)
// share: BVLC's usage text, flags parsed, the usage again for a wrong count of arguments, and a
// user's error as one line naming the tool.
#ifndef CAFFE_TOOLS_DATA_TOOL_MAIN_HPP_
#define CAFFE_TOOLS_DATA_TOOL_MAIN_HPP_

#include <gflags/gflags.h>

#include <climits>
#include <functional>
#include <iostream>
#include <string>

#include "caffe/common.hpp"
#include "caffe/util/error.hpp"

namespace caffe {

struct DataTool {
  const char* source;  // the program's source path without ".cpp", e.g. "tools/convert_mnist_data"
  const char* usage;   // BVLC's usage text
  int min_argc;        // the accepted argc after the flags are parsed, program name included
  int max_argc = INT_MAX;
};

/// Runs `run(argc, argv)` (argv without the flags) as the tool's main(): exit status 0, or 1
/// with the usage and the flags that `tool.source` defines when argc is outside the range, or 1
/// with "<name>: <message>" on stderr when `run` throws a caffe::Error.
inline int RunDataTool(int argc, char** argv, const DataTool& tool,
                       const std::function<void(int, char**)>& run) {
  const std::string source(tool.source);
  const std::string name = source.substr(source.rfind('/') + 1);
  gflags::SetUsageMessage(tool.usage);
  try {
    GlobalInit(&argc, &argv);
    if (argc < tool.min_argc || argc > tool.max_argc) {
      gflags::ShowUsageWithFlagsRestrict(argv[0], tool.source);
      return 1;
    }
    run(argc, argv);
  } catch (const Error& error) {
    std::cerr << name << ": " << error.what() << std::endl;
    return 1;
  }
  return 0;
}

}  // namespace caffe

#endif  // CAFFE_TOOLS_DATA_TOOL_MAIN_HPP_
