// The CUDA emulator's streams and events: per-stream queues of work that runs when something
// waits for it (streams.hpp says when, and why).
#include "streams.hpp"

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "emu_state.hpp"

namespace caffe_emu {
namespace {

constexpr int kMaxDevices = 16;
constexpr uint64_t kEverything = std::numeric_limits<uint64_t>::max();

// One queued item: work to run, or a wait for another stream to reach one of its entries.
struct Entry {
  uint64_t order = 0;  // issue order over all streams
  std::function<void()> work;
  CUstream_st* wait_for = nullptr;
  uint64_t wait_until = 0;
};

}  // namespace
}  // namespace caffe_emu

// Streams and events are never freed: a queued wait or event mark may still point at one after
// the program destroyed it (CUDA lets destroyed streams finish their work).
struct CUstream_st {
  int device = 0;
  bool legacy = false;    // the device's default stream
  bool blocking = false;  // made without cudaStreamNonBlocking: ordered with the default stream
  std::deque<caffe_emu::Entry> pending;
  uint64_t last_issued = 0;    // order of the newest entry
  uint64_t running_entry = 0;  // order of the entry running now; 0 if none
  // Held by the thread running one of this stream's entries, for that entry only. Streams run in
  // parallel on several threads without deadlock: a thread waits for a stream only while that
  // stream has entries left that were issued before the entry the thread runs (waits point back),
  // and stops waiting once they are done, so no cycle of waiting threads can form.
  std::recursive_mutex running;
};

struct CUevent_st {
  int device = 0;
  bool timing = true;             // not made with cudaEventDisableTiming
  CUstream_st* stream = nullptr;  // where last recorded; null if never
  uint64_t mark = 0;              // the order of that record's entry
  uint64_t generation = 0;        // records so far: a mark counts only if it is the latest
  bool happened = false;          // the latest record's mark has run
  std::chrono::steady_clock::time_point at{};  // when it ran
};

