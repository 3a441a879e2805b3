// The LMS memory manager over the fake device: device copies behind SyncedMemory, eviction of the
// least recently used managed block that no running layer holds, dirty tracking (clean copies
// are dropped, never copied home), -lms_frac dormancy, out-of-memory errors, and randomized
// sequences of host and device reads and writes that must never lose or corrupt a value.
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "caffe/lms/memory_manager.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/test/timeline_test_util.hpp"
#include "caffe/timeline/timeline.hpp"

namespace caffe {
namespace lms {

namespace {

// Installs a manager over a fake device of `capacity` bytes for the test's duration.
class ManagerTest : public ::testing::Test {
 protected:
  // `deferred`: copies run only once something waits for them (FakeDevice), so a missing wait
  // shows as a wrong value.
  void Install(size_t capacity, int64_t threshold_kb = 0, double frac = 0.0,
               bool deferred = false) {
    Options options;
    options.threshold_kb = threshold_kb;
    options.frac = frac;
    auto device = std::make_unique<FakeDevice>(capacity, deferred);
    device_ = device.get();
    manager_ = std::make_shared<MemoryManager>(std::move(device), options);
    MemoryManager::Install(manager_);
  }
  void TearDown() override { MemoryManager::Install(nullptr); }

  // One device read of `memory` as a layer's step would make it (held only during the step).
  const void* Use(SyncedMemory* memory) {
    manager_->BeginStep("test step");
    const void* data = memory->gpu_data();
    manager_->EndStep();
    return data;
  }
  void* UseMutable(SyncedMemory* memory) {
    manager_->BeginStep("test step");
    void* data = memory->mutable_gpu_data();
    manager_->EndStep();
    return data;
  }

  size_t CopiesToHost() const {
    size_t count = 0;
    for (const FakeDevice::Copy& copy : device_->copies()) count += copy.to_device ? 0 : 1;
    return count;
  }

  FakeDevice* device_ = nullptr;
  std::shared_ptr<MemoryManager> manager_;
};

void Fill(SyncedMemory* memory, unsigned char value) {
  std::memset(memory->mutable_cpu_data(), value, memory->size());
}

bool AllBytesAre(const void* data, size_t bytes, unsigned char value) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    if (p[i] != value) return false;
  }
  return true;
}

}  // namespace

TEST_F(ManagerTest, WithoutAManagerNothingIsAttached) {
  SyncedMemory memory(64);
  Fill(&memory, 7);
  EXPECT_EQ(BlockOf(memory), nullptr);
  EXPECT_EQ(MemoryManager::Current(), nullptr);
}

TEST_F(ManagerTest, DeviceCopyHoldsTheHostValuesAndDeviceWritesComeHome) {
  Install(1 << 20);
  SyncedMemory memory(1000);
  Fill(&memory, 3);
  const void* on_device = memory.gpu_data();
  ASSERT_NE(BlockOf(memory), nullptr);
  EXPECT_EQ(memory.head(), SyncedMemory::SYNCED);
  EXPECT_TRUE(AllBytesAre(on_device, 1000, 3));
  std::memset(memory.mutable_gpu_data(), 9, 1000);
  EXPECT_EQ(memory.head(), SyncedMemory::HEAD_AT_GPU);
  EXPECT_TRUE(AllBytesAre(memory.cpu_data(), 1000, 9));
  EXPECT_EQ(memory.head(), SyncedMemory::SYNCED);
  EXPECT_EQ(manager_->stats().bytes_in, 1000u);
  EXPECT_EQ(manager_->stats().bytes_out, 1000u);
}

TEST_F(ManagerTest, FirstDeviceAccessZeroFills) {
  Install(1 << 20);
  SyncedMemory memory(256);
  EXPECT_TRUE(AllBytesAre(memory.gpu_data(), 256, 0));
  EXPECT_EQ(memory.head(), SyncedMemory::HEAD_AT_GPU);
  EXPECT_TRUE(AllBytesAre(memory.cpu_data(), 256, 0));
}

