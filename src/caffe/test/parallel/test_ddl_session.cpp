// DdlSession: joins the job (size, rank, hosts, node-local rank, topology), runs jobs on the
// communication thread, reports a -mode that does not match the number of processes on every
// learner, and ends cleanly with Finish (or its destructor) on every learner together. Its
// collectives on host arrays (pycaffe's caffe.ddl): broadcast from any root, the sum by the
// mode's allreduce, an allgather of one value; communicating after Finish is an error.
#include <algorithm>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/parallel/ddl_session.hpp"
#include "caffe/parallel/mpi_util.hpp"
#include "caffe/test/mpi_test_main.hpp"

namespace caffe {

class DdlSessionTest : public MpiTest {};

template <typename Dtype>
class DdlSessionArrayTest : public MpiTest {};
TYPED_TEST_SUITE(DdlSessionArrayTest, MpiTestDtypes);

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

TEST_F(DdlSessionTest, JoinsAsSolverOfTheJob) {
  const int log_level = FLAGS_minloglevel;
  DdlSession session(ParseDdlOptions("-mode r"));
  session.JoinAsSolver();
  EXPECT_EQ(Caffe::solver_count(), WorldSize());
  EXPECT_EQ(Caffe::solver_rank(), WorldRank());
  EXPECT_TRUE(Caffe::multiprocess());
  // Rank 0 logs; the others warn only (-dbg_level 0).
  EXPECT_EQ(FLAGS_minloglevel, WorldRank() == 0 ? log_level : std::max(log_level, 1));
  Caffe::set_solver_count(1);
  Caffe::set_solver_rank(0);
  Caffe::set_multiprocess(false);
  FLAGS_minloglevel = log_level;
}

#ifdef CPU_ONLY
TEST_F(DdlSessionTest, AGpuLearnerInACpuBuildIsAnError) {
  DdlSession session(ParseDdlOptions("-mode r"));
  try {
    session.ChooseGpu(0);
    FAIL() << "ChooseGpu(0) returned in a CPU_ONLY build";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("has no GPU support"), std::string::npos)
        << error.what();
  }
}
#endif

TEST_F(DdlSessionTest, GathersOneValueFromEveryLearner) {
  DdlSession session(ParseDdlOptions("-mode r"));
  const std::vector<int64_t> values = session.Allgather(10 * WorldRank() + 3);
  ASSERT_EQ(static_cast<int>(values.size()), WorldSize());
  for (int rank = 0; rank < WorldSize(); ++rank) EXPECT_EQ(values[rank], 10 * rank + 3);
}

TEST_F(DdlSessionTest, CommunicatingAfterFinishIsAnError) {
  DdlSession session(ParseDdlOptions("-mode r"));
  session.Finish();
  float value = 1;
  EXPECT_THROW(session.Broadcast(&value, 1, 0), Error);
  EXPECT_THROW(session.Allgather(1), Error);
  session.WaitAll();  // nothing to wait for
}

TYPED_TEST(DdlSessionArrayTest, BroadcastsFromAnyLearner) {
  DdlSession session(ParseDdlOptions("-mode r"));
  for (int root = 0; root < WorldSize(); ++root) {
    for (const size_t count : {size_t(0), size_t(1), size_t(1000)}) {
      std::vector<TypeParam> values(count);
      for (size_t i = 0; i < count; ++i) values[i] = TypeParam(WorldRank() * 1000 + i) / 4;
      session.Broadcast(values.data(), count, root);
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(values[i], TypeParam(root * 1000 + i) / 4) << "root " << root << ", " << i;
      }
    }
  }
  TypeParam value = 0;
  EXPECT_THROW(session.Broadcast(&value, 1, WorldSize()), Error);
  EXPECT_THROW(session.Broadcast(&value, 1, -1), Error);
}

TYPED_TEST(DdlSessionArrayTest, SumsArraysWithTheModesAllreduce) {
  // Exact sums: small integers. Mode p times its candidates at the first call.
  for (const char* mode : {"-mode r", "-mode c", "-mode p -bucket_kb 1"}) {
    SCOPED_TRACE(mode);
    DdlSession session(ParseDdlOptions(mode));
    for (const size_t count : {size_t(0), size_t(1), size_t(7), size_t(4097)}) {
      std::vector<TypeParam> values(count);
      for (size_t i = 0; i < count; ++i) values[i] = TypeParam((WorldRank() + 1) * (i % 13));
      session.Allreduce(values.data(), count);
      const int ranks_sum = WorldSize() * (WorldSize() + 1) / 2;
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(values[i], TypeParam(ranks_sum * (i % 13))) << "count " << count << ", " << i;
      }
    }
  }
}

}  // namespace caffe
