#include "caffe/io/io.hpp"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/text_format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace caffe {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::FileInputStream;
using google::protobuf::io::FileOutputStream;

bool FileExists(const string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

bool IsDirectory(const string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool EndsWith(const string& value, const string& suffix) {
  return value.size() >= suffix.size() &&
         value.compare(value.size() - suffix.size(), suffix.size(), suffix) == 0;
}

string Join(const vector<string>& items, const string& separator) {
  string joined;
  for (size_t i = 0; i < items.size(); ++i) joined += (i > 0 ? separator : "") + items[i];
  return joined;
}

string StripExtension(const string& path) {
  size_t dot = path.find_last_of('.');
  size_t slash = path.find_last_of('/');
  if (dot == string::npos || (slash != string::npos && dot < slash)) return path;
  return path.substr(0, dot);
}

namespace {

// Keeps the first parse error (with its position) instead of letting protobuf log it.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (!has_error_) {
      has_error_ = true;
      line_ = line;
      column_ = column;
      message_ = message;
    }
  }
  void AddWarning(int line, int column, const std::string& message) override {
    LOG(WARNING) << "line " << line + 1 << ":" << column + 1 << ": " << message;
  }
  bool has_error_ = false;
  int line_ = 0;
  int column_ = 0;
  std::string message_;
};

string ReadWholeFile(const string& filename) {
  CAFFE_CHECK(!IsDirectory(filename)) << "cannot read '" << filename << "': it is a directory";
  std::ifstream in(filename, std::ios::binary);
  CAFFE_CHECK(in.good()) << "cannot open '" << filename << "': " << std::strerror(errno);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace

void ParseProtoFromText(const string& text, const string& source, Message* proto) {
  google::protobuf::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, proto)) {
    CAFFE_CHECK(!errors.has_error_)
        << source << ":" << errors.line_ + 1 << ":" << errors.column_ + 1 << ": " << errors.message_
        << " (while parsing " << proto->GetTypeName() << ")";
    CAFFE_THROW() << source << ": not a valid " << proto->GetTypeName();
  }
}

void ReadProtoFromTextFile(const string& filename, Message* proto) {
  ParseProtoFromText(ReadWholeFile(filename), filename, proto);
}

void ReadProtoFromBinaryFile(const string& filename, Message* proto) {
  CAFFE_CHECK(!IsDirectory(filename)) << "cannot read '" << filename << "': it is a directory";
  int fd = open(filename.c_str(), O_RDONLY);
  CAFFE_CHECK(fd >= 0) << "cannot open '" << filename << "': " << std::strerror(errno);
  bool ok;
  {
    FileInputStream raw_input(fd);
    CodedInputStream coded_input(&raw_input);
    coded_input.SetTotalBytesLimit(INT_MAX);
    ok = proto->ParseFromCodedStream(&coded_input);
  }
  close(fd);
  CAFFE_CHECK(ok) << "'" << filename << "' is not a valid binary " << proto->GetTypeName()
                  << " (truncated, or a different kind of file)";
}

void AtomicWrite(const string& filename, const std::function<void(const string&)>& write) {
  const string temporary = filename + ".tmp." + std::to_string(getpid());
  try {
    write(temporary);
  } catch (...) {
    std::remove(temporary.c_str());
    throw;
  }
  // Flush the data to disk before the rename makes it visible under the real name.
  int fd = open(temporary.c_str(), O_RDONLY);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
  if (std::rename(temporary.c_str(), filename.c_str()) != 0) {
    int error = errno;
    std::remove(temporary.c_str());
    CAFFE_THROW() << "cannot write '" << filename << "': " << std::strerror(error);
  }
}

void WriteProtoToTextFile(const Message& proto, const string& filename) {
  AtomicWrite(filename, [&](const string& path) {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CAFFE_CHECK(fd >= 0) << "cannot write '" << filename << "': " << std::strerror(errno);
    bool ok;
    {
      FileOutputStream output(fd);
      ok = google::protobuf::TextFormat::Print(proto, &output) && output.Flush();
    }
    close(fd);
    CAFFE_CHECK(ok) << "cannot write '" << filename << "' (disk full?)";
  });
}

void WriteProtoToBinaryFile(const Message& proto, const string& filename) {
  AtomicWrite(filename, [&](const string& path) {
    std::ofstream output(path, std::ios::out | std::ios::trunc | std::ios::binary);
    CAFFE_CHECK(output.good()) << "cannot write '" << filename << "': " << std::strerror(errno);
    bool ok = proto.SerializeToOstream(&output);
    output.close();
    CAFFE_CHECK(ok && !output.fail()) << "cannot write '" << filename << "' (disk full?)";
  });
}

}  // namespace caffe
