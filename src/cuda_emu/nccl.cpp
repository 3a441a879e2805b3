// The CUDA emulator's NCCL (include/nccl.h). A communicator's ranks meet in a shared region: POSIX
// shared memory named by the unique id when ncclCommInitRank joins them (ranks in different
// processes, or threads), or one allocation for ncclCommInitAll. The region holds a slot per rank
// (barrier count, state, process, GPU, the collective it called) and a staging area per rank.
// A collective moves its data through the staging areas chunk by chunk: every rank copies its part
// of the chunk in, all meet at a barrier, each reads what its result needs, and all meet again.
// The collective runs at the call; the write of its result is queued on the call's stream.
// A rank that waits on a peer that died, aborted or destroyed its communicator gets an error
// instead of a hang, as NCCL's asynchronous error reporting would give it.
#include <fcntl.h>
#include <nccl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "emu_state.hpp"
#include "streams.hpp"

namespace caffe_emu {
namespace {

constexpr int kMaxRanks = 64;
constexpr size_t kChunkBytes = size_t{256} << 10;  // per rank and step
constexpr char kIdPrefix[] = "/caffe_emu_nccl_";
constexpr auto kJoinTimeout = std::chrono::seconds(120);
constexpr auto kStallWarning = std::chrono::seconds(60);

enum class Kind : int { kAllReduce = 1, kReduce, kBroadcast, kReduceScatter, kAllGather };

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kAllReduce:
      return "ncclAllReduce";
    case Kind::kReduce:
      return "ncclReduce";
    case Kind::kBroadcast:
      return "ncclBroadcast";
    case Kind::kReduceScatter:
      return "ncclReduceScatter";
    case Kind::kAllGather:
      return "ncclAllGather";
  }
  return "?";
}

// What a rank called; every rank of a collective must agree on it.
struct CallRecord {
  int kind;
  int type;
  int root;
  size_t count;
  uint64_t sequence;  // collectives this rank has run on the communicator
};

enum SlotState : int { kFree = 0, kJoined, kLeft, kAborted };

struct RankSlot {
  std::atomic<uint64_t> arrived;  // barriers this rank has reached
  std::atomic<int> state;
  int pid;
  int device;  // the physical emulated GPU
  CallRecord call;
};

// The start of a region; the staging areas (one of kChunkBytes per rank) follow it. Shared
// memory starts zeroed, which is every field's initial value.
struct Header {
  std::atomic<int> nranks;
  std::atomic<int> joined;
  RankSlot slots[kMaxRanks];
};

constexpr size_t kRegionBytes = sizeof(Header) + kMaxRanks * kChunkBytes;

// One mapping of a region in this process.
class Region {
 public:
  Region(void* base, std::string name) : base_(base), name_(std::move(name)) {}
  ~Region() { munmap(base_, kRegionBytes); }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  Header& header() const { return *static_cast<Header*>(base_); }
  char* staging(int rank) const {
    return static_cast<char*>(base_) + sizeof(Header) + rank * kChunkBytes;
  }
  const std::string& name() const { return name_; }

 private:
  void* base_;
  std::string name_;  // of the shared memory object; empty for ncclCommInitAll's regions
};

}  // namespace
}  // namespace caffe_emu

struct ncclComm {
  std::shared_ptr<caffe_emu::Region> region;
  int rank;
  int nranks;
  int device;  // visible index in this process
  uint64_t barriers = 0;
  uint64_t sequence = 0;
  ncclResult_t error = ncclSuccess;  // sticky, as after an asynchronous NCCL error
};