namespace caffe_emu {
namespace {

struct Streams {
  std::mutex mutex;                  // guards every queue, event field and set below
  std::condition_variable progress;  // notified when a stream's entry is done
  uint64_t last_order = 0;
  std::array<CUstream_st, kMaxDevices> defaults;
  std::vector<CUstream_st*> made;  // every stream made, destroyed or not
  std::set<const CUstream_st*> live_streams;
  std::set<const CUevent_st*> live_events;
  Streams() {
    for (int device = 0; device < kMaxDevices; ++device) {
      defaults[device].device = device;
      defaults[device].legacy = true;
    }
  }
};

Streams& TheStreams() {
  static Streams* streams = new Streams();  // outlives every static destructor that may sync
  return *streams;
}

CUstream_st* Resolve(cudaStream_t stream) {
  return stream != nullptr ? stream : &TheStreams().defaults[CurrentDevice()];
}

// Makes `device` current for the life of the scope.
class OnDevice {
 public:
  explicit OnDevice(int device) {
    cudaGetDevice(&previous_);
    if (device != previous_) cudaSetDevice(device);
  }
  ~OnDevice() { cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

// Appends to `stream`'s queue; the caller holds the mutex.
uint64_t Append(Streams& all, CUstream_st* stream, Entry entry) {
  entry.order = ++all.last_order;
  stream->last_issued = entry.order;
  stream->pending.push_back(std::move(entry));
  return stream->last_issued;
}

// The waits that order the default stream and blocking streams, as CUDA does: work on the
// default stream waits for every blocking stream's earlier work, and the reverse.
void AppendImplicitWaits(Streams& all, CUstream_st* stream) {
  auto wait_for = [&](CUstream_st* other) {
    if (other->pending.empty()) return;
    Entry wait;
    wait.wait_for = other;
    wait.wait_until = other->last_issued;
    Append(all, stream, std::move(wait));
  };
  if (stream->legacy) {
    for (CUstream_st* other : all.made) {
      if (other->blocking && other->device == stream->device) wait_for(other);
    }
  } else if (stream->blocking) {
    wait_for(&all.defaults[stream->device]);
  }
}

// True when `stream` has no entry up to order `until` left to run or running; the caller holds
// the mutex.
bool ReachedLocked(const CUstream_st* stream, uint64_t until) {
  return (stream->pending.empty() || stream->pending.front().order > until) &&
         (stream->running_entry == 0 || stream->running_entry > until);
}

// Runs `stream`'s entries up to order `until`, and what they wait for; returns when they are done,
// whichever thread ran them. A thread waiting for another to finish an entry returns as soon as
// what it needs is done (it may hold other streams' entries meanwhile).
void RunUntil(CUstream_st* stream, uint64_t until) {
  Streams& all = TheStreams();
  for (;;) {
    Entry entry;
    {
      std::unique_lock<std::mutex> lock(all.mutex);
      for (;;) {
        if (ReachedLocked(stream, until)) return;
        if (stream->running.try_lock()) break;
        all.progress.wait(lock);
      }
      if (stream->pending.empty() || stream->pending.front().order > until) {
        stream->running.unlock();  // only this thread's own outer entry is left: waits point back
        return;
      }
      entry = std::move(stream->pending.front());
      stream->pending.pop_front();
      stream->running_entry = entry.order;
    }
    if (entry.wait_for != nullptr) RunUntil(entry.wait_for, entry.wait_until);
    if (entry.work) {
      OnDevice device(stream->device);
      entry.work();
    }
    {
      // Under the mutex: a waiter that found the lock taken is in wait() by now.
      std::lock_guard<std::mutex> lock(all.mutex);
      stream->running_entry = 0;
      stream->running.unlock();
    }
    all.progress.notify_all();
  }
}

// True when `stream` has no entry up to order `until` left to run or running.
bool Reached(CUstream_st* stream, uint64_t until) {
  Streams& all = TheStreams();
  std::lock_guard<std::mutex> lock(all.mutex);
  return ReachedLocked(stream, until);
}

bool KnownEvent(cudaEvent_t event) {
  Streams& all = TheStreams();
  std::lock_guard<std::mutex> lock(all.mutex);
  return event != nullptr && all.live_events.count(event) != 0;
}

}  // namespace

bool DeferredWork() {
  static const bool deferred = [] {
    const char* text = std::getenv("CAFFE_CUDA_EMU_SYNC");
    return text == nullptr || std::strcmp(text, "1") != 0;
  }();
  return deferred;
}

bool KnownStream(cudaStream_t stream) {
  if (stream == nullptr) return true;
  Streams& all = TheStreams();
  std::lock_guard<std::mutex> lock(all.mutex);
  return all.live_streams.count(stream) != 0;
}

void Issue(cudaStream_t stream, std::function<void()> work) {
  CUstream_st* target = Resolve(stream);
  if (!DeferredWork()) {
    OnDevice device(target->device);
    work();
    return;
  }
  Streams& all = TheStreams();
  std::lock_guard<std::mutex> lock(all.mutex);
  AppendImplicitWaits(all, target);
  Entry entry;
  entry.work = std::move(work);
  Append(all, target, std::move(entry));
}

void Drain(cudaStream_t stream) { RunUntil(Resolve(stream), kEverything); }

void DrainDevice(int device) {
  Streams& all = TheStreams();
  std::vector<CUstream_st*> streams;
  {
    std::lock_guard<std::mutex> lock(all.mutex);
    for (CUstream_st& stream : all.defaults) streams.push_back(&stream);
    streams.insert(streams.end(), all.made.begin(), all.made.end());
  }
  for (CUstream_st* stream : streams) {
    if (device < 0 || stream->device == device) RunUntil(stream, kEverything);
  }
}

}  // namespace caffe_emu

using caffe_emu::Fail;
using caffe_emu::TheStreams;

cudaError_t cudaDeviceSynchronize() {
  caffe_emu::DrainDevice(caffe_emu::CurrentDevice());
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  auto& all = TheStreams();
  *stream = new CUstream_st();
  (*stream)->device = caffe_emu::CurrentDevice();
  (*stream)->blocking = (flags & cudaStreamNonBlocking) == 0;
  std::lock_guard<std::mutex> lock(all.mutex);
  all.made.push_back(*stream);
  all.live_streams.insert(*stream);
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  auto& all = TheStreams();
  {
    std::lock_guard<std::mutex> lock(all.mutex);
    if (stream == nullptr || all.live_streams.erase(stream) == 0) {
      return Fail(cudaErrorInvalidResourceHandle, "cudaStreamDestroy of an unknown handle");
    }
  }
  caffe_emu::Drain(stream);  // its work still runs, as on a GPU
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (!caffe_emu::KnownStream(stream)) {
    return Fail(cudaErrorInvalidResourceHandle, "cudaStreamSynchronize of an unknown stream");
  }
  caffe_emu::Drain(stream);
  return cudaSuccess;
}

// Not ready while work is queued; the query then lets it run, as a GPU makes progress between
// two polls.
cudaError_t cudaStreamQuery(cudaStream_t stream) {
  if (!caffe_emu::KnownStream(stream)) {
    return Fail(cudaErrorInvalidResourceHandle, "cudaStreamQuery of an unknown stream");
  }
  CUstream_st* target = caffe_emu::Resolve(stream);
  if (caffe_emu::Reached(target, caffe_emu::kEverything)) return cudaSuccess;
  caffe_emu::Drain(stream);
  return cudaErrorNotReady;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  (void)flags;
  if (!caffe_emu::KnownStream(stream) || !caffe_emu::KnownEvent(event)) {
    return Fail(cudaErrorInvalidResourceHandle, "cudaStreamWaitEvent with an unknown handle");
  }
  if (!caffe_emu::DeferredWork()) return cudaSuccess;
  auto& all = TheStreams();
  std::lock_guard<std::mutex> lock(all.mutex);
  if (event->stream == nullptr) return cudaSuccess;  // never recorded: nothing to wait for
  CUstream_st* target = caffe_emu::Resolve(stream);
  caffe_emu::AppendImplicitWaits(all, target);
  caffe_emu::Entry wait;
  wait.wait_for = event->stream;
  wait.wait_until = event->mark;
  caffe_emu::Append(all, target, std::move(wait));
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  auto& all = TheStreams();
  *event = new CUevent_st();
  (*event)->device = caffe_emu::CurrentDevice();
  (*event)->timing = (flags & cudaEventDisableTiming) == 0;
  std::lock_guard<std::mutex> lock(all.mutex);
  all.live_events.insert(*event);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  auto& all = TheStreams();
  std::lock_guard<std::mutex> lock(all.mutex);
  if (event == nullptr || all.live_events.erase(event) == 0) {
    return Fail(cudaErrorInvalidResourceHandle, "cudaEventDestroy of an unknown handle");
  }
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (!caffe_emu::KnownEvent(event) || !caffe_emu::KnownStream(stream)) {
    return Fail(cudaErrorInvalidResourceHandle, "cudaEventRecord with an unknown handle");
  }
  auto& all = TheStreams();
  CUstream_st* target = caffe_emu::Resolve(stream);
  std::lock_guard<std::mutex> lock(all.mutex);
  const uint64_t generation = ++event->generation;
  event->stream = target;
  event->happened = !caffe_emu::DeferredWork();
  event->at = std::chrono::steady_clock::now();
  if (event->happened) return cudaSuccess;
  caffe_emu::AppendImplicitWaits(all, target);
  caffe_emu::Entry mark;
  mark.work = [event, generation] {
    auto& all = TheStreams();
    std::lock_guard<std::mutex> lock(all.mutex);
    if (event->generation != generation) return;  // recorded again since
    event->happened = true;
    event->at = std::chrono::steady_clock::now();
  };
  event->mark = caffe_emu::Append(all, target, std::move(mark));
  return cudaSuccess;
}

namespace caffe_emu {
namespace {

// Where an event stands: unknown, never recorded (counts as happened), pending or happened.
enum class EventState { kUnknown, kHappened, kPending };

EventState StateOf(cudaEvent_t event, CUstream_st** stream, uint64_t* mark) {
  if (!KnownEvent(event)) return EventState::kUnknown;
  auto& all = TheStreams();
  std::lock_guard<std::mutex> lock(all.mutex);
  if (event->stream == nullptr || event->happened) return EventState::kHappened;
  *stream = event->stream;
  *mark = event->mark;
  return EventState::kPending;
}

}  // namespace
}  // namespace caffe_emu

cudaError_t cudaEventQuery(cudaEvent_t event) {
  CUstream_st* stream = nullptr;
  uint64_t mark = 0;
  switch (caffe_emu::StateOf(event, &stream, &mark)) {
    case caffe_emu::EventState::kUnknown:
      return Fail(cudaErrorInvalidResourceHandle, "cudaEventQuery of an unknown event");
    case caffe_emu::EventState::kHappened:
      return cudaSuccess;
    case caffe_emu::EventState::kPending:
      break;
  }
  caffe_emu::RunUntil(stream, mark);  // not ready now; ready at the next poll
  return cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  CUstream_st* stream = nullptr;
  uint64_t mark = 0;
  switch (caffe_emu::StateOf(event, &stream, &mark)) {
    case caffe_emu::EventState::kUnknown:
      return Fail(cudaErrorInvalidResourceHandle, "cudaEventSynchronize of an unknown event");
    case caffe_emu::EventState::kHappened:
      return cudaSuccess;
    case caffe_emu::EventState::kPending:
      break;
  }
  caffe_emu::RunUntil(stream, mark);
  return cudaSuccess;
}

// The milliseconds between two events that have happened (end may come first: negative), as CUDA
// gives them; cudaErrorNotReady while either is still queued; events that cannot time or were
// never recorded are refused.
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  const char* call = "cudaEventElapsedTime";
  if (ms == nullptr) return Fail(cudaErrorInvalidValue, std::string(call) + " with a null result");
  for (cudaEvent_t event : {start, end}) {
    if (!caffe_emu::KnownEvent(event)) {
      return Fail(cudaErrorInvalidResourceHandle, std::string(call) + " of an unknown event");
    }
  }
  auto& all = TheStreams();
  std::unique_lock<std::mutex> lock(all.mutex);
  for (cudaEvent_t event : {start, end}) {
    if (!event->timing || event->stream == nullptr) {
      lock.unlock();
      return Fail(cudaErrorInvalidResourceHandle,
                  std::string(call) + " of an event " +
                      (event->timing ? "never recorded" : "made with cudaEventDisableTiming"));
    }
  }
  if (!start->happened || !end->happened) return cudaErrorNotReady;
  *ms = std::chrono::duration<float, std::milli>(end->at - start->at).count();
  return cudaSuccess;
}
