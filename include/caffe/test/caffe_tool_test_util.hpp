// Running the `caffe` command as a user does, for the tests of its commands and flags: in the
// foreground (its output and exit status), or in the background (its log, and signals sent to
// it); and the check that a user mistake gives one clear line and a non-zero exit.
#ifndef CAFFE_TEST_CAFFE_TOOL_TEST_UTIL_HPP_
#define CAFFE_TEST_CAFFE_TOOL_TEST_UTIL_HPP_

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

struct CommandResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string output;  // stdout and stderr together
};

inline std::string CaffeBinary() { return BuildDir() + "/bin/caffe"; }

/// Runs a shell command line, its stdout and stderr together.
inline CommandResult RunCommand(const std::string& command_line) {
  CommandResult result;
  const std::string command = command_line + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

/// `caffe ARGUMENTS`; `environment`: assignments the command starts with ("NAME=value ...").
inline CommandResult RunCaffe(const std::string& arguments, const std::string& environment = "") {
  return RunCommand(environment + " " + CaffeBinary() + " " + arguments);
}

/// Starts caffe with `arguments` in the background, its log (stderr) going to `log`, with the
/// `environment` variables set; returns its process id, or -1.
inline pid_t StartCaffe(const std::vector<std::string>& arguments, const std::string& log,
                        const std::vector<std::pair<std::string, std::string>>& environment = {}) {
  std::vector<std::string> argv_strings = {"caffe"};
  argv_strings.insert(argv_strings.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& argument : argv_strings) argv.push_back(argument.data());
  argv.push_back(nullptr);
  const std::string binary = CaffeBinary();
  const pid_t child = fork();
  if (child == 0) {
    for (const auto& [name, value] : environment) setenv(name.c_str(), value.c_str(), 1);
    FILE* out = freopen(log.c_str(), "w", stderr);
    (void)out;
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  return child;
}

/// Waits up to a minute for `text` to appear in the file at `path`; returns what the file holds.
inline std::string WaitForText(const std::string& path, const std::string& text) {
  std::string content;
  for (int i = 0; i < 1200 && content.find(text) == std::string::npos; ++i) {
    usleep(50000);
    std::ifstream in(path);
    content.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return content;
}

/// How often `what` occurs in `text`.
inline int Count(const std::string& text, const std::string& what) {
  int count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

/// A non-zero exit, one line reporting an error (": error: "), containing `must_contain`, and
/// neither a failed CHECK nor a stack trace.
inline void ExpectOneClearError(const CommandResult& result, const std::string& must_contain) {
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_EQ(Count(result.output, ": error: "), 1) << result.output;
  EXPECT_NE(result.output.find(must_contain), std::string::npos)
      << "expected '" << must_contain << "' in:\n"
      << result.output;
  EXPECT_EQ(result.output.find("Check failed"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("*** "), std::string::npos) << "stack trace:\n" << result.output;
}

}  // namespace caffe

#endif  // CAFFE_TEST_CAFFE_TOOL_TEST_UTIL_HPP_