namespace caffe_emu {
namespace {

size_t TypeSize(ncclDataType_t type) {
  switch (type) {
    case ncclFloat:
      return sizeof(float);
    case ncclDouble:
      return sizeof(double);
  }
  return 0;
}

// Whether process `pid` has exited (a zombie nobody reaped yet counts as exited).
bool ProcessGone(int pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  FILE* stat = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (stat == nullptr) return false;
  char state = '?';
  const int read = std::fscanf(stat, "%*d (%*[^)]) %c", &state);
  std::fclose(stat);
  return read == 1 && (state == 'Z' || state == 'X');
}

// Why `peer` will not reach what `comm`'s rank waits for, or an empty string while it still may.
std::string PeerGone(const ncclComm& comm, int peer) {
  const RankSlot& slot = comm.region->header().slots[peer];
  const int state = slot.state.load(std::memory_order_acquire);
  if (state == kLeft) return "rank " + std::to_string(peer) + " destroyed its communicator";
  if (state == kAborted) return "rank " + std::to_string(peer) + " aborted its communicator";
  if (state == kJoined && slot.pid != getpid() && ProcessGone(slot.pid)) {
    return "rank " + std::to_string(peer) + " (process " + std::to_string(slot.pid) + ") is gone";
  }
  return "";
}

// Waits until `ready(peer)` holds for every peer. Fails (ncclRemoteError) when a peer that is not
// ready is gone; with a timeout, when the time passes; and warns once when waiting is long.
ncclResult_t WaitForPeers(const ncclComm& comm, const char* call,
                          const std::function<bool(int)>& ready,
                          std::chrono::seconds timeout = std::chrono::seconds(0)) {
  const auto start = std::chrono::steady_clock::now();
  auto next_check = start;
  bool warned = false;
  for (int spins = 0;; ++spins) {
    int waiting_for = -1;
    for (int peer = 0; peer < comm.nranks && waiting_for < 0; ++peer) {
      if (!ready(peer)) waiting_for = peer;
    }
    if (waiting_for < 0) return ncclSuccess;
    if (spins < 1000) {
      sched_yield();
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_check) {
      next_check = now + std::chrono::milliseconds(20);
      for (int peer = 0; peer < comm.nranks; ++peer) {
        if (ready(peer)) continue;
        const std::string gone = PeerGone(comm, peer);
        if (!gone.empty()) {
          Complain(call, "rank " + std::to_string(comm.rank) + " cannot finish: " + gone);
          return ncclRemoteError;
        }
      }
      if (timeout.count() > 0 && now - start > timeout) {
        Complain(call, "rank " + std::to_string(waiting_for) + " did not come within " +
                           std::to_string(timeout.count()) + " s");
        return ncclSystemError;
      }
      if (!warned && now - start > kStallWarning) {
        warned = true;
        Complain(call, "rank " + std::to_string(comm.rank) + " has waited " +
                           std::to_string(kStallWarning.count()) + " s for rank " +
                           std::to_string(waiting_for) + " (a collective not every rank calls?)");
      }
    }
    usleep(50);
  }
}

ncclResult_t Barrier(ncclComm* comm, const char* call) {
  const uint64_t generation = ++comm->barriers;
  Header& header = comm->region->header();
  header.slots[comm->rank].arrived.store(generation, std::memory_order_release);
  return WaitForPeers(*comm, call, [&](int peer) {
    return header.slots[peer].arrived.load(std::memory_order_acquire) >= generation;
  });
}

// NCCL refuses two ranks on one GPU: fails when `rank`'s GPU is another rank's too.
ncclResult_t CheckOwnGpu(const Header& header, int rank, int nranks, const char* call) {
  const int device = header.slots[rank].device;
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer != rank && header.slots[peer].device == device) {
      Complain(call, "Duplicate GPU detected: rank " + std::to_string(rank) + " and rank " +
                         std::to_string(peer) + " both on CUDA device " + std::to_string(device));
      return ncclInvalidUsage;
    }
  }
  return ncclSuccess;
}

// Joins `comm`'s rank to its region's other ranks on `physical_device`; checks that they agree on
// the size and that no two share a GPU, as NCCL does.
ncclResult_t Join(ncclComm* comm, int physical_device, const char* call) {
  Header& header = comm->region->header();
  int expected = 0;
  if (!header.nranks.compare_exchange_strong(expected, comm->nranks) && expected != comm->nranks) {
    Complain(call, "rank " + std::to_string(comm->rank) + " was given nranks " +
                       std::to_string(comm->nranks) + ", another rank " + std::to_string(expected));
    return ncclInvalidUsage;
  }
  RankSlot& slot = header.slots[comm->rank];
  int free = kFree;
  if (!slot.state.compare_exchange_strong(free, kJoined)) {
    Complain(call, "rank " + std::to_string(comm->rank) + " joined twice");
    return ncclInvalidUsage;
  }
  slot.pid = getpid();
  slot.device = physical_device;
  header.joined.fetch_add(1, std::memory_order_acq_rel);
  const ncclResult_t joined = WaitForPeers(
      *comm, call,
      [&](int) { return header.joined.load(std::memory_order_acquire) == comm->nranks; },
      kJoinTimeout);
  if (joined != ncclSuccess) return joined;
  return CheckOwnGpu(header, comm->rank, comm->nranks, call);
}

