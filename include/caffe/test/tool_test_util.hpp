// Checks shared by the tests of the command-line tools (convert_imageset, convert_cifar_data,
// convert_mnist_data, compute_image_mean, caffe_db): what a tool does with a user mistake.
#ifndef CAFFE_TEST_TOOL_TEST_UTIL_HPP_
#define CAFFE_TEST_TOOL_TEST_UTIL_HPP_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "caffe/test/file_test_util.hpp"

namespace caffe {

/// Expects exit status 1 and exactly one non-log line on stderr, starting with "<tool>: " and
/// containing every fragment.
inline void ExpectOneLineToolError(const ToolResult& result, const std::string& tool,
                                   const std::vector<std::string>& fragments) {
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const std::vector<std::string> lines = NonLogLines(result.err);
  ASSERT_EQ(lines.size(), 1u) << result.err;
  EXPECT_EQ(lines[0].rfind(tool + ": ", 0), 0u) << lines[0];
  for (const std::string& fragment : fragments) {
    EXPECT_NE(lines[0].find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << lines[0];
  }
}

}  // namespace caffe

#endif  // CAFFE_TEST_TOOL_TEST_UTIL_HPP_
