// The timeline's recorder: events in one bounded buffer under a mutex (a training step records a
// few hundred, so the lock is never the cost), written as Chrome trace-event JSON by Finish.
#include "caffe/timeline/timeline.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/timeline/gpu_slice.hpp"
#include "caffe/util/error.hpp"

namespace caffe {
namespace timeline {

namespace internal {
std::atomic<bool> recording{false};
}  // namespace internal

namespace {

using Clock = std::chrono::steady_clock;

struct Event {
  char phase;  // 'X' a slice, 'C' a counter
  const char* category;
  std::string name;
  int track;
  double start;
  double duration;  // -1 while a Slice is open
  std::vector<Arg> args;
};

struct Recorder {
  std::mutex mutex;
  bool started = false;
  Options options;
  Clock::time_point epoch = Clock::now();
  // The epoch on the system clock, which the processes of one host share: how rank files line up.
  int64_t epoch_unix_us = 0;
  std::vector<Event> events;
  int64_t dropped = 0;
  // Track names by id: a thread's (named by NameThread, else "thread N") or a named track's.
  // Kept across recordings, as the threads' ids are.
  std::vector<std::string> tracks;
};

Recorder& recorder() {
  static Recorder* instance = new Recorder();  // never destroyed: threads may record at exit
  return *instance;
}

thread_local int this_thread_track = -1;

/// The calling thread's track, made on first use; call with the mutex held.
int ThreadTrack(Recorder& r) {
  if (this_thread_track < 0) {
    this_thread_track = static_cast<int>(r.tracks.size());
    r.tracks.push_back("thread " + std::to_string(this_thread_track));
  }
  return this_thread_track;
}

double Since(const Recorder& r, Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(t - r.epoch).count();
}

/// Appends `event` unless the buffer is full; its index, or -1. Mutex held.
int Add(Recorder& r, Event&& event) {
  if (static_cast<int64_t>(r.events.size()) >= r.options.max_events) {
    ++r.dropped;
    return -1;
  }
  r.events.push_back(std::move(event));
  return static_cast<int>(r.events.size()) - 1;
}

/// Adds `arg` to slot `event`, unless Finish (or a new Start) took the slots meanwhile.
void AddArg(int event, Arg&& arg) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (event < static_cast<int>(r.events.size())) r.events[event].args.push_back(std::move(arg));
}

/// This process's resident memory, from /proc/self/statm (0 where there is none).
double ResidentMegabytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return static_cast<double>(resident) * sysconf(_SC_PAGESIZE) / (1 << 20);
}

void WriteString(std::ostream& out, std::string_view text) {
  out << '"';
  for (char c : text) {
    switch (c) {
      case '"':
        out << "\\\"";
        break;
      case '\\':
        out << "\\\\";
        break;
      case '\n':
        out << "\\n";
        break;
      case '\t':
        out << "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out << escaped;
        } else {
          out << c;
        }
    }
  }
  out << '"';
}

void WriteNumber(std::ostream& out, double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", value);
  out << text;
}

void WriteEvent(std::ostream& out, const Event& event, int pid) {
  out << "{\"ph\":\"" << event.phase << "\",\"cat\":";
  WriteString(out, event.category);
  out << ",\"name\":";
  WriteString(out, event.name);
  out << ",\"pid\":" << pid << ",\"tid\":" << event.track << ",\"ts\":";
  WriteNumber(out, event.start);
  if (event.phase == 'X') {
    out << ",\"dur\":";
    WriteNumber(out, event.duration);
  }
  out << ",\"args\":{";
  for (size_t i = 0; i < event.args.size(); ++i) {
    if (i > 0) out << ',';
    WriteString(out, event.args[i].key);
    out << ':';
    if (event.args[i].is_text) {
      WriteString(out, event.args[i].text);
    } else {
      WriteNumber(out, event.args[i].number);
    }
  }
  out << "}}";
}

void WriteMetadata(std::ostream& out, const char* what, int pid, int tid, std::string_view name) {
  out << "{\"ph\":\"M\",\"name\":\"" << what << "\",\"pid\":" << pid << ",\"tid\":" << tid
      << ",\"args\":{\"name\":";
  WriteString(out, name);
  out << "}}";
}

}  // namespace

void Start(const Options& options) {
  Recorder& r = recorder();
  CAFFE_CHECK(options.first_iteration >= 0 && options.first_iteration < options.end_iteration)
      << "timeline iterations " << options.first_iteration << ":" << options.end_iteration
      << ": expected FIRST:END with 0 <= FIRST < END";
  {
    // Written at the end of a run: a folder that cannot take it should fail now, not then.
    const std::string probe_path = options.path + ".probe." + std::to_string(getpid());
    std::ofstream probe(probe_path);
    const int error = errno;
    CAFFE_CHECK(probe.good()) << "cannot write the timeline file '" << options.path
                              << "': " << std::strerror(error);
    probe.close();
    std::remove(probe_path.c_str());
  }
  std::lock_guard<std::mutex> lock(r.mutex);
  r.options = options;
  r.events.clear();
  r.events.reserve(static_cast<size_t>(std::min<int64_t>(options.max_events, 65536)));
  r.dropped = 0;
  r.epoch = Clock::now();
  r.epoch_unix_us = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  r.started = true;
  // Off until the first SetIteration inside the window: set-up is not a step.
  internal::recording.store(false, std::memory_order_relaxed);
}