// One collective call, checked and ready to run.
struct Collective {
  Kind kind;
  ncclDataType_t type;
  int root;
  size_t count;  // as the call's count argument
  const char* send;
  char* recv;
  ncclComm_t comm;
};

// Elements each rank moves through the staging areas.
size_t Span(const Collective& c) {
  return c.kind == Kind::kReduceScatter ? c.count * c.comm->nranks : c.count;
}

template <typename T>
void SumSlots(const Region& region, int nranks, size_t first, size_t n, char* out) {
  T* result = reinterpret_cast<T*>(out);
  for (size_t i = 0; i < n; ++i) {
    T sum = reinterpret_cast<const T*>(region.staging(0))[first + i];
    for (int r = 1; r < nranks; ++r)
      sum += reinterpret_cast<const T*>(region.staging(r))[first + i];
    result[i] = sum;  // in rank order, so every rank gets the same bits
  }
}

// Writes to `out` the sum over ranks of staged elements [first, first + n).
void Sum(const Collective& c, size_t first, size_t n, char* out) {
  if (c.type == ncclFloat) {
    SumSlots<float>(*c.comm->region, c.comm->nranks, first, n, out);
  } else {
    SumSlots<double>(*c.comm->region, c.comm->nranks, first, n, out);
  }
}

// This rank's part of a step that staged elements [offset, offset + n) of every rank's span.
void Consume(const Collective& c, size_t offset, size_t n) {
  const size_t element = TypeSize(c.type);
  const int rank = c.comm->rank;
  const Region& region = *c.comm->region;
  switch (c.kind) {
    case Kind::kAllReduce:
      Sum(c, 0, n, c.recv + offset * element);
      break;
    case Kind::kReduce:
      if (rank == c.root) Sum(c, 0, n, c.recv + offset * element);
      break;
    case Kind::kBroadcast:
      std::memcpy(c.recv + offset * element, region.staging(c.root), n * element);
      break;
    case Kind::kReduceScatter: {
      const size_t lo = std::max(offset, rank * c.count);
      const size_t hi = std::min(offset + n, (rank + 1) * c.count);
      if (lo < hi) Sum(c, lo - offset, hi - lo, c.recv + (lo - rank * c.count) * element);
      break;
    }
    case Kind::kAllGather:
      for (int r = 0; r < c.comm->nranks; ++r) {
        std::memcpy(c.recv + (r * c.count + offset) * element, region.staging(r), n * element);
      }
      break;
  }
}

// After the first exchange: every rank called the same collective with the same arguments.
ncclResult_t CheckSameCall(const ncclComm& comm, const CallRecord& mine) {
  const Header& header = comm.region->header();
  for (int peer = 0; peer < comm.nranks; ++peer) {
    const CallRecord& theirs = header.slots[peer].call;
    if (theirs.kind == mine.kind && theirs.type == mine.type && theirs.root == mine.root &&
        theirs.count == mine.count) {
      continue;
    }
    Complain(KindName(static_cast<Kind>(mine.kind)),
             "ranks disagree on collective " + std::to_string(mine.sequence) + ": rank " +
                 std::to_string(comm.rank) + " called " + KindName(static_cast<Kind>(mine.kind)) +
                 "(count " + std::to_string(mine.count) + ", type " + std::to_string(mine.type) +
                 ", root " + std::to_string(mine.root) + "), rank " + std::to_string(peer) + " " +
                 KindName(static_cast<Kind>(theirs.kind)) + "(count " +
                 std::to_string(theirs.count) + ", type " + std::to_string(theirs.type) +
                 ", root " + std::to_string(theirs.root) + ")");
    return ncclInvalidUsage;
  }
  return ncclSuccess;
}

ncclResult_t Run(const Collective& c) {
  ncclComm* comm = c.comm;
  if (comm->error != ncclSuccess) return comm->error;
  const char* call = KindName(c.kind);
  const size_t element = TypeSize(c.type);
  const size_t span = Span(c);
  const size_t chunk = kChunkBytes / element;
  const bool contributes = c.kind != Kind::kBroadcast || comm->rank == c.root;
  RankSlot& slot = comm->region->header().slots[comm->rank];
  slot.call = {static_cast<int>(c.kind), static_cast<int>(c.type), c.root, c.count,
               ++comm->sequence};
  for (size_t offset = 0; offset < span; offset += chunk) {
    const size_t n = std::min(chunk, span - offset);
    if (contributes) {
      DeviceAccess access;
      std::memcpy(comm->region->staging(comm->rank), c.send + offset * element, n * element);
    }
    ncclResult_t status = Barrier(comm, call);
    if (status == ncclSuccess && offset == 0) status = CheckSameCall(*comm, slot.call);
    if (status != ncclSuccess) return comm->error = status;
    {
      DeviceAccess access;
      Consume(c, offset, n);
    }
    status = Barrier(comm, call);
    if (status != ncclSuccess) return comm->error = status;
  }
  return ncclSuccess;
}

