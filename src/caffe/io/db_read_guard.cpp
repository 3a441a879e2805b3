#include "caffe/io/db_read_guard.hpp"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace caffe {
namespace db {

namespace {

// What the thread reads. Constant-initialized (no lazy initialization in the signal handler);
// the handler reads it from the faulting thread, the only one that writes it.
struct ThreadReads {
  const char* kind = nullptr;
  const char* source = nullptr;  // nullptr: the thread reads no database
  size_t source_size = 0;
  const char* key = nullptr;
  size_t key_size = 0;
  sigjmp_buf* trap = nullptr;  // where a fault returns to, inside TrapReadFaults
  int fault_signal = 0;
  char assertion[400] = {};  // LMDB's message is at most 400 bytes with its terminator
  bool reporting = false;    // the one-line report is being written (a fault in it: pass on)
};
thread_local ThreadReads thread_reads;

struct sigaction previous_segv;
struct sigaction previous_bus;
std::atomic<bool> handler_installed{false};
std::mutex installing;

const char* SignalReason(int signal) {
  if (signal == SIGBUS) return "SIGBUS (a page past the end of the file)";
  if (signal == SIGSEGV) return "SIGSEGV (an address outside the database's memory map)";
  return "a fault";
}

// Async-signal-safe: `key` into out[0, capacity) as PrintableKey describes; returns the length.
size_t EscapeKey(const char* key, size_t size, char* out, size_t capacity) {
  constexpr size_t kShown = 64;
  static const char kHex[] = "0123456789abcdef";
  size_t length = 0;
  for (size_t i = 0; i < size && i < kShown && length + 4 <= capacity; ++i) {
    const unsigned char byte = static_cast<unsigned char>(key[i]);
    if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
      out[length++] = static_cast<char>(byte);
    } else {
      out[length++] = '\\';
      out[length++] = 'x';
      out[length++] = kHex[byte >> 4];
      out[length++] = kHex[byte & 0xf];
    }
  }
  if (size > kShown && length + 3 <= capacity) {
    std::memcpy(out + length, "...", 3);
    length += 3;
  }
  return length;
}

// One line of text built without allocating, for the signal handler.
class Line {
 public:
  void Add(const char* text) { Add(text, std::strlen(text)); }
  void Add(const char* text, size_t size) {
    const size_t room = sizeof(text_) - 1 - size_;
    if (size > room) size = room;
    std::memcpy(text_ + size_, text, size);
    size_ += size;
  }
  void AddKey(const char* key, size_t size) {
    size_ += EscapeKey(key, size, text_ + size_, sizeof(text_) - 1 - size_);
  }
  void WriteToStderr() {
    text_[size_++] = '\n';
    for (size_t written = 0; written < size_;) {
      const ssize_t result = write(STDERR_FILENO, text_ + written, size_ - written);
      if (result < 0 && errno == EINTR) continue;
      if (result <= 0) return;
      written += static_cast<size_t>(result);
    }
  }

 private:
  char text_[1536];
  size_t size_ = 0;
};

// The thread faulted (or LMDB's check failed) while reading a database outside a trap: one line
// for the user, and exit status 1 as for any other error of a tool.
[[noreturn]] void ReportAndExit(const ThreadReads& reads, const char* reason_head,
                                const char* reason_tail) {
  Line line;
  line.Add(program_invocation_short_name);
  line.Add(": error: ");
  line.Add(reads.kind);
  line.Add(" '");
  line.Add(reads.source, reads.source_size);
  line.Add("' is damaged: reading it");
  if (reads.key_size > 0) {
    line.Add(" after key '");
    line.AddKey(reads.key, reads.key_size);
    line.Add("'");
  }
  line.Add(" failed: ");
  line.Add(reason_head);
  line.Add(reason_tail);
  line.Add("; check every record with `caffe_db verify ");
  line.Add(reads.source, reads.source_size);
  line.Add("`");
  line.WriteToStderr();
  _exit(1);
}

// Hands a fault that is not a database's to the handler installed before ours.
void PassOn(int signal, siginfo_t* info, void* context) {
  const struct sigaction& previous = signal == SIGBUS ? previous_bus : previous_segv;
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    if (previous.sa_sigaction != nullptr) {
      previous.sa_sigaction(signal, info, context);
      return;
    }
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal);
    return;
  }
  // The default action: the faulting instruction repeats when this returns and kills the
  // process; a signal sent by kill() or raise() (si_code <= 0) is sent again.
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal, &default_action, nullptr);
  if (info == nullptr || info->si_code <= 0) raise(signal);
}