TEST_F(ManagerTest, CleanBlocksAreDroppedWithoutACopyHome) {
  Install(2048);  // room for one 1536-byte block (size class 1536)
  SyncedMemory a(1500), b(1500);
  Fill(&a, 1);
  Fill(&b, 2);
  Use(&a);
  Use(&b);  // evicts a, which is clean
  EXPECT_FALSE(BlockOf(a)->resident());
  EXPECT_EQ(a.head(), SyncedMemory::HEAD_AT_CPU);
  EXPECT_EQ(CopiesToHost(), 0u);
  EXPECT_EQ(manager_->stats().clean_drops, 1u);
  EXPECT_EQ(manager_->stats().evictions, 1u);
  EXPECT_TRUE(AllBytesAre(a.cpu_data(), 1500, 1));
}

TEST_F(ManagerTest, DirtyBlocksAreCopiedHomeWhenEvicted) {
  Install(2048);
  SyncedMemory a(1500), b(1500);
  std::memset(UseMutable(&a), 5, 1500);
  Use(&b);
  EXPECT_FALSE(BlockOf(a)->resident());
  EXPECT_EQ(CopiesToHost(), 1u);
  EXPECT_EQ(manager_->stats().bytes_out, 1500u);
  EXPECT_TRUE(AllBytesAre(a.cpu_data(), 1500, 5));
  EXPECT_TRUE(AllBytesAre(a.gpu_data(), 1500, 5));  // and back in on the next device access
}

TEST_F(ManagerTest, EvictsTheLeastRecentlyUsedBlock) {
  Install(3 * 1024);
  SyncedMemory a(1000), b(1000), c(1000), d(1000);
  Use(&a);
  Use(&b);
  Use(&c);
  Use(&a);  // b is now the least recently used
  Use(&d);
  EXPECT_TRUE(BlockOf(a)->resident());
  EXPECT_FALSE(BlockOf(b)->resident());
  EXPECT_TRUE(BlockOf(c)->resident());
  EXPECT_TRUE(BlockOf(d)->resident());
}

TEST_F(ManagerTest, PinnedBlocksAndThoseHandedOutInTheRunningStepStay) {
  Install(3 * 1024);
  SyncedMemory a(1000), b(1000), c(1000), d(1000), e(1000);
  Use(&a);
  Use(&b);
  manager_->Pin(&a);
  manager_->BeginStep("layer 'x' (Test) forward");
  c.gpu_data();
  d.gpu_data();  // a is pinned, c handed out in this step: b goes
  EXPECT_TRUE(BlockOf(a)->resident());
  EXPECT_FALSE(BlockOf(b)->resident());
  try {
    e.gpu_data();  // a pinned, c and d held by the step: nothing can go
    FAIL() << "expected an out-of-memory error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("out of device memory in layer 'x' (Test) forward"), std::string::npos)
        << message;
    EXPECT_NE(message.find("a buffer of 1000 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("budget is 3072 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("3072 in use (3072 held by the running layer, 0 in buffers below the "
                           "-lms threshold, 0 LMS could swap out, 0 in workspaces and scratch "
                           "outside the blobs)"),
              std::string::npos)
        << message;
  }
  manager_->EndStep();
  Use(&e);  // c and d are free to go now
  EXPECT_TRUE(BlockOf(a)->resident());
  manager_->Unpin(&a);
  EXPECT_TRUE(manager_->Release(&a));
}

TEST_F(ManagerTest, ScratchMemoryCountsAgainstTheBudgetAndEvictsToFit) {
  Install(3 * 1024);
  SyncedMemory a(1000), b(1000);
  std::memset(UseMutable(&a), 7, 1000);
  Use(&b);
  // cuDNN's workspace in the running step: a (least recently used, unheld) makes room.
  manager_->BeginStep("layer 'conv1' (Train) forward");
  b.gpu_data();
  void* scratch = manager_->AllocateScratch(2000, "cuDNN's workspace");
  ASSERT_NE(scratch, nullptr);
  EXPECT_FALSE(BlockOf(a)->resident());
  EXPECT_TRUE(BlockOf(b)->resident());
  EXPECT_GE(manager_->allocator().in_use(), 2000u + 1000u);
  try {
    manager_->AllocateScratch(1500, "cuDNN's workspace");  // b is held by the step
    FAIL() << "expected an out-of-memory error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("out of device memory in layer 'conv1' (Train) forward: cuDNN's "
                           "workspace of 1500 bytes does not fit"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("(1024 held by the running layer, 0 in buffers below the -lms "
                           "threshold, 0 LMS could swap out, 2048 in workspaces and scratch "
                           "outside the blobs)"),
              std::string::npos)
        << message;
  }
  manager_->EndStep();
  manager_->FreeScratch(scratch);
  EXPECT_LT(manager_->allocator().in_use(), 2000u);
  EXPECT_TRUE(AllBytesAre(a.gpu_data(), 1000, 7));  // nothing lost by the eviction
}