// Elements this rank's call reads from sendbuff and writes to recvbuff.
size_t SendElements(const Collective& c) {
  if (c.kind == Kind::kBroadcast && c.comm->rank != c.root) return 0;
  return c.kind == Kind::kReduceScatter ? c.count * c.comm->nranks : c.count;
}
size_t RecvElements(const Collective& c) {
  if (c.kind == Kind::kReduce && c.comm->rank != c.root) return 0;
  return c.kind == Kind::kAllGather ? c.count * c.comm->nranks : c.count;
}

// Makes the communicator's GPU current while it lives: NCCL works there whichever GPU the caller
// has current, so the null stream is that GPU's default stream.
class OnCommDevice {
 public:
  explicit OnCommDevice(const ncclComm& comm) {
    cudaGetDevice(&previous_);
    if (previous_ != comm.device) cudaSetDevice(comm.device);
  }
  ~OnCommDevice() { cudaSetDevice(previous_); }
  OnCommDevice(const OnCommDevice&) = delete;
  OnCommDevice& operator=(const OnCommDevice&) = delete;

 private:
  int previous_ = 0;
};

// Runs a collective now, every rank meeting the others, and queues the write of its result to
// recvbuff on `stream`, where a GPU's NCCL kernel would make it: a program that reads recvbuff
// before waiting for the stream (or an event after the call) gets the old values, as on a GPU some
// of the time. The ranks cannot meet in queued work, since a rank's queue runs only when that rank
// needs it and its peers may be waiting for it elsewhere (in MPI, say), where a GPU's kernels
// would have met.
ncclResult_t RunAndQueueResult(const Collective& c, cudaStream_t stream) {
  const size_t bytes = RecvElements(c) * TypeSize(c.type);
  if (!DeferredWork() || bytes == 0) return Run(c);
  std::vector<char> result(bytes);
  Collective staged = c;
  staged.recv = result.data();
  const ncclResult_t status = Run(staged);
  if (status != ncclSuccess) return status;
  IssueWrite(stream, c.recv, std::move(result));
  return ncclSuccess;
}

// Checks a buffer the way NCCL would find it unusable: not device memory of the communicator's GPU,
// or shorter than the call reads or writes.
bool BufferUsable(const Collective& c, const void* buffer, size_t elements, const char* what) {
  if (elements == 0) return true;
  OnCommDevice device(*c.comm);
  return UsableOnDevice(KindName(c.kind), buffer, elements * TypeSize(c.type), what);
}

