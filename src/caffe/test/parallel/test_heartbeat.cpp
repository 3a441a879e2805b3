// The heartbeat: while every learner beats nobody is declared failed, even when one is busy for
// longer than the timeout (the heartbeat has its own thread); a learner that falls silent is
// named, with its host and pid, by its right neighbour, and by no one else.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "caffe/parallel/heartbeat.hpp"
#include "caffe/parallel/mpi_util.hpp"
#include "caffe/test/mpi_test_main.hpp"

namespace caffe {

namespace {

// Where each learner runs, as DdlSession describes it.
std::vector<std::string> Places() {
  std::vector<std::string> places;
  for (int rank = 0; rank < WorldSize(); ++rank) {
    places.push_back("host " + HostName() + ", pid " + std::to_string(1000 + rank));
  }
  return places;
}

Heartbeat::Settings FastSettings() {
  Heartbeat::Settings settings;
  settings.period_s = 0.05;
  settings.timeout_s = 1;
  settings.abort_grace_s = 0;  // a test process must not be aborted
  return settings;
}

}  // namespace

class HeartbeatTest : public MpiTest {};

TEST_F(HeartbeatTest, NobodyFailsWhileEveryoneBeatsEvenWhenBusy) {
  Heartbeat heartbeat(MPI_COMM_WORLD, Places(), FastSettings());
  // The training thread of rank 0 is busy for longer than the timeout.
  if (WorldRank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1600));
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(heartbeat.failed()) << heartbeat.failure();
  EXPECT_EQ(heartbeat.failure(), "");
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_F(HeartbeatTest, ASilentLearnerIsNamedByItsRightNeighbourOnly) {
  Heartbeat heartbeat(MPI_COMM_WORLD, Places(), FastSettings());
  if (WorldRank() == 1) heartbeat.Pause();
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  MPI_Barrier(MPI_COMM_WORLD);
  const int noticing = 2 % WorldSize();
  if (WorldRank() == noticing) {
    EXPECT_TRUE(heartbeat.failed());
    const std::string failure = heartbeat.failure();
    EXPECT_NE(failure.find("learner 1 (host " + HostName() + ", pid 1001)"), std::string::npos)
        << failure;
    EXPECT_NE(failure.find("died or hangs"), std::string::npos) << failure;
    EXPECT_NE(failure.find("noticed by learner " + std::to_string(noticing)), std::string::npos)
        << failure;
  } else {
    EXPECT_FALSE(heartbeat.failed()) << heartbeat.failure();
  }
  heartbeat.Resume();
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace caffe