// Scratch memory the budget could not give even with every unheld block evicted evicts none of
// them (no copies home for nothing): the caller falls back to a leaner algorithm, or gets the
// error, with the buffers still on the device.
TEST_F(ManagerTest, ScratchThatCannotFitEvictsNothing) {
  Install(4 * 1024);
  SyncedMemory a(1000), b(1000), c(1000);
  std::memset(UseMutable(&a), 1, 1000);
  std::memset(UseMutable(&b), 2, 1000);
  Use(&c);
  manager_->BeginStep("layer 'conv1' (Train) forward");
  c.gpu_data();  // held by the step (1024 bytes); a and b (2048) could go
  EXPECT_EQ(manager_->TryAllocateScratch(3500), nullptr);  // 1024 + size class 3584 > 4096
  EXPECT_THROW(manager_->AllocateScratch(3500, "cuDNN's workspace"), Error);
  EXPECT_TRUE(BlockOf(a)->resident());
  EXPECT_TRUE(BlockOf(b)->resident());
  EXPECT_EQ(manager_->stats().evictions, 0u);
  EXPECT_EQ(CopiesToHost(), 0u);
  // What fits once a and b are gone still evicts them.
  void* scratch = manager_->TryAllocateScratch(3000);
  EXPECT_NE(scratch, nullptr);
  EXPECT_FALSE(BlockOf(a)->resident());
  EXPECT_FALSE(BlockOf(b)->resident());
  EXPECT_EQ(CopiesToHost(), 2u);
  manager_->EndStep();
  manager_->FreeScratch(scratch);
  EXPECT_TRUE(AllBytesAre(a.gpu_data(), 1000, 1));
  EXPECT_TRUE(AllBytesAre(b.gpu_data(), 1000, 2));
}

TEST_F(ManagerTest, OutsideStepsTheLastBuffersHandedOutStay) {
  Install(4 * 1024);
  SyncedMemory a(1000), b(1000), c(1000), d(1000), e(1000);
  Fill(&a, 1);
  a.gpu_data();
  b.gpu_data();
  c.gpu_data();
  d.gpu_data();  // fills the device; a is older than the last three handed out
  e.gpu_data();
  EXPECT_FALSE(BlockOf(a)->resident());
  EXPECT_TRUE(BlockOf(b)->resident());
  const void* e_on_device = e.gpu_data();
  SyncedMemory f(1000);
  f.gpu_data();  // b goes: the least recently used of those not among the last three
  EXPECT_FALSE(BlockOf(b)->resident());
  EXPECT_EQ(e.gpu_data(), e_on_device);
  EXPECT_TRUE(AllBytesAre(a.gpu_data(), 1000, 1));
}

// Buffers LMS could swap out that would not make room stay, and the error counts them.
TEST_F(ManagerTest, AnAllocationThatCannotFitEvictsNothingAndSaysWhereTheMemoryIs) {
  Install(3 * 1024);
  SyncedMemory a(1000), b(1000);
  Use(&a);
  manager_->BeginStep("layer 'conv1' (Train) forward");
  b.gpu_data();  // held by the step
  try {
    manager_->AllocateScratch(2500, "cuDNN's workspace");
    FAIL() << "expected an out-of-memory error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what())
                  .find("2048 in use (1024 held by the running layer, 0 in "
                        "buffers below the -lms threshold, 1024 LMS could "
                        "swap out, 0 in workspaces"),
              std::string::npos)
        << error.what();
  }
  manager_->EndStep();
  EXPECT_TRUE(BlockOf(a)->resident());
}