ncclResult_t Check(const Collective& c, cudaStream_t stream) {
  const char* call = KindName(c.kind);
  if (c.comm == nullptr) {
    Complain(call, "null communicator");
    return ncclInvalidArgument;
  }
  if (c.comm->error != ncclSuccess) return c.comm->error;
  if (TypeSize(c.type) == 0) {
    Complain(call, "data type " + std::to_string(c.type) + " is not emulated (float, double)");
    return ncclInvalidArgument;
  }
  if (c.root < 0 || c.root >= c.comm->nranks) {
    Complain(call, "root " + std::to_string(c.root) + " is not a rank of the communicator");
    return ncclInvalidArgument;
  }
  if (!BufferUsable(c, c.send, SendElements(c), "sendbuff") ||
      !BufferUsable(c, c.recv, RecvElements(c), "recvbuff")) {
    return ncclInvalidArgument;
  }
  if (!KnownStream(stream)) {
    Complain(call, "the stream is not a valid CUDA stream");
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

// Collectives queued between ncclGroupStart and ncclGroupEnd on this thread, with their streams.
thread_local int group_depth = 0;
thread_local std::vector<std::pair<Collective, cudaStream_t>> group_queue;

// Collectives run at once (RunAndQueueResult), after the work queued on their stream before them,
// which a GPU would finish first.
ncclResult_t Submit(const Collective& c, cudaStream_t stream) {
  if (c.count == 0) return ncclSuccess;  // NCCL returns at once, without communicating
  const ncclResult_t checked = Check(c, stream);
  if (checked != ncclSuccess) return checked;
  if (group_depth > 0) {
    group_queue.emplace_back(c, stream);
    return ncclSuccess;
  }
  OnCommDevice device(*c.comm);
  Drain(stream);
  return RunAndQueueResult(c, stream);
}

ncclComm* NewComm(std::shared_ptr<Region> region, int rank, int nranks, int device) {
  ncclComm* comm = new ncclComm;
  comm->region = std::move(region);
  comm->rank = rank;
  comm->nranks = nranks;
  comm->device = device;
  return comm;
}

// Marks the rank's slot (peers waiting on it then fail) and frees this process's handle.
ncclResult_t Leave(ncclComm_t comm, int state) {
  if (comm == nullptr) return ncclInvalidArgument;
  comm->region->header().slots[comm->rank].state.store(state, std::memory_order_release);
  delete comm;
  return ncclSuccess;
}

// Whether two handles are ranks of one communicator (threads that joined by one id map its
// region separately).
bool SameCommunicator(const ncclComm& a, const ncclComm& b) {
  return a.region == b.region ||
         (!a.region->name().empty() && a.region->name() == b.region->name());
}

void* MapZeroed(int fd) {
  void* base = mmap(nullptr, kRegionBytes, PROT_READ | PROT_WRITE,
                    fd < 0 ? MAP_SHARED | MAP_ANONYMOUS : MAP_SHARED, fd, 0);
  return base == MAP_FAILED ? nullptr : base;
}

}  // namespace
}  // namespace caffe_emu

using caffe_emu::Collective;
using caffe_emu::Complain;
using caffe_emu::Kind;

ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return ncclInvalidArgument;
  *version = 22700;
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error";
    case ncclSystemError:
      return "unhandled system error";
    case ncclInternalError:
      return "internal error";
    case ncclInvalidArgument:
      return "invalid argument";
    case ncclInvalidUsage:
      return "invalid usage";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
  }
  return "unknown result code";
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* unique_id) {
  static std::atomic<unsigned> counter{0};
  std::random_device entropy;
  std::memset(unique_id->internal, 0, sizeof(unique_id->internal));
  std::snprintf(unique_id->internal, sizeof(unique_id->internal), "%s%d_%u_%08x",
                caffe_emu::kIdPrefix, static_cast<int>(getpid()), counter++, entropy());
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId comm_id, int rank) {
  const char* call = "ncclCommInitRank";
  *comm = nullptr;
  if (nranks < 1 || nranks > caffe_emu::kMaxRanks || rank < 0 || rank >= nranks) {
    Complain(call, "rank " + std::to_string(rank) + " of " + std::to_string(nranks) +
                       " (the emulator has up to " + std::to_string(caffe_emu::kMaxRanks) + ")");
    return ncclInvalidArgument;
  }
  const std::string name(comm_id.internal, strnlen(comm_id.internal, NCCL_UNIQUE_ID_BYTES));
  if (name.rfind(caffe_emu::kIdPrefix, 0) != 0) {
    Complain(call, "the id was not made by ncclGetUniqueId");
    return ncclInvalidArgument;
  }
  int device = 0;
  cudaGetDevice(&device);
  const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
  if (fd < 0 || ftruncate(fd, caffe_emu::kRegionBytes) != 0) {
    Complain(call, "shared memory " + name + ": " + std::strerror(errno));
    if (fd >= 0) close(fd);
    return ncclSystemError;
  }
  void* base = caffe_emu::MapZeroed(fd);
  close(fd);
  if (base == nullptr) {
    Complain(call, std::string("mmap: ") + std::strerror(errno));
    return ncclSystemError;
  }
  auto region = std::make_shared<caffe_emu::Region>(base, name);
  ncclComm* made = caffe_emu::NewComm(region, rank, nranks, device);
  const ncclResult_t joined = caffe_emu::Join(made, caffe_emu::PhysicalDevice(device), call);
  // Everyone has mapped it (or given up): the name is no longer needed.
  if (rank == 0 || joined != ncclSuccess) shm_unlink(name.c_str());
  if (joined != ncclSuccess) {
    ncclCommAbort(made);
    return joined;
  }
  *comm = made;
  return ncclSuccess;
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  const char* call = "ncclCommInitAll";
  if (ndev < 1 || ndev > caffe_emu::kMaxRanks) {
    Complain(call, std::to_string(ndev) + " devices");
    return ncclInvalidArgument;
  }
  std::vector<int> devices(ndev);
  for (int i = 0; i < ndev; ++i) {
    devices[i] = devlist ? devlist[i] : i;
    if (devices[i] < 0 || devices[i] >= caffe_emu::DeviceCount()) {
      Complain(call, "device " + std::to_string(devices[i]) + " does not exist");
      return ncclInvalidArgument;
    }
  }
  void* base = caffe_emu::MapZeroed(-1);
  if (base == nullptr) return ncclSystemError;
  auto region = std::make_shared<caffe_emu::Region>(base, "");
  caffe_emu::Header& header = region->header();
  for (int i = 0; i < ndev; ++i) {
    caffe_emu::RankSlot& slot = header.slots[i];
    slot.state = caffe_emu::kJoined;
    slot.pid = getpid();
    slot.device = caffe_emu::PhysicalDevice(devices[i]);
  }
  for (int i = 0; i < ndev; ++i) {
    const ncclResult_t own = caffe_emu::CheckOwnGpu(header, i, ndev, call);
    if (own != ncclSuccess) return own;
  }
  header.nranks = ndev;
  header.joined = ndev;
  for (int i = 0; i < ndev; ++i) comms[i] = caffe_emu::NewComm(region, i, ndev, devices[i]);
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) { return caffe_emu::Leave(comm, caffe_emu::kLeft); }

