// Helpers for tests that work with files and tool binaries: remove a temporary folder, write and
// read whole files, write MNIST idx files, run a tool from build/bin (or another program)
// capturing its exit status, stdout and stderr, and pick out the lines of stderr that are not
// glog log lines (what the user sees as the tool's own message).
#ifndef CAFFE_TEST_FILE_TEST_UTIL_HPP_
#define CAFFE_TEST_FILE_TEST_UTIL_HPP_

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

/// A temporary folder removed with everything in it when the object goes away.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(const std::string& path) : path_(path) {}
  ~ScopedTempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct ToolResult {
  int exit_code = -1;  // -1: did not exit normally
  std::string out, err;
};

inline void WriteWholeFile(const std::string& path, const std::string& content) {
  std::ofstream stream(path, std::ios::binary);
  stream << content;
  ASSERT_TRUE(stream.good()) << "could not write " << path;
}

/// Writes MNIST idx files: `count` images of rows x cols bytes into `images` (byte j of image i:
/// pixel(i, j)) and their labels into `labels` (label(i)). The magic numbers and the label file's
/// header count may be given wrong on purpose.
struct IdxMagic {
  uint32_t image = 2051, label = 2049;
  uint32_t label_count = UINT32_MAX;  // UINT32_MAX: the image count
};
inline void WriteMnistIdx(const std::string& images, const std::string& labels, uint32_t count,
                          uint32_t rows, uint32_t cols,
                          const std::function<unsigned char(uint32_t, uint32_t)>& pixel,
                          const std::function<unsigned char(uint32_t)>& label,
                          IdxMagic magic = {}) {
  auto append = [](std::string* out, uint32_t value) {
    for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(value >> shift));
  };
  std::string image_bytes, label_bytes;
  append(&image_bytes, magic.image);
  append(&image_bytes, count);
  append(&image_bytes, rows);
  append(&image_bytes, cols);
  for (uint32_t i = 0; i < count; ++i) {
    for (uint32_t j = 0; j < rows * cols; ++j) {
      image_bytes.push_back(static_cast<char>(pixel(i, j)));
    }
  }
  append(&label_bytes, magic.label);
  append(&label_bytes, magic.label_count == UINT32_MAX ? count : magic.label_count);
  for (uint32_t i = 0; i < count; ++i) label_bytes.push_back(static_cast<char>(label(i)));
  WriteWholeFile(images, image_bytes);
  WriteWholeFile(labels, label_bytes);
}

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream content;
  content << stream.rdbuf();
  return content.str();
}

/// Runs the program `binary` with `args`; stdout and stderr go through files in `scratch_dir`
/// named after `name`.
inline ToolResult RunProgram(const std::string& binary, const std::string& name,
                             const std::vector<std::string>& args, const std::string& scratch_dir) {
  const std::string out_path = scratch_dir + "/" + name + ".stdout";
  const std::string err_path = scratch_dir + "/" + name + ".stderr";
  ToolResult result;
  pid_t pid = fork();
  if (pid == 0) {
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0) _exit(126);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);  // exec failed: the tool was not built
  }
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  }
  result.out = ReadWholeFile(out_path);
  result.err = ReadWholeFile(err_path);
  return result;
}

/// Runs the build's bin/<tool> with `args`; stdout and stderr go through files in `scratch_dir`.
inline ToolResult RunTool(const std::string& tool, const std::vector<std::string>& args,
                          const std::string& scratch_dir) {
  return RunProgram(BuildDir() + "/bin/" + tool, tool, args, scratch_dir);
}

/// The lines of `text` that are not glog lines ("I1121 00:55:32.123 ...", or with the year,
/// "I20261121 00:55:32.123 ...").
inline std::vector<std::string> NonLogLines(const std::string& text) {
  static const std::regex glog_line("^[IWEF]([0-9]{4}){1,2} [0-9]{2}:[0-9]{2}:[0-9]{2}.*");
  std::vector<std::string> lines;
  std::istringstream stream(text);
  std::string line;
  while (std::getline(stream, line)) {
    if (!line.empty() && !std::regex_match(line, glog_line)) lines.push_back(line);
  }
  return lines;
}

}  // namespace caffe

#endif  // CAFFE_TEST_FILE_TEST_UTIL_HPP_
