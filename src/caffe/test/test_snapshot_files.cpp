// A run's snapshots on disk: -snapshot latest finds none, one, or skips a newest one that is
// incomplete (its solver state cut short, its weights missing or cut short) for the complete one
// before it; the lock on a prefix names the run holding it and is free again once that process
// is gone however it ended; temporaries of dead processes are removed, a live one's kept.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "caffe/io/io.hpp"
#include "caffe/proto/caffe.pb.h"
#include "caffe/snapshot_files.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

class SnapshotFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("snapshot_files");
    prefix_ = dir_ + "/lenet";
  }

  // A snapshot as the solver writes it: the weights, then the solver state naming them.
  std::string WriteSnapshot(int iter) {
    const std::string stem = prefix_ + "_iter_" + std::to_string(iter);
    NetParameter weights;
    weights.set_name("net");
    BlobProto* blob = weights.add_layer()->add_blobs();
    for (int i = 0; i < 1000; ++i) blob->add_data(i);
    WriteProtoToBinaryFile(weights, stem + ".caffemodel");
    SolverState state;
    state.set_iter(iter);
    state.set_learned_net(stem + ".caffemodel");
    state.set_learners(4);
    for (int i = 0; i < 1000; ++i) state.add_history()->add_data(i);
    WriteProtoToBinaryFile(state, stem + ".solverstate");
    return stem + ".solverstate";
  }

  static void CutInHalf(const std::string& path) {
    std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  }

  std::string dir_, prefix_;
};

TEST_F(SnapshotFilesTest, NoSnapshotYetMeansNone) {
  EXPECT_FALSE(LatestCompleteSnapshot(prefix_).has_value());
  WriteWholeFile(dir_ + "/other_iter_5.solverstate", "not ours");
  WriteWholeFile(prefix_ + "_iter_5.caffemodel", "weights without a state");
  EXPECT_FALSE(LatestCompleteSnapshot(prefix_).has_value());
  EXPECT_FALSE(LatestCompleteSnapshot(dir_ + "/missing_folder/lenet").has_value());
}

TEST_F(SnapshotFilesTest, TheNewestOfSeveralIsTaken) {
  WriteSnapshot(500);
  const std::string newest = WriteSnapshot(1000);
  WriteSnapshot(90);
  const auto latest = LatestCompleteSnapshot(prefix_);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->state, newest);
  EXPECT_EQ(latest->iter, 1000);  // by number, not by name (90 > 1000 as text)
  EXPECT_EQ(SnapshotLearners(newest), 4);
}

TEST_F(SnapshotFilesTest, AHalfWrittenNewestGivesWayToTheCompleteOneBefore) {
  const std::string complete = WriteSnapshot(100);
  CutInHalf(WriteSnapshot(200));
  EXPECT_NE(WhySnapshotIsIncomplete(prefix_ + "_iter_200.solverstate"), "");
  ASSERT_TRUE(LatestCompleteSnapshot(prefix_).has_value());
  EXPECT_EQ(LatestCompleteSnapshot(prefix_)->state, complete);
  // Its weights cut short, or gone, make a snapshot as incomplete.
  WriteSnapshot(200);
  CutInHalf(prefix_ + "_iter_200.caffemodel");
  EXPECT_EQ(LatestCompleteSnapshot(prefix_)->state, complete);
  std::filesystem::remove(prefix_ + "_iter_200.caffemodel");
  EXPECT_NE(WhySnapshotIsIncomplete(prefix_ + "_iter_200.solverstate").find("are missing"),
            std::string::npos);
  EXPECT_EQ(LatestCompleteSnapshot(prefix_)->state, complete);
}

TEST_F(SnapshotFilesTest, ASecondLockNamesTheFirstHolder) {
  SnapshotPrefixLock first(prefix_);
  const std::string error = ErrorOf([&] { SnapshotPrefixLock second(prefix_); });
  EXPECT_NE(error.find("snapshot_prefix '" + prefix_ + "' is in use by another training run (pid " +
                       std::to_string(getpid()) + " on host " + HostName() + ", started "),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("lock file " + prefix_ + ".lock"), std::string::npos) << error;
  // Another prefix in the same folder is free.
  SnapshotPrefixLock other(dir_ + "/other");
}

TEST_F(SnapshotFilesTest, TheLockIsFreeOnceItsHolderIsKilled) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t holder = fork();
  if (holder == 0) {
    SnapshotPrefixLock lock(prefix_);
    const char byte = 1;
    if (write(ready[1], &byte, 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  EXPECT_NE(ErrorOf([&] { SnapshotPrefixLock lock(prefix_); }).find(std::to_string(holder)),
            std::string::npos);
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  EXPECT_EQ(ErrorOf([&] { SnapshotPrefixLock lock(prefix_); }), "");
  close(ready[0]);
  close(ready[1]);
}

TEST_F(SnapshotFilesTest, TemporariesOfDeadProcessesAreRemoved) {
  // A pid that no longer runs: a child that has exited and been reaped.
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  const std::string stale = prefix_ + "_iter_300.caffemodel.tmp." + std::to_string(gone);
  const std::string live = prefix_ + "_iter_300.solverstate.tmp." + std::to_string(getpid());
  const std::string others = dir_ + "/other_iter_300.caffemodel.tmp." + std::to_string(gone);
  for (const std::string& path : {stale, live, others}) WriteWholeFile(path, "half");
  const std::vector<std::string> removed = RemoveStaleSnapshotTemporaries(prefix_);
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0], stale);
  EXPECT_FALSE(FileExists(stale));
  EXPECT_TRUE(FileExists(live));
  EXPECT_TRUE(FileExists(others));
}

}  // namespace caffe