bool Started() {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.started;
}

void SetIteration(int iteration) {
  Recorder& r = recorder();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!r.started) return;
    internal::recording.store(
        iteration >= r.options.first_iteration && iteration < r.options.end_iteration,
        std::memory_order_relaxed);
  }
  // The GPU's slices of the iteration before: its work is done or nearly so by now.
  FlushGpuSlices(true);
  if (Recording()) Counter("host memory (MB)", ResidentMegabytes());  // /proc: not outside
}

int64_t Finish() {
  FlushGpuSlices(true);  // the GPU's slices of the last iterations, before the file is written
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.started) return 0;
  internal::recording.store(false, std::memory_order_relaxed);
  r.started = false;
  if (r.events.empty()) return 0;  // no iteration of the window ran: no file
  const int pid = r.options.rank;
  std::vector<bool> used(r.tracks.size(), false);
  for (const Event& event : r.events) {
    if (event.phase == 'X') used[event.track] = true;
  }
  int64_t written = 0;
  AtomicWrite(r.options.path, [&](const std::string& temporary) {
    std::ofstream out(temporary);
    CAFFE_CHECK(out.good()) << "cannot write the timeline file '" << r.options.path << "'";
    out << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"first_iteration\":"
        << r.options.first_iteration << ",\"end_iteration\":" << r.options.end_iteration
        << ",\"rank\":" << pid << ",\"epoch_unix_us\":" << r.epoch_unix_us
        << ",\"dropped_events\":" << r.dropped << "},\n\"traceEvents\":[\n";
    WriteMetadata(out, "process_name", pid, 0, "rank " + std::to_string(pid));
    for (size_t track = 0; track < r.tracks.size(); ++track) {
      if (!used[track]) continue;
      out << ",\n";
      WriteMetadata(out, "thread_name", pid, track, r.tracks[track]);
    }
    for (const Event& event : r.events) {
      if (event.phase == 'X' && event.duration < 0) continue;  // a slice still open at Finish
      out << ",\n";
      WriteEvent(out, event, pid);
      ++written;
    }
    out << "\n]}\n";
    out.flush();
    CAFFE_CHECK(out.good()) << "cannot write the timeline file '" << r.options.path << "'";
  });
  r.events.clear();
  r.events.shrink_to_fit();
  return written;
}

double Now() {
  Recorder& r = recorder();
  return Since(r, Clock::now());
}

double At(std::chrono::steady_clock::time_point time) { return Since(recorder(), time); }

void NameThread(std::string_view name) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.tracks[ThreadTrack(r)] = std::string(name);
}

int Track(std::string_view name) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (size_t track = 0; track < r.tracks.size(); ++track) {
    if (r.tracks[track] == name) return static_cast<int>(track);
  }
  r.tracks.emplace_back(name);
  return static_cast<int>(r.tracks.size()) - 1;
}

void Slice::Begin(const char* category, std::string_view name) {
  Recorder& r = recorder();
  const double start = Since(r, Clock::now());
  std::lock_guard<std::mutex> lock(r.mutex);
  event_ = Add(r, Event{'X', category, std::string(name), ThreadTrack(r), start, -1, {}});
}

void Slice::End() {
  Recorder& r = recorder();
  const double end = Since(r, Clock::now());
  std::lock_guard<std::mutex> lock(r.mutex);
  // Finish (or a new Start) may have come between: the slot is then gone or another's.
  if (event_ < 0 || event_ >= static_cast<int>(r.events.size())) return;
  Event& event = r.events[event_];
  if (event.duration < 0 && event.track == this_thread_track) event.duration = end - event.start;
}

Slice& Slice::Arg(const char* key, double value) {
  if (on_ && event_ >= 0) AddArg(event_, {key, value, std::string(), false});
  return *this;
}

Slice& Slice::Arg(const char* key, std::string_view value) {
  if (on_ && event_ >= 0) AddArg(event_, {key, 0, std::string(value), true});
  return *this;
}

void Complete(int track, const char* category, std::string_view name, double start, double duration,
              const char* key1, double value1, const char* key2, double value2) {
  Recorder& r = recorder();
  std::vector<Arg> args;
  if (key1 != nullptr) args.push_back({key1, value1, std::string(), false});
  if (key2 != nullptr) args.push_back({key2, value2, std::string(), false});
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.started) return;
  Add(r, Event{'X', category, std::string(name), track, start, duration, std::move(args)});
}

void Counter(const char* name, double value) {
  if (!Recording()) return;
  Recorder& r = recorder();
  const double now = Since(r, Clock::now());
  std::lock_guard<std::mutex> lock(r.mutex);
  Add(r, Event{'C', "memory", name, ThreadTrack(r), now, 0, {{name, value, std::string(), false}}});
}

}  // namespace timeline
}  // namespace caffe
