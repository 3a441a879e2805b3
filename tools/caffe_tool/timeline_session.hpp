// -timeline FILE and -timeline_iters FIRST:END for one command of the caffe tool
// (docs/TIMELINE.md): TimelineSession starts the engine's recorder and writes the file when the
// command ends, Ctrl-C's stop included.
#ifndef CAFFE_TOOL_TIMELINE_SESSION_HPP_
#define CAFFE_TOOL_TIMELINE_SESSION_HPP_

#include <string>

#include "caffe/timeline/timeline.hpp"

namespace caffe_tool {

/// The recorder's options from the flags, for the learner of rank `rank` among `ranks`: with
/// several, each writes its own file, FILE with ".rankN" before its extension.
caffe::timeline::Options TimelineOptions(int rank, int ranks);

/// Records while it lives, when -timeline was given; its end writes the file.
class TimelineSession {
 public:
  explicit TimelineSession(int rank = 0, int ranks = 1);
  ~TimelineSession();

  TimelineSession(const TimelineSession&) = delete;
  TimelineSession& operator=(const TimelineSession&) = delete;

 private:
  std::string path_;
};

}  // namespace caffe_tool

#endif  // CAFFE_TOOL_TIMELINE_SESSION_HPP_