void OnFault(int signal, siginfo_t* info, void* context) {
  ThreadReads& reads = thread_reads;
  if (reads.trap != nullptr) {
    sigjmp_buf* trap = reads.trap;
    reads.trap = nullptr;
    reads.fault_signal = signal;
    reads.assertion[0] = '\0';
    // The signal is blocked while its handler runs; jumping out must unblock it (sigsetjmp saves
    // no mask, which would cost a system call on every trapped read).
    sigset_t faults;
    sigemptyset(&faults);
    sigaddset(&faults, signal);
    pthread_sigmask(SIG_UNBLOCK, &faults, nullptr);
    siglongjmp(*trap, 1);
  }
  if (reads.source != nullptr && !reads.reporting) {
    reads.reporting = true;
    ReportAndExit(reads, SignalReason(signal), "");
  }
  PassOn(signal, info, context);
}

// Once per process. Not std::call_once: that sets thread-local state on every call, and this
// runs for every record read.
void InstallFaultHandler() {
  if (handler_installed.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(installing);
  if (handler_installed.load(std::memory_order_relaxed)) return;
  struct sigaction action = {};
  action.sa_sigaction = &OnFault;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &previous_segv);
  sigaction(SIGBUS, &action, &previous_bus);
  handler_installed.store(true, std::memory_order_release);
}

}  // namespace

DatabaseReadScope::DatabaseReadScope(const char* kind, const string& source,
                                     const string& last_key) {
  InstallFaultHandler();
  ThreadReads& reads = thread_reads;
  outer_kind_ = reads.kind;
  outer_source_ = reads.source;
  outer_source_size_ = reads.source_size;
  outer_key_ = reads.key;
  outer_key_size_ = reads.key_size;
  reads.kind = kind;
  reads.source_size = source.size();
  reads.key = last_key.data();
  reads.key_size = last_key.size();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  reads.source = source.c_str();  // last: the handler takes a non-null source as complete
}

DatabaseReadScope::~DatabaseReadScope() {
  ThreadReads& reads = thread_reads;
  reads.source = outer_source_;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  reads.kind = outer_kind_;
  reads.source_size = outer_source_size_;
  reads.key = outer_key_;
  reads.key_size = outer_key_size_;
}

string ReadFault::Describe() const {
  if (signal != 0) return SignalReason(signal);
  return "LMDB's own check: " + assertion;
}

bool TrapReadFaults(void (*read)(void*), void* argument, ReadFault* fault) {
  InstallFaultHandler();
  ThreadReads& reads = thread_reads;
  sigjmp_buf* const outer = reads.trap;
  sigjmp_buf trap;
  // Nothing here changes after sigsetjmp, so every local is intact when a fault lands back here.
  if (sigsetjmp(trap, 0) != 0) {
    reads.trap = outer;
    fault->signal = reads.fault_signal;
    fault->assertion = reads.assertion;
    return false;
  }
  reads.trap = &trap;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  read(argument);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  reads.trap = outer;
  return true;
}

void OnDatabaseLibraryAssertion(const char* message) {
  ThreadReads& reads = thread_reads;
  const size_t length = std::min(std::strlen(message), sizeof(reads.assertion) - 1);
  std::memcpy(reads.assertion, message, length);
  reads.assertion[length] = '\0';
  if (reads.trap != nullptr) {
    sigjmp_buf* trap = reads.trap;
    reads.trap = nullptr;
    reads.fault_signal = 0;
    siglongjmp(*trap, 1);
  }
  if (reads.source != nullptr && !reads.reporting) {
    reads.reporting = true;
    ReportAndExit(reads, "LMDB's own check: ", reads.assertion);
  }
}

string PrintableKey(const string& key) {
  char text[64 * 4 + 3];
  return string(text, EscapeKey(key.data(), key.size(), text, sizeof(text)));
}

}  // namespace db
}  // namespace caffe
