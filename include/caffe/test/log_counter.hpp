// Counts the log lines that contain a piece of text while it lives, at WARNING and above (the
// test main hides warnings; this shows them for its lifetime), for tests that check a warning is
// said, and said once.
#ifndef CAFFE_TEST_LOG_COUNTER_HPP_
#define CAFFE_TEST_LOG_COUNTER_HPP_

#include <glog/logging.h>

#include <cstdint>
#include <string>
#include <utility>

namespace caffe {

class LogCounter : public google::LogSink {
 public:
  explicit LogCounter(std::string text) : text_(std::move(text)) {
    quiet_ = FLAGS_minloglevel;
    FLAGS_minloglevel = google::WARNING;
    google::AddLogSink(this);
  }
  ~LogCounter() override {
    google::RemoveLogSink(this);
    FLAGS_minloglevel = quiet_;
  }
  void send(google::LogSeverity severity, const char* full_filename, const char* base_filename,
            int line, const google::LogMessageTime& time, const char* message,
            size_t message_len) override {
    if (std::string(message, message_len).find(text_) != std::string::npos) ++count;
  }
  int count = 0;

 private:
  std::string text_;
  int32_t quiet_;
};

}  // namespace caffe

#endif  // CAFFE_TEST_LOG_COUNTER_HPP_
