// The timeline (docs/TIMELINE.md): where each thread's time goes during training, recorded in the
// engine and written as Chrome trace-event JSON, the format Perfetto and chrome://tracing open.
// `caffe train -timeline FILE` and `caffe time -timeline FILE` start it. While it is not
// recording, an instrumented place costs one relaxed atomic load.
#ifndef CAFFE_TIMELINE_TIMELINE_HPP_
#define CAFFE_TIMELINE_TIMELINE_HPP_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace caffe {
namespace timeline {

/// What Start records and where it writes.
struct Options {
  /// The JSON file written by Finish.
  std::string path;
  /// The iterations recorded: first_iteration <= iteration < end_iteration (a long run must not
  /// write gigabytes).
  int first_iteration = 0;
  int end_iteration = 100;
  /// At most this many events are kept; later ones are counted, not kept.
  int64_t max_events = 1000000;
  /// This process's rank under MPI, its row ("process") in a viewer.
  int rank = 0;
};

namespace internal {
extern std::atomic<bool> recording;
}  // namespace internal

/// Whether events are being recorded: started, and the current iteration in the window.
inline bool Recording() { return internal::recording.load(std::memory_order_relaxed); }

/// Starts a recording (replacing none: one per process). Throws caffe::Error, naming the file,
/// when options.path cannot be written.
void Start(const Options& options);
/// Whether Start was called and Finish not yet.
bool Started();
/// The iteration the caller's loop (the solver's step, `caffe time`'s pass) begins: recording
/// turns on inside the window and off outside it.
void SetIteration(int iteration);
/// Writes the file (a temporary file, then renamed) and stops recording; returns the events
/// written. Writes nothing, and returns 0, when not started or when nothing was recorded.
int64_t Finish();

/// Microseconds since Start, on the clock every event uses.
double Now();
/// The same for a time taken from std::chrono::steady_clock (a copy engine's, converted).
double At(std::chrono::steady_clock::time_point time);
/// Names the calling thread's track ("solver", "prefetch data", ...).
void NameThread(std::string_view name);
/// The id of a track that is not a thread's (a copy engine, a GPU stream), made on first use.
int Track(std::string_view name);

/// One value of a slice's args (shown when the slice is selected in a viewer).
struct Arg {
  const char* key = nullptr;
  double number = 0;
  std::string text;
  bool is_text = false;
};

/// A slice on the calling thread's track from construction to destruction, kept only when
/// recording at construction. Slices on one thread nest as their scopes do.
class Slice {
 public:
  Slice(const char* category, std::string_view name) : on_(Recording()) {
    if (on_) Begin(category, name);
  }
  ~Slice() {
    if (on_) End();
  }
  /// A number or a text shown with the slice (bytes, the layer's type).
  Slice& Arg(const char* key, double value);
  Slice& Arg(const char* key, std::string_view value);
  bool on() const { return on_; }

  Slice(const Slice&) = delete;
  Slice& operator=(const Slice&) = delete;

 private:
  void Begin(const char* category, std::string_view name);
  void End();

  bool on_;
  int event_ = -1;  // the slot reserved for it, or -1 when the buffer was full
};

/// A slice already timed (start and duration in Now's microseconds) on track `track` (Track()),
/// with up to two number args. Kept while started, even outside the iteration window: the
/// caller timed it inside (a copy issued then, which finished later).
void Complete(int track, const char* category, std::string_view name, double start, double duration,
              const char* key1 = nullptr, double value1 = 0, const char* key2 = nullptr,
              double value2 = 0);
/// A counter's value now (memory in use, ...), drawn as a graph on the process's row.
void Counter(const char* name, double value);

}  // namespace timeline
}  // namespace caffe

#endif  // CAFFE_TIMELINE_TIMELINE_HPP_
