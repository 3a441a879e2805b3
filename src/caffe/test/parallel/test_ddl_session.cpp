// DdlSession: joins the job (size, rank, hosts, node-local rank, topology), runs jobs on the
// communication thread, reports a -mode that does not match the number of processes on every
// learner, and ends cleanly with Finish (or its destructor) on every learner together.
#include <string>
#include <vector>

#include "caffe/parallel/ddl_session.hpp"
#include "caffe/parallel/mpi_util.hpp"
#include "caffe/test/mpi_test_main.hpp"

namespace caffe {

class DdlSessionTest : public MpiTest {};

TEST_F(DdlSessionTest, JoinsTheJob) {
  DdlSession session(ParseDdlOptions("-mode r"));
  EXPECT_EQ(session.rank(), WorldRank());
  EXPECT_EQ(session.size(), WorldSize());
  EXPECT_EQ(session.topology().to_string(), std::to_string(WorldSize()) + "x1x1");
  ASSERT_EQ(static_cast<int>(session.hosts().size()), WorldSize());
  EXPECT_EQ(session.host(), HostName());
  // mpirun starts every process of these tests on this machine.
  EXPECT_EQ(session.local_size(), WorldSize());
  EXPECT_EQ(session.local_rank(), WorldRank());
  EXPECT_TRUE(DdlSession::MpiRunning());
  session.Finish();
  session.Finish();  // a second time does nothing
  EXPECT_TRUE(DdlSession::MpiRunning()) << "MPI was started by the test, not the session";
}

TEST_F(DdlSessionTest, RunsJobsOnTheCommunicationThread) {
  DdlSession session(ParseDdlOptions("-mode m"));
  int value = WorldRank() + 1;
  session.Run([&] {
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_SUM, session.control()));
  });
  EXPECT_EQ(value, WorldSize() * (WorldSize() + 1) / 2);
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) session.Submit([&order, i] { order.push_back(i); });
  session.WaitAll();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  session.CheckHealth();  // nobody failed
}

TEST_F(DdlSessionTest, AMismatchedModeIsTheInvalidDimErrorOnEveryLearner) {
  const std::string mode = "-mode b:" + std::to_string(WorldSize() + 1) + "x1";
  try {
    DdlSession session(ParseDdlOptions(mode));
    FAIL() << mode << " accepted for " << WorldSize() << " processes";
  } catch (const Error& error) {
    const std::string expected = "invalid dim size=" + std::to_string(WorldSize()) +
                                 " usr_size=" + std::to_string(WorldSize() + 1) +
                                 " dim[0]=" + std::to_string(WorldSize() + 1) +
                                 " dim[1]=1 dim[2]=1";
    EXPECT_EQ(std::string(error.what()).rfind(expected, 0), 0u) << error.what();
  }
}

TEST_F(DdlSessionTest, TheDestructorEndsTheJobWhenNothingFailed) {
  { DdlSession session(ParseDdlOptions("-mode c")); }
  { DdlSession session(ParseDdlOptions("-mode c")); }  // a fresh session afterwards works
  SUCCEED();
}

}  // namespace caffe