TEST_F(ManagerTest, BuffersBelowTheThresholdStayAndLmsOffSaysSo) {
  Install(2048, /*threshold_kb=*/-1);
  SyncedMemory a(1500), b(1500);
  Use(&a);
  EXPECT_FALSE(BlockOf(a)->managed());
  EXPECT_FALSE(manager_->Release(&a));
  try {
    b.gpu_data();
    FAIL() << "expected an out-of-memory error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("-lms keeps large buffers in host memory"),
              std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what())
                  .find("1536 in use (0 held by the running layer, 1536 in "
                        "other buffers, 0 in workspaces and scratch "
                        "outside the blobs)"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(ManagerTest, ThresholdSelectsWhichBuffersAreManaged) {
  Install(1 << 20, /*threshold_kb=*/1);
  SyncedMemory small(1023), large(1024);
  small.gpu_data();
  large.gpu_data();
  EXPECT_FALSE(BlockOf(small)->managed());
  EXPECT_TRUE(BlockOf(large)->managed());
  EXPECT_EQ(manager_->num_managed_blocks(), 1u);
  EXPECT_EQ(manager_->managed_bytes(), 1024u);
}

TEST_F(ManagerTest, LmsFracKeepsReleasesDormantUntilTheBudgetFillsUp) {
  Install(10 * 1024, /*threshold_kb=*/0, /*frac=*/0.5);
  SyncedMemory a(1024), b(3 * 1024), c(2 * 1024);
  a.gpu_data();  // 10% of the budget in use
  EXPECT_FALSE(manager_->awake());
  EXPECT_FALSE(manager_->Release(&a));
  EXPECT_TRUE(BlockOf(a)->resident());
  b.gpu_data();
  c.gpu_data();  // 60%
  EXPECT_TRUE(manager_->awake());
  EXPECT_TRUE(manager_->Release(&a));
  EXPECT_FALSE(BlockOf(a)->resident());
}

TEST_F(ManagerTest, PrefetchCopiesInOnlyWhatFitsWithoutEvicting) {
  Install(2048);
  manager_->set_record_prefetches(true);
  SyncedMemory a(1000), b(1000), c(1000);
  Fill(&a, 1);
  Fill(&b, 2);
  Fill(&c, 3);
  EXPECT_TRUE(manager_->Prefetch(&a));
  EXPECT_FALSE(manager_->Prefetch(&a));  // already resident
  EXPECT_TRUE(manager_->Prefetch(&b));
  EXPECT_FALSE(manager_->Prefetch(&c));  // would need an eviction
  EXPECT_EQ(manager_->prefetch_log(), (std::vector<const SyncedMemory*>{&a, &b}));
  EXPECT_EQ(manager_->stats().prefetches, 2u);
  EXPECT_TRUE(AllBytesAre(Use(&b), 1000, 2));
  EXPECT_EQ(manager_->stats().swaps_in, 2u);  // the device access found b already there
}

TEST_F(ManagerTest, SettingsAndStatsLinesNameTheNumbers) {
  Install(4096, 8192, 0.9);
  EXPECT_NE(manager_->SettingsLine().find("[LMS] threshold 8192 KB"), std::string::npos)
      << manager_->SettingsLine();
  EXPECT_NE(manager_->SettingsLine().find("lms_frac 0.9"), std::string::npos);
  EXPECT_NE(manager_->SettingsLine().find("budget 4096 bytes"), std::string::npos);
  EXPECT_NE(manager_->StatsLine().find("[LMS] swapped in 0 bytes"), std::string::npos)
      << manager_->StatsLine();
}

// A swap-out only issues its copy home: the host goes on, and its memory is free at once.
// What depends on the copy waits for it: host reads of the home, and compute on the memory
// when it is handed out again (here a zero fill that would otherwise overwrite it first).
TEST_F(ManagerTest, SwapOutsRunBehindTheHostAndWhatNeedsThemWaits) {
  Install(2048, /*threshold_kb=*/0, /*frac=*/0.0, /*deferred=*/true);
  SyncedMemory a(1500), b(1500);
  void* on_device = UseMutable(&a);
  std::memset(on_device, 5, 1500);
  EXPECT_TRUE(manager_->Release(&a));
  EXPECT_EQ(device_->pending_copies(), 1u) << "the copy home should not have run yet";
  EXPECT_EQ(a.head(), SyncedMemory::HEAD_AT_CPU);
  EXPECT_EQ(UseMutable(&b), on_device) << "b should get a's memory back from the allocator";
  EXPECT_EQ(device_->pending_copies(), 0u);
  EXPECT_TRUE(AllBytesAre(b.cpu_data(), 1500, 0));
  EXPECT_TRUE(AllBytesAre(a.cpu_data(), 1500, 5));

  std::memset(b.mutable_cpu_data(), 6, 1500);
  std::memset(UseMutable(&b), 8, 1500);
  EXPECT_TRUE(manager_->Release(&b));
  EXPECT_EQ(device_->pending_copies(), 1u);
  EXPECT_TRUE(AllBytesAre(b.cpu_data(), 1500, 8)) << "the host read must wait for the copy";
  EXPECT_EQ(device_->pending_copies(), 0u);
}

// A prefetch runs behind the host too; the step that uses the buffer sees it copied in.
TEST_F(ManagerTest, ComputeOnAPrefetchedBufferSeesItCopiedIn) {
  Install(4096, /*threshold_kb=*/0, /*frac=*/0.0, /*deferred=*/true);
  SyncedMemory a(1000);
  Fill(&a, 4);
  EXPECT_TRUE(manager_->Prefetch(&a));
  EXPECT_EQ(device_->pending_copies(), 1u);
  EXPECT_TRUE(AllBytesAre(Use(&a), 1000, 4));
  EXPECT_EQ(manager_->stats().swaps_in, 1u);
}

// While the timeline records, every copy is a slice on the device's copy track, its bytes adding up
// to the manager's counts, and a wait for a copy is a stall slice named by the step that waited.
TEST_F(ManagerTest, TheTimelineGetsEveryCopyAndEachStallNamedByItsStep) {
  Install(2048, /*threshold_kb=*/0, /*frac=*/0.0, /*deferred=*/true);
  ScopedTempDir dir(MakeTempDir("lms_timeline"));
  timeline::Options options;
  options.path = dir.path() + "/trace.json";
  timeline::Start(options);
  timeline::SetIteration(0);
  {
    SyncedMemory a(1500), b(1000);
    Fill(&a, 3);
    std::memset(UseMutable(&a), 5, 1500);  // in: a
    EXPECT_TRUE(manager_->Release(&a));    // out: a, deferred
    manager_->BeginStep("layer 'reader' forward");
    EXPECT_TRUE(AllBytesAre(a.cpu_data(), 1500, 5));  // waits for the copy home: a stall
    manager_->EndStep();
    Fill(&b, 2);
    Use(&b);  // in: b
    device_->WaitForCopies();
    manager_->BeginStep("after");  // takes the finished copies
    manager_->EndStep();
  }
  timeline::Finish();
  const std::string trace = ReadWholeFile(options.path);
  const double in = SumOfSliceArg(trace, "swap in", "bytes");
  const double out = SumOfSliceArg(trace, "swap out", "bytes");
  EXPECT_EQ(in, static_cast<double>(manager_->stats().bytes_in)) << trace;
  EXPECT_EQ(out, static_cast<double>(manager_->stats().bytes_out)) << trace;
  EXPECT_EQ(in, 2500);
  EXPECT_EQ(out, 1500);
  EXPECT_NE(trace.find("\"name\":\"LMS copies, " + device_->name() + "\""), std::string::npos)
      << trace;
  EXPECT_NE(trace.find("\"name\":\"LMS stall, layer 'reader' forward\""), std::string::npos)
      << trace;
  EXPECT_NE(trace.find("\"device memory in use (MB)\""), std::string::npos) << trace;
}

// Random host and device reads and writes, releases, prefetches and steps over more buffers
// than fit: every read sees the last value written, device copies go home only when dirty, and
// the device never holds more than its capacity. With copies run as late as possible, too.
TEST_F(ManagerTest, RandomizedAccessNeverLosesOrCorruptsData) {
  for (unsigned seed = 1; seed <= 16; ++seed) {
    // Six blocks of the largest size class fit: three held by a step (at most three device
    // accesses per step) or the last three handed out outside steps, and room to evict into.
    Install(6 * 1536, /*threshold_kb=*/0, /*frac=*/seed % 2 == 0 ? 0.0 : 0.6,
            /*deferred=*/seed > 8);
    std::mt19937 random(seed);
    constexpr int kBuffers = 20;
    std::vector<std::unique_ptr<SyncedMemory>> buffers;
    std::vector<std::vector<unsigned char>> expected;
    std::vector<bool> dirty(kBuffers, false);  // the device copy holds writes home lacks
    for (int i = 0; i < kBuffers; ++i) {
      const size_t bytes = 100 + random() % 1400;
      buffers.emplace_back(new SyncedMemory(bytes));
      expected.emplace_back(bytes, 0);
    }
    bool in_step = false;
    int step_accesses = 0;
    for (int op = 0; op < 3000; ++op) {
      const int i = random() % kBuffers;
      SyncedMemory* memory = buffers[i].get();
      std::vector<unsigned char>& values = expected[i];
      // Which buffer each resident device address belongs to, before the operation.
      std::map<const void*, int> owner;
      for (int j = 0; j < kBuffers; ++j) {
        const Block* block = BlockOf(*buffers[j]);
        if (block != nullptr && block->resident()) owner[block->device_ptr()] = j;
      }
      device_->clear_copies();
      // A first device access zero-fills on the device: home has no copy until it is copied.
      const bool uninitialized = memory->head() == SyncedMemory::UNINITIALIZED;
      const size_t position = random() % values.size();
      const unsigned char value = static_cast<unsigned char>(random());
      switch (random() % 8) {
        case 0:  // host read
          ASSERT_EQ(std::memcmp(memory->cpu_data(), values.data(), values.size()), 0)
              << "seed " << seed << " op " << op;
          break;
        case 1:  // host write
          static_cast<unsigned char*>(memory->mutable_cpu_data())[position] = value;
          values[position] = value;
          break;
        case 2:  // device read
        case 3:
          ASSERT_EQ(std::memcmp(memory->gpu_data(), values.data(), values.size()), 0)
              << "seed " << seed << " op " << op;
          if (uninitialized) dirty[i] = true;
          break;
        case 4:  // device write
          static_cast<unsigned char*>(memory->mutable_gpu_data())[position] = value;
          values[position] = value;
          dirty[i] = true;
          break;
        case 5:
          manager_->Release(memory);
          break;
        case 6:
          manager_->Prefetch(memory);
          break;
        case 7:
          if (in_step) {
            manager_->EndStep();
          } else {
            manager_->BeginStep("random step");
            step_accesses = 0;
          }
          in_step = !in_step;
          break;
      }
      // Every copy home was of a dirty buffer; after it, home is current.
      for (const FakeDevice::Copy& copy : device_->copies()) {
        if (copy.to_device) continue;
        ASSERT_EQ(owner.count(copy.device), 1u);
        EXPECT_TRUE(dirty[owner[copy.device]]) << "a clean buffer was copied home, seed " << seed;
        dirty[owner[copy.device]] = false;
      }
      for (int j = 0; j < kBuffers; ++j) {
        if (buffers[j]->head() != SyncedMemory::HEAD_AT_GPU) dirty[j] = false;
      }
      ASSERT_LE(device_->allocated_bytes(), device_->capacity());
      if (in_step && (++step_accesses == 3 || random() % 4 == 0)) {
        manager_->EndStep();
        in_step = false;
      }
    }
    if (in_step) manager_->EndStep();
    for (int i = 0; i < kBuffers; ++i) {
      ASSERT_EQ(std::memcmp(buffers[i]->cpu_data(), expected[i].data(), expected[i].size()), 0)
          << "seed " << seed << " buffer " << i;
    }
    EXPECT_GT(manager_->stats().evictions, 0u) << "the sequence never filled the device";
    EXPECT_GT(manager_->stats().clean_drops, 0u);
    EXPECT_GT(manager_->stats().swaps_out, 0u);
    MemoryManager::Install(nullptr);
  }
}

}  // namespace lms
}  // namespace caffe