ncclResult_t ncclCommAbort(ncclComm_t comm) { return caffe_emu::Leave(comm, caffe_emu::kAborted); }

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async_error) {
  if (comm == nullptr) return ncclInvalidArgument;
  *async_error = comm->error;
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (comm == nullptr) return ncclInvalidArgument;
  *count = comm->nranks;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (comm == nullptr) return ncclInvalidArgument;
  *rank = comm->rank;
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t, ncclComm_t comm,
                           cudaStream_t stream) {
  return caffe_emu::Submit({Kind::kAllReduce, datatype, 0, count,
                            static_cast<const char*>(sendbuff), static_cast<char*>(recvbuff), comm},
                           stream);
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t, int root, ncclComm_t comm, cudaStream_t stream) {
  return caffe_emu::Submit({Kind::kReduce, datatype, root, count,
                            static_cast<const char*>(sendbuff), static_cast<char*>(recvbuff), comm},
                           stream);
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  return caffe_emu::Submit({Kind::kBroadcast, datatype, root, count,
                            static_cast<const char*>(sendbuff), static_cast<char*>(recvbuff), comm},
                           stream);
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t, ncclComm_t comm,
                               cudaStream_t stream) {
  return caffe_emu::Submit({Kind::kReduceScatter, datatype, 0, recvcount,
                            static_cast<const char*>(sendbuff), static_cast<char*>(recvbuff), comm},
                           stream);
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return caffe_emu::Submit({Kind::kAllGather, datatype, 0, sendcount,
                            static_cast<const char*>(sendbuff), static_cast<char*>(recvbuff), comm},
                           stream);
}

ncclResult_t ncclGroupStart() {
  ++caffe_emu::group_depth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (caffe_emu::group_depth == 0) {
    Complain("ncclGroupEnd", "no ncclGroupStart to end");
    return ncclInvalidUsage;
  }
  if (--caffe_emu::group_depth > 0) return ncclSuccess;
  std::vector<std::pair<caffe_emu::Collective, cudaStream_t>> queued;
  queued.swap(caffe_emu::group_queue);
  // Collectives run one after another here; one thread driving two ranks of a communicator
  // (which NCCL allows in a group) would wait on itself.
  for (const auto& [a, a_stream] : queued) {
    for (const auto& [b, b_stream] : queued) {
      if (a.comm != b.comm && caffe_emu::SameCommunicator(*a.comm, *b.comm)) {
        Complain("ncclGroupEnd", "one thread drives ranks " + std::to_string(a.comm->rank) +
                                     " and " + std::to_string(b.comm->rank) +
                                     " of one communicator; the emulator cannot run that");
        return ncclInvalidUsage;
      }
    }
  }
  for (const auto& [c, stream] : queued) {
    caffe_emu::OnCommDevice device(*c.comm);
    caffe_emu::Drain(stream);
  }
  for (const auto& [c, stream] : queued) {
    caffe_emu::OnCommDevice device(*c.comm);
    const ncclResult_t status = caffe_emu::RunAndQueueResult(c, stream);
    if (status != ncclSuccess) return status;
  }
  return ncclSuccess;
}
