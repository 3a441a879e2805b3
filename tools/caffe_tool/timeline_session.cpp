// The caffe tool's timeline session (timeline_session.hpp).
#include "caffe_tool/timeline_session.hpp"

#include <glog/logging.h>

#include <cstdlib>
#include <regex>
#include <string>

#include "caffe/util/error.hpp"
#include "caffe_tool/flags.hpp"

namespace caffe_tool {

caffe::timeline::Options TimelineOptions(int rank, int ranks) {
  caffe::timeline::Options options;
  options.path = FLAGS_timeline;
  options.rank = rank;
  if (ranks > 1) {
    const size_t slash = options.path.rfind('/');
    const size_t dot = options.path.rfind('.');
    const bool has_extension =
        dot != std::string::npos && dot > 0 && (slash == std::string::npos || dot > slash + 1);
    const std::string rank_part = ".rank" + std::to_string(rank);
    options.path = has_extension
                       ? options.path.substr(0, dot) + rank_part + options.path.substr(dot)
                       : options.path + rank_part;
  }
  if (!FLAGS_timeline_iters.empty()) {
    std::smatch range;
    CAFFE_CHECK(std::regex_match(FLAGS_timeline_iters, range, std::regex("([0-9]+):([0-9]+)")))
        << "-timeline_iters '" << FLAGS_timeline_iters
        << "': expected FIRST:END, the iterations to record (e.g. 20:50)";
    options.first_iteration = std::atoi(range[1].str().c_str());
    options.end_iteration = std::atoi(range[2].str().c_str());
    CAFFE_CHECK(options.first_iteration < options.end_iteration)
        << "-timeline_iters " << FLAGS_timeline_iters << ": END must be greater than FIRST";
  }
  return options;
}

TimelineSession::TimelineSession(int rank, int ranks) {
  if (FLAGS_timeline.empty()) {
    LOG_IF(WARNING, !FLAGS_timeline_iters.empty())
        << "-timeline_iters " << FLAGS_timeline_iters << " without -timeline: nothing recorded";
    return;
  }
  const caffe::timeline::Options options = TimelineOptions(rank, ranks);
  caffe::timeline::Start(options);
  caffe::timeline::NameThread("main");
  path_ = options.path;
  LOG(INFO) << "Recording the timeline of iterations " << options.first_iteration << " to "
            << options.end_iteration - 1 << " into " << path_;
}

TimelineSession::~TimelineSession() {
  if (path_.empty()) return;
  try {
    const int64_t events = caffe::timeline::Finish();
    if (events == 0) {
      LOG(WARNING) << "Timeline: nothing recorded (no iteration of -timeline_iters ran); " << path_
                   << " not written";
    } else {
      LOG(INFO) << "Timeline: " << events << " events written to " << path_
                << " (open it in https://ui.perfetto.dev or chrome://tracing)";
    }
  } catch (const caffe::Error& error) {
    LOG(ERROR) << "Timeline not written: " << error.what();
  }
}

}  // namespace caffe_tool
